// The turns of a short run of the default (bandit_portfolio with a budget of at most
// search::kBanditBudget): which pulls are the model's and which the local arms', and how the
// model's share follows what its recent results paid. Apart from the portfolio so that the
// rule itself can be tested (test_strategies.cpp) without reading it back from proposals.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <numeric>

namespace cutune::search {

/// A short run's schedule: the model's first kShortRunLead proposals (its initial sample is a
/// fifth of the budget, 5 to 20: all of it below a budget of 40, the first part above), then of every kShortRunCycle pulls the first is the model's and the rest
/// the local arms' (the pattern arm's; with a prior, the bandit's choice between it and the
/// prior's arm). Why: `pattern_search` alone, a local search from the first result, beats
/// `bayes_opt` alone where the window is long enough to walk (200 runs, batch 8: matmul 1024^3
/// 0.528 against 0.344, reduction 2^22 0.605 / 0.296, scan 2^22 0.767 / 0.659, Kernel Tuner's
/// sum_floats on the H200 0.346 / 0.192) and loses where it is a dozen evaluations (reduction on
/// the H200 0.022 / 0.370, scan on the H100 0.218 / 0.617). Measured on the 18 spaces whose
/// budgets are at most kModelLedBudget (400; the 15 small ones, both convolution_correct and the
/// H200's sum_floats; 200 runs, seeds 1..200, batch 8), against 0.256 for the model alone:
/// - after the model's whole initial sample (a fifth of the budget, 5 to 20), the pattern arm in
///   every pull 0.312, in two of three 0.315, one of two 0.302, one of three 0.289, one of four
///   0.280; both arms under UCB1 from the start 0.259 (the pattern arm's first pull is random);
/// - after a lead of 8: the pattern arm in one of two 0.319, two of three 0.336, **three of four
///   0.342**, four of five 0.344, every pull 0.345 (but scan on the H100 / H200 0.567 / 0.463 and
///   sum_floats on the H200 0.348, where three of four keeps 0.608 / 0.502 and 0.410);
/// - two of three after a lead of 5 0.328, of 12 0.324.
/// Three of four after 8, per space: none lower than 0.013 (scan on the H200 0.515 -> 0.502);
/// convolution_correct 0.065 / 0.054 -> 0.289 / 0.308, sum_floats on the H200 0.192 -> 0.410,
/// reduction 2^22 0.296 -> 0.510, nbody 0.087 / 0.087 -> 0.226 / 0.238.
constexpr std::size_t kShortRunLead = 8, kShortRunCycle = 4;
/// While the model's last kRecentRewards results earned more than the pattern arm's last
/// kRecentRewards (their mean reward: each result's quantile among the valid results so far),
/// every other pull is the model's instead of one in kShortRunCycle. Why: on the 8-parameter
/// convolution recorded on an RTX 2080 Ti and on an H200 (budgets 390 and 908, 22% and 29% of
/// the configurations failing) the model alone beat the fixed cycle (0.828 / 0.912 against 0.737 /
/// 0.784), while elsewhere the cycle beat the model. Measured on the 22 recorded spaces whose
/// budgets are at most kBanditBudget (200 runs, seeds 1..200, batch 8; the three longer ones never
/// run the cycle), against the fixed cycle: every other pull the model's while it is ahead
/// (windows of 8) 0.5208 against 0.5167 over all 25 spaces (the convolution_kernel family 0.793 /
/// 0.770: RTX 2080 Ti 0.768 / 0.737, H200 0.844 / 0.784; no family lower by more than 0.006);
/// every pull the model's while it is ahead 0.5210 (the H200's convolution 0.896, but scan 0.611 /
/// 0.623 and convolution_correct 0.277 / 0.289); windows of 6 0.5197 (convolution_correct 0.277); the share following the
/// failure rates instead of the rewards (the model every other pull while the pattern arm's
/// recent results failed more often by 0.25) 0.5171, no change.
constexpr std::size_t kRecentRewards = 8, kModelAheadCycle = 2;
/// Once kStallResults results in a row, or a kStallBudgetShare-th of the budget if that is more,
/// brought no new best, one in kExploreCycle of the local arms' turns is a random configuration
/// not seen yet (the model keeps its turns). Why: on Kernel Tuner's point-in-polygon (H100, budget
/// 268) 29% of the default's runs stayed in a local optimum of single changes at 3.855 ms (the
/// optimum is 3.048 ms, with use_method 1 and a smaller tile), where every further result of the
/// pattern arm still earned a high quantile and the model kept proposing near the best; Kernel
/// Tuner's firefly_algorithm, whose moves change every parameter at once, led the space in both
/// listing orders over 1200 runs (0.324 / 0.280 against the default's 0.251 / 0.190). Random
/// configurations find the other basin (use_method 1 and a tile of 6 to 8 is one configuration in
/// about 90). Measured on the 23 recorded spaces whose budgets are at most kBanditBudget (200
/// runs, seeds 1..200, batch 8) against the committed cells (strategies_200.md, 0.5051 over all 26):
/// - one in three after max(16, budget / 16) (kept): 0.5076; point-in-polygon 0.113 -> 0.210,
///   reversed 0.193 -> 0.230; no family lower by more than 0.005 (scan 2^22 -0.015). On other
///   seeds (1001..1200) the 23 spaces 0.4535 -> 0.4532, point-in-polygon 0.265 -> 0.300, no family
///   lower by more than 0.006 (dedispersion_A4000 -0.007, scan and reduction 2^22 -0.013). With
///   1200 runs point-in-polygon 0.251 -> 0.295, reversed 0.190 -> 0.264 (one at a time 0.291 ->
///   0.352, 0.205 -> 0.283; Kernel Tuner's firefly_algorithm 0.324 and 0.280);
/// - one in two after max(16, budget / 16): 0.5073 (reversed point-in-polygon 0.261; scan -0.008);
///   after max(24, budget / 16): 0.5073; after max(12, budget / 16): 0.5051 (scan 2^22 -0.040);
/// - one in two after 8, without the budget's share: 0.5035 (sum_floats -0.028, scan 2^22
///   -0.057); after 16: 0.5064 (sum_floats -0.021);
/// - every other pull random, the model's turns too, after 8: 0.4949 (the 8-parameter
///   convolutions -0.09 and -0.04, dedispersion_A4000 -0.045); the model every other pull
///   instead of random configurations found the other basin no more often than the default
///   (70% against 71% of 100 runs within 5% of the optimum by 134 evaluations; random configurations
///   every other pull 84%, the kept rule 78%: studies/escape_share.py, results/escape_share/).
/// Every variant but the kept rule came from temporary switches, not committed; the committed
/// rows are results/strategies/strategies_default_explore_200.json and the seeds 1001..1200 pair.
constexpr std::size_t kStallResults = 16, kStallBudgetShare = 16, kExploreCycle = 3;
/// Once a stall has lasted kLongStall times the results that make one, every turn of the local arms
/// is a random unseen configuration (the model keeps its turns) until a new best. Why: on
/// point-in-polygon at 2M points (H100, budget 780, a stall after 48 results) 5 of 100 runs of the
/// rule above still ended in the use_method 0 basin (rank 92 of 5068; 91 configurations, one in 60,
/// are better), found by their 73rd to 140th evaluation: the pattern arm's sweeps around the next-best
/// results (pattern_search.cpp) kept two of every three local turns in that basin for the rest of
/// the window (`tune --simulate`, seeds 1..100). Measured on all 30 recorded spaces
/// (results/strategies/strategies_all_spaces.md; 200 runs, seeds 1..200, batch 8) against the rule above alone
/// (0.5090): after twice the stall (kept) 0.5107; point-in-polygon 2M 0.400 -> 0.464, 20M 0.210 ->
/// 0.225; scan 2^22 -0.016, convolution on the RTX 2080 Ti -0.024 (BAT's on the H200 +0.014); no
/// family lower by more than 0.005. On other seeds (1001..1200; the 27 spaces whose budgets are at
/// most kBanditBudget) 0.4593 -> 0.4632, point-in-polygon 2M +0.089, 20M +0.016, no family lower by
/// more than 0.003 (results/strategies/strategies_default_long_stall_seeds1001_200.json and the rule above
/// alone, ..._before_seeds1001_200.json). Tried and not kept (temporary switches, not committed):
/// - every local turn random from the stall's start: point-in-polygon 0.517 / 0.193 (2M / 20M), but
///   Kernel Tuner's sum_floats on the H100 -0.044, scan 2^22 -0.044, reduction 2^22 -0.034;
/// - every local turn random after 24 results whatever the budget: point-in-polygon 0.606 / 0.238,
///   but sum_floats on the H100 -0.160 (its next-best sweeps find the way out of its trap) and scan
///   2^22 -0.038: 0.5089 over all 30;
/// - after four times the stall: point-in-polygon 0.406 / 0.209; after max(24, the stall) 0.517 /
///   0.238, after max(64, the stall) 0.479 / 0.209 (not run on the other spaces);
/// - instead, at most one or two sweeps around next-best results per best in the pattern arm (four):
///   point-in-polygon 0.463 / 0.210 and 0.440 / 0.210, sum_floats on the H100 -0.060 and 0.000;
/// - the explore turns given to children of two of the 10 or 20 best results (uniform crossover,
///   each parameter mutated with probability 1/10), as a genetic algorithm breeds: 0.369 / 0.182
///   and 0.323 / 0.176 (in a run that is stuck, the best results are all in the basin that holds it).
constexpr std::size_t kLongStall = 2;

class ShortRunSchedule {
 public:
  explicit ShortRunSchedule(std::uint64_t budget = 0) : budget_(budget) {}
  /// The budget, when it is learnt again (a short run stays short).
  void set_budget(std::uint64_t budget) { budget_ = budget; }

