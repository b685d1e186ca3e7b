// pattern_search: Hooke and Jeeves' pattern search on the index space, always from the best
// result told so far (whoever proposed it).
// - The pattern move: when the best has changed since the last move and lies near the best that
//   move was made from (at most kPatternReach index steps along every parameter), the step
//   between them is taken again from the new best. A step that paid is repeated, and one that
//   pays again chains along the slope, every parameter moving at once.
// - Otherwise, and once that extrapolation has been seen, exploratory moves: the best's unseen
//   adjacent neighbours, then its unseen Hamming neighbours nearest first.
// - Once the best's whole Hamming neighbourhood is seen (a local optimum of single changes), the
//   same sweep around the best result whose neighbourhood was not swept yet (the second best,
//   the third...), up to kSweeps per best; then the Searcher's fallback (random unseen).
// Why: on Kernel Tuner's reduction example (sum_floats, results/spaces/kt_examples) the time
// falls towards the corner of the three size parameters, and Kernel Tuner's dual_annealing,
// whose COBYLA local search moves every parameter at once along the slope, scored 0.917 where
// cutune's default, whose arms move one parameter at a time or model the whole space, scored
// 0.784. As an arm of bandit_portfolio it is pulled only while its results pay.
// Tried in that arm, not kept (40 runs, batch 8, sum_floats / sepconv / the four large spaces,
// against 0.855 / 0.883 / 0.811 for the arm without sweeps): Hooke and Jeeves' growing step (a
// chained pattern move measured from the first best of the chain, so the step doubles) 0.857 /
// 0.886 / 0.813, no difference for the code; once the Hamming neighbourhood is seen, pairs of the
// six best single changes 0.840 / 0.918 / 0.801 (dedispersion_A100 0.866 -> 0.833; on sum_floats
// the pair that leaves the trap at 1.0050 ms pairs block_size_x 512 -> 1024, 1.0053 alone, with
// loop_unroll_factor_0 1 -> 0, 1.0093 alone: not among the six).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

/// Sweeps around the next-best results per best. Measured against no such sweep (40 runs per
/// space, seeds 1..40 batch 8 / 41..80 batch 8 / 1..40 one at a time): sum_floats 0.855 -> 0.862
/// (one at a time 0.859 -> 0.868; its trap at 1.0050 ms has a neighbour at 1.0053, swept as a
/// next-best result, that is one change from the optimum), sepconv 0.883 -> 0.893 (0.909 ->
/// 0.922), the four large spaces 0.811 -> 0.830 / 0.793 -> 0.795 / 0.830 -> 0.826:
/// dedispersion_A100 +0.057 / +0.065 / +0.025, convolution_A100 -0.005 / -0.046 / -0.012.
constexpr std::size_t kSweeps = 4;
/// A best further than this from the previous best (in index steps along some parameter) came
/// from elsewhere (another arm's jump): the step between them is no slope to follow.
constexpr long kPatternReach = 2;

class PatternSearch final : public Searcher {
 public:
  PatternSearch(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}
  // Nothing it does depends on the budget: in place, whatever it is (a short-run portfolio
  // re-plans in place only when every arm does).
  bool learn_budget(std::uint64_t) override { return true; }

 private:
  std::optional<Config> propose() override {
    const Config* best = memory_.best();
    if (!best) return std::nullopt;  // the Searcher's random fallback until something runs
    if (!base_ || *base_ != *best) follow(*best);
    while (true) {
      while (!moves_.empty()) {
        Config c = std::move(moves_.back());
        moves_.pop_back();
        if (!memory_.seen(c)) return c;
      }
      if (sweeps_ >= kSweeps) return std::nullopt;
      std::optional<Config> next;
      double f_next = INFINITY;
      for (const Config& c : memory_.order()) {
        const double f = *memory_.fitness(c);
        if (f < f_next && !swept_.count(c)) f_next = f, next = c;
      }
      if (!next) return std::nullopt;  // every valid result swept so far (later ones will be)
      ++sweeps_;
      swept_.insert(*next);
      neighbourhood(*next);
    }
  }

  // A new best: the pattern move first (popped first: last in the stack), then the exploratory
  // moves, nearest first.
  void follow(const Config& best) {
    moves_.clear();
    sweeps_ = 0;
    swept_.insert(best);
    neighbourhood(best);

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

  void neighbourhood(const Config& best) {
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
  }

  void learn(const Config&, double) override {}  // the best is read from memory
  void restart() override { moves_.clear(); }

  std::optional<Config> base_;  ///< the best the moves were made from
  std::vector<Config> moves_;   ///< a stack: the next move at the back
  std::set<Config> swept_;      ///< the results whose neighbourhood was swept
  std::size_t sweeps_ = 0;      ///< sweeps around next-best results since the best changed
};

}  // namespace

std::unique_ptr<Strategy> make_pattern_search(const Space& space, const StrategyOptions& options) {
  return std::make_unique<PatternSearch>(space, options.seed);
}

}  // namespace cutune::search
