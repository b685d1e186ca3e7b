#include "cutune/measure/finalists.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace cutune::measure {

Verdict declare_winner(const std::vector<Summary>& f, std::optional<std::size_t> default_index) {
  if (f.empty()) throw std::invalid_argument("declare_winner: no finalists");
  for (const Summary& s : f)
    if (s.count == 0) throw std::invalid_argument("declare_winner: a finalist has no samples");
  if (default_index && *default_index >= f.size())
    throw std::invalid_argument("declare_winner: default_index out of range");

  Verdict v;
  v.ranking.resize(f.size());
  std::iota(v.ranking.begin(), v.ranking.end(), std::size_t{0});
  std::stable_sort(v.ranking.begin(), v.ranking.end(),
                   [&](std::size_t a, std::size_t b) { return f[a].median < f[b].median; });
  v.winner = v.ranking.front();
  if (f.size() > 1) v.runner_up = v.ranking[1];

  const Summary& w = f[v.winner];
  for (std::size_t i : v.ranking)
    if (i == v.winner || !intervals_separate(w, f[i])) v.tied.push_back(i);
  v.separated = v.tied.size() == 1;

  v.default_index = default_index;
  if (default_index && *default_index != v.winner) {
    const Summary& d = f[*default_index];
    v.beats_default = w.median < d.median && intervals_separate(w, d);
    if (w.median > 0) v.speedup_over_default = d.median / w.median;
  }
  return v;
}

}  // namespace cutune::measure
