// pattern_search: Hooke and Jeeves' pattern search on the index space, always from the best
// result told so far (whoever proposed it). When the best has changed since the last move and
// lies near the best that move was made from (at most kPatternReach index steps along every
// parameter), the step between them is taken again from the new best (the pattern move: a step that paid is repeated, and one that pays again
// chains along the slope, every parameter moving at once); otherwise, and once that
// extrapolation has been seen, an exploratory move: the best's unseen adjacent neighbours,
// then its unseen Hamming neighbours nearest first. Nothing random while the best has unseen
// neighbours; a best whose whole Hamming neighbourhood is seen leaves the choice to the
// Searcher's fallback (random unseen).
// Why: on Kernel Tuner's reduction example (sum_floats, results/spaces/kt_examples) the time
// falls towards the corner of the three size parameters, and Kernel Tuner's dual_annealing,
// whose COBYLA local search moves every parameter at once along the slope, scored 0.917 where
// cutune's default, whose arms move one parameter at a time or model the whole space, scored
// 0.784. As an arm of bandit_portfolio it is pulled only while its results pay.
// Tried in that arm, not kept (40 runs, batch 8, sum_floats / sepconv / the four large spaces,
// against 0.855 / 0.883 / 0.811 as written): Hooke and Jeeves' growing step (a chained pattern
// move measured from the first best of the chain, so the step doubles) 0.857 / 0.886 / 0.813,
// no difference for the code; once the Hamming neighbourhood is seen, pairs of the six best
// single changes 0.840 / 0.918 / 0.801 (dedispersion_A100 0.866 -> 0.833; on sum_floats the
// pair that leaves the trap at 1.0050 ms pairs block_size_x 512 -> 1024, 1.0053 alone, with
// loop_unroll_factor_0 1 -> 0, 1.0093 alone: not among the six).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

/// A best further than this from the previous best (in index steps along some parameter) came
/// from elsewhere (another arm's jump): the step between them is no slope to follow.
constexpr long kPatternReach = 2;

class PatternSearch final : public Searcher {
 public:
  PatternSearch(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}

 private:
  std::optional<Config> propose() override {
    const Config* best = memory_.best();
    if (!best) return std::nullopt;  // the Searcher's random fallback until something runs
    if (!base_ || *base_ != *best) follow(*best);
    while (!moves_.empty()) {
      Config c = std::move(moves_.back());
      moves_.pop_back();
      if (!memory_.seen(c)) return c;
    }
    return std::nullopt;
  }

  // A new best: the pattern move first (popped first: last in the stack), then the exploratory
  // moves, nearest first.
  void follow(const Config& best) {
    moves_.clear();
    std::vector<Config> hamming = hamming_neighbours(space_, best);
    auto distance = [&](const Config& c) {
      long d = 0;
      for (std::size_t p = 0; p < c.index.size(); ++p) d += std::labs(static_cast<long>(c.index[p]) - best.index[p]);
      return d;
    };
    std::stable_sort(hamming.begin(), hamming.end(),
                     [&](const Config& a, const Config& b) { return distance(a) > distance(b); });
    moves_ = std::move(hamming);
    std::vector<Config> adjacent = adjacent_neighbours(space_, best);
    std::shuffle(adjacent.begin(), adjacent.end(), rng_);  // no parameter always first
    moves_.insert(moves_.end(), adjacent.begin(), adjacent.end());
    if (base_) {
      std::vector<double> x = position_of(best);
      bool near = true, moved = false;
      for (std::size_t p = 0; p < x.size(); ++p) {
        const long step = static_cast<long>(best.index[p]) - static_cast<long>(base_->index[p]);
        near = near && std::labs(step) <= kPatternReach;
        moved = moved || step != 0;
        x[p] += static_cast<double>(step);
      }
      if (near && moved) moves_.push_back(round_to_config(space_, x));
    }
    base_ = best;
  }

  void learn(const Config&, double) override {}  // the best is read from memory
  void restart() override { moves_.clear(); }

  std::optional<Config> base_;  ///< the best the moves were made from
  std::vector<Config> moves_;   ///< a stack: the next move at the back
};

}  // namespace

std::unique_ptr<Strategy> make_pattern_search(const Space& space, const StrategyOptions& options) {
  return std::make_unique<PatternSearch>(space, options.seed);
}

}  // namespace cutune::search