  /// A fresh result (not a revisit): whether it is better than every valid result before it.
  void told(bool new_best) { since_best_ = new_best ? 0 : since_best_ + 1; }
  /// Results in a row without a new best that make a stall.
  std::size_t stall_results() const {
    return std::max<std::size_t>(kStallResults, static_cast<std::size_t>(budget_ / kStallBudgetShare));
  }
  bool stalled() const { return since_best_ >= stall_results(); }
  /// Whether this local arms' turn goes to a random unseen configuration instead (call once per
  /// such turn: during a stall, one in kExploreCycle does; once it has lasted kLongStall times its
  /// length, every one).
  bool explores() {
    if (!stalled()) return false;
    if (since_best_ >= kLongStall * stall_results()) return true;
    return explore_turns_++ % kExploreCycle == 0;
  }

  /// Whether the pull after `pulls` earlier ones is the model's.
  bool models_turn(std::size_t pulls) const {
    if (pulls < kShortRunLead) return true;
    return model_ahead() ? pulls % kModelAheadCycle == 0 : (pulls - kShortRunLead) % kShortRunCycle == 0;
  }

  /// A result of a configuration the model proposed, and one the pattern arm proposed: its
  /// reward (the portfolio's, 0..1).
  void model_rewarded(double reward) { keep(model_, reward); }
  void pattern_rewarded(double reward) { keep(pattern_, reward); }

  /// Whether the model's last kRecentRewards rewards sum to more than the pattern arm's (sums
  /// of equally many: the same order as the means); false until both have that many.
  bool model_ahead() const {
    if (model_.size() < kRecentRewards || pattern_.size() < kRecentRewards) return false;
    return std::accumulate(model_.begin(), model_.end(), 0.0) > std::accumulate(pattern_.begin(), pattern_.end(), 0.0);
  }

 private:
  static void keep(std::deque<double>& recent, double reward) {
    recent.push_back(reward);
    if (recent.size() > kRecentRewards) recent.pop_front();
  }

  std::deque<double> model_, pattern_;  ///< the last kRecentRewards rewards, oldest first
  std::uint64_t budget_;
  std::size_t since_best_ = 0;     ///< fresh results since the last new best
  std::size_t explore_turns_ = 0;  ///< the local arms' turns taken while stalled
};

}  // namespace cutune::search
