// bandit_portfolio (cutune's own design, none of the peer tuners has it): a UCB1 bandit
// over a portfolio of the other strategies. Every arm is told every result (so the GP of
// bayes_opt learns from the local search's points and vice versa); each proposal comes
// from the arm with the best upper confidence bound, and the arm that proposed a
// configuration is rewarded with the quantile of its result among all valid results so far
// (1: better than everything, 0: worst or a failure). Rationale: no single strategy wins
// on every space (Willemsen et al., FGCS 2024), so let the run choose. Whether it helps
// is for `cutune score` to say; see README. With a short evaluation budget
// (kBanditBudget) the bandit has too few pulls to learn from: the model-based arm and the
// pattern arm take turns in a cycle instead (kShortRunCycle says why), the model's share
// following what its recent results paid (kModelAheadCycle).
#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <map>
#include <set>
#include <span>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

using Factory = std::unique_ptr<Strategy> (*)(const Space& space, const StrategyOptions& options);
/// An arm's factory and its seed stream (seed * kStreamStride + stream).
struct ArmKind {
  Factory make;
  std::uint64_t stream;
};
constexpr std::uint64_t kStreamStride = 0x9E3779B97F4A7C15ULL;
// The arms: model-based, a pack, annealing and a pattern search.
// Measured on the 19 recorded spaces (results/strategies.md, 40 runs, same seeds): bayes_opt,
// greedy_ils, genetic_algorithm, diff_evo and simulated_annealing scored 0.216; tabu_greywolf
// in diff_evo's place 0.246; pso in greedy_ils' place too 0.251 (0.697 -> 0.722 on the
// convolution spaces, 0.749 -> 0.812 on dedispersion). A lower UCB constant (0.5: 0.253, 0.1:
// 0.234) made no difference beyond the runs' noise. Without genetic_algorithm (the weakest arm
// alone, 0.169), every other arm proposes a quarter instead of a fifth (same seeds, with the GA /
// without): 15 small spaces, batch 8, 1000 runs 0.098 / 0.113 ± 0.011; 200 runs at batch 1 0.154 /
// 0.170; the four large spaces, 40 runs, batch 8 0.732 / 0.763, batch 1 0.761 / 0.756; the small
// spaces with their values listed in reverse, batch 8, 200 runs 0.095 / 0.108.
// pattern_search as a fifth arm (without / with, 40 runs, seeds 1..40, batch 8): Kernel Tuner's
// reduction example sum_floats 0.735 / 0.855, sepconv 0.849 / 0.883; the four large spaces
// 0.808 / 0.811 (seeds 41..80: 0.792 / 0.793; one at a time 0.821 / 0.830), where
// convolution_A4000 gains (+0.03 to +0.11) and dedispersion_A100 loses (-0.01 to -0.03); the
// short runs (the 15 small spaces) do not use the arms. Only adjacent moves in it (no Hamming
// sweep of the best): 0.847 and 0.840 on the two, 0.816 on the four. With its sweeps of the
// next-best results (pattern_search.cpp has the figures) 0.862, 0.893 and 0.830.
// pso left out once the pattern arm was in (with / without, 200 runs per space on the seven
// spaces whose budgets exceeded kModelLedBudget (the short-run bound then): the four shared ones, sum_floats, sepconv and BAT's
// GEMM): batch 8, seeds 1..200 0.834 / 0.840 and seeds 201..400 0.833 / 0.837; one at a time, seeds
// 1..200, 0.855 / 0.864 (six of the seven up, sepconv -0.004). Every arm keeps the seed stream it
// had beside pso (2 was pso's), so those differences are pso's alone, not other random numbers.
// Dropping tabu_greywolf instead scored 0.827 and simulated_annealing 0.839 against 0.847 (40
// runs, batch 8).
constexpr ArmKind kArms[] = {
    {make_bayes_opt, 1}, {make_tabu_greywolf, 3}, {make_simulated_annealing, 4}, {make_pattern_search, 5}};
/// The prior's arm (when there is a prior) has a stream of its own, after the arms'.
constexpr std::uint64_t kPriorStream = 6;
/// The arms of a short run (a budget of at most kBanditBudget, strategy.hpp says why): the
/// model and the pattern search, with the seed streams they have in kArms.
constexpr ArmKind kShortRunArms[] = {kArms[0], kArms[3]};
static_assert(kShortRunArms[0].make == make_bayes_opt && kShortRunArms[1].make == make_pattern_search,
              "a short run is the model and the pattern arm: reordering kArms must not change that");
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
constexpr double kExploration = 2.0;  ///< UCB1's constant: sqrt(2 ln N / n_a)
constexpr double kPriorReward = 0.5;  ///< mean reward of an arm before its first result

struct Arm {
  std::unique_ptr<Strategy> strategy;
  std::size_t pulls = 0, rewards = 0;
  double reward_sum = 0.0;
  bool exhausted = false;
  std::deque<double> recent{};  ///< the last kRecentRewards rewards, oldest first
};

