#include "cutune/measure/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace cutune::measure {

Summary summarize(std::vector<double> s) {
  if (s.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(s.begin(), s.end());
  Summary r;
  r.count = s.size();
  const std::size_t n = s.size();
  r.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  r.min = s.front();
  r.max = s.back();
  double ss = 0;
  for (double x : s) ss += (x - r.mean) * (x - r.mean);
  r.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  return r;
}

}  // namespace cutune::measure
