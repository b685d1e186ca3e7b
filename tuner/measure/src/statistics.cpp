#include "cutune/measure/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace cutune::measure {

namespace {

// Above this the exact sum is replaced by the normal approximation; both are cheap, the
// limit only keeps the exact sum's terms far from underflow (2^-n at n = 1000 is 1e-301,
// which the log-space terms never form anyway).
constexpr std::size_t exact_binomial_limit = 1000;

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument("median confidence interval: confidence must be in (0, 1)");
}

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Bisection on the CDF: 200 halvings of [-40, 40] reach the resolution of a double,
  // and this runs once per interval, not per sample.
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MedianRanks median_ci_ranks(std::size_t n, double confidence) {
  if (n == 0) throw std::invalid_argument("median_ci_ranks: no samples");
  check_confidence(confidence);
  const double alpha = 1.0 - confidence;
  const double nd = static_cast<double>(n);
  // k = l - 1: the number of order statistics cut from each end. found = some k >= 0 works.
  bool found = false;
  std::size_t k = 0;
  double tail = 0;  // P(B <= k), B ~ Binomial(n, 1/2)
  if (n <= exact_binomial_limit) {
    const double log_norm = std::lgamma(nd + 1.0) - nd * std::log(2.0);
    double cdf = 0;
    for (std::size_t i = 0; i < n / 2; ++i) {
      const double id = static_cast<double>(i);
      cdf += std::exp(log_norm - std::lgamma(id + 1.0) - std::lgamma(nd - id + 1.0));
      // Binomial(n, 1/2) tails are dyadic rationals, never exactly 1 - confidence for the
      // usual levels; the relative slack only absorbs rounding in the sum.
      if (2.0 * cdf > alpha * (1.0 + 1e-12)) break;
      found = true;
      k = i;
      tail = cdf;
    }
  } else {
    const double z = normal_quantile(1.0 - alpha / 2.0);
    const double kd = std::floor(nd / 2.0 - 0.5 - z * std::sqrt(nd) / 2.0);
    if (kd >= 0.0) {
      found = true;
      k = static_cast<std::size_t>(kd);
      tail = normal_cdf((static_cast<double>(k) + 0.5 - nd / 2.0) / (std::sqrt(nd) / 2.0));
    }
  }
  MedianRanks r;
  if (found) {
    r.lower = k + 1;
    r.upper = n - k;
    r.coverage = 1.0 - 2.0 * tail;
  } else {
    // Too few samples for the requested confidence: the widest interval, honestly labelled.
    r.lower = 1;
    r.upper = n;
    r.coverage = 1.0 - std::ldexp(1.0, 1 - static_cast<int>(std::min<std::size_t>(n, 1100)));
  }
  return r;
}

double sorted_median(const std::vector<double>& s) {
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

Interval median_ci(const std::vector<double>& sorted, double confidence) {
  if (sorted.empty()) throw std::invalid_argument("median_ci: no samples");
  const MedianRanks r = median_ci_ranks(sorted.size(), confidence);
  return Interval{sorted[r.lower - 1], sorted[r.upper - 1], r.coverage};
}

Summary summarize(std::vector<double> s) { return summarize(std::move(s), default_confidence); }

Summary summarize(std::vector<double> s, double confidence) {
  if (s.empty()) throw std::invalid_argument("summarize: no samples");
  check_confidence(confidence);
  std::sort(s.begin(), s.end());
  Summary r;
  r.count = s.size();
  const std::size_t n = s.size();
  r.median = sorted_median(s);
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  r.min = s.front();
  r.max = s.back();
  double ss = 0;
  for (double x : s) ss += (x - r.mean) * (x - r.mean);
  r.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  r.rel_stddev = r.mean != 0.0 ? r.stddev / r.mean : 0.0;
  const Interval ci = median_ci(s, confidence);
  r.ci_low = ci.low;
  r.ci_high = ci.high;
  r.ci_coverage = ci.coverage;
  r.rel_ci_half_width = r.median != 0.0 ? (ci.high - ci.low) / (2.0 * r.median) : 0.0;
  return r;
}

bool intervals_separate(const Summary& a, const Summary& b) {
  return a.ci_high < b.ci_low || b.ci_high < a.ci_low;
}

}  // namespace cutune::measure