class BanditPortfolio final : public Searcher {
 public:
  BanditPortfolio(const Space& space, const StrategyOptions& options)
      : Searcher(space, options.seed), short_run_(options.budget && is_short(*options.budget)) {
    // With a prior, its arm first: the bandit pulls every arm once in order, and the
    // prior's neighbourhood of the seeds is the best-informed guess at the start.
    if (options.prior && !options.prior->empty()) {
      StrategyOptions o = options;
      o.seed = options.seed * kStreamStride + kPriorStream;
      arms_.push_back({make_prior_local(space, o)});
      model_arm_ = 1;
    }
    for (const ArmKind& arm : short_run_ ? std::span<const ArmKind>(kShortRunArms) : std::span<const ArmKind>(kArms)) {
      StrategyOptions o = options;
      o.seed = options.seed * kStreamStride + arm.stream;  // distinct, reproducible streams
      arms_.push_back({arm.make(space, o)});
    }
  }

  // In place while the budget keeps its arms (a short run stays short); every arm must
  // re-plan in place too.
  bool learn_budget(std::uint64_t evaluations) override {
    if (is_short(evaluations) != short_run_) return false;
    bool all = true;
    for (auto& a : arms_) all = a.strategy->learn_budget(evaluations) && all;
    return all;
  }

 private:
  /// A budget the bandit has too few pulls to learn from: the cycle instead (strategy.hpp).
  static bool is_short(std::uint64_t evaluations) { return evaluations <= kBanditBudget; }

  std::optional<Config> propose() override {
    while (true) {
      Arm* arm = choose();
      if (!arm) return std::nullopt;
      auto batch = arm->strategy->ask(1);
      if (batch.empty()) {
        arm->exhausted = true;
        continue;
      }
      ++arm->pulls;
      ++total_pulls_;
      credit_.try_emplace(batch.front(), static_cast<std::size_t>(arm - arms_.data()));
      return batch.front();
    }
  }

  Arm* choose() {
    if (!short_run_) return best_bound(nullptr);
    Arm& model = arms_[model_arm_];
    const bool models_turn = total_pulls_ < kShortRunLead ||
                             (model_ahead() ? total_pulls_ % kModelAheadCycle == 0
                                            : (total_pulls_ - kShortRunLead) % kShortRunCycle == 0);
    if (models_turn && !model.exhausted) return &model;
    if (Arm* local = best_bound(&model)) return local;
    return model.exhausted ? nullptr : &model;
  }

  /// Whether the model's recent results paid more than the pattern arm's (kModelAheadCycle);
  /// false until both have kRecentRewards results.
  bool model_ahead() const {
    const auto& model = arms_[model_arm_].recent;
    const auto& pattern = arms_.back().recent;  // kShortRunArms' last, after any prior's arm
    if (model.size() < kRecentRewards || pattern.size() < kRecentRewards) return false;
    // Sums of equally many: the same order as the means.
    return std::accumulate(model.begin(), model.end(), 0.0) > std::accumulate(pattern.begin(), pattern.end(), 0.0);
  }

  /// The arm with the best upper confidence bound (UCB1; an arm not pulled yet first), other
  /// than `skip`; null when every one is exhausted.
  Arm* best_bound(const Arm* skip) {
    Arm* best = nullptr;
    double best_score = -INFINITY;
    for (auto& a : arms_) {
      if (&a == skip || a.exhausted) continue;
      if (a.pulls == 0) return &a;
      const double mean = a.rewards ? a.reward_sum / static_cast<double>(a.rewards) : kPriorReward;
      const double score = mean + std::sqrt(kExploration * std::log(static_cast<double>(total_pulls_)) /
                                            static_cast<double>(a.pulls));
      if (score > best_score) best_score = score, best = &a;
    }
    return best;
  }

  void learn(const Config& c, double fitness) override {
    if (!told_.insert(c).second) return;  // a revisit: the arms know it already
    const Observation o{std::isfinite(fitness), std::isfinite(fitness) ? fitness : 0.0};
    for (auto& a : arms_) a.strategy->tell(c, o);
    double reward = 0.0;
    if (o.valid) {
      auto at = std::upper_bound(valid_.begin(), valid_.end(), fitness);
      reward = valid_.empty() ? 1.0 : static_cast<double>(valid_.end() - at) / static_cast<double>(valid_.size());
      valid_.insert(at, fitness);
    }
    if (auto it = credit_.find(c); it != credit_.end()) {
      Arm& arm = arms_[it->second];
      arm.reward_sum += reward;
      ++arm.rewards;
      arm.recent.push_back(reward);
      if (arm.recent.size() > kRecentRewards) arm.recent.pop_front();
    }
  }

  void restart() override {}  // the arms restart themselves

  const bool short_run_;
  std::vector<Arm> arms_;
  std::size_t model_arm_ = 0;  ///< bayes_opt's place in arms_ (after the prior's arm)
  std::size_t total_pulls_ = 0;
  std::map<Config, std::size_t> credit_;
  std::set<Config> told_;
  std::vector<double> valid_;  ///< sorted valid fitness values
};

}  // namespace

std::unique_ptr<Strategy> make_bandit_portfolio(const Space& space, const StrategyOptions& options) {
  return std::make_unique<BanditPortfolio>(space, options);
}

}  // namespace cutune::search
