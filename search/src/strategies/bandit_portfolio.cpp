// bandit_portfolio (cutune's own design, none of the peer tuners has it): a UCB1 bandit
// over a portfolio of the other strategies. Every arm is told every result (so the GP of
// bayes_opt learns from the local search's points and vice versa); each proposal comes
// from the arm with the best upper confidence bound, and the arm that proposed a
// configuration is rewarded with the quantile of its result among all valid results so far
// (1: better than everything, 0: worst or a failure). Rationale: no single strategy wins
// on every space (Willemsen et al., FGCS 2024), so let the run choose. Whether it helps
// is for `cutune score` to say; see README. With a short evaluation budget
// (kBanditBudget) the bandit has too few pulls to learn from: the model-based arm and the
// pattern arm take turns in a cycle instead, the model's share following what its recent
// results paid, and a stalled run spends some of the pattern arm's turns on random configurations
// (short_run_schedule.hpp has the rules and their measurements).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>

#include "../searcher.hpp"
#include "short_run_schedule.hpp"
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
// Measured on the 19 recorded spaces (results/strategies/strategies.json, 40 runs, same seeds): bayes_opt,
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
constexpr double kExploration = 2.0;  ///< UCB1's constant: sqrt(2 ln N / n_a)
constexpr double kPriorReward = 0.5;  ///< mean reward of an arm before its first result

struct Arm {
  std::unique_ptr<Strategy> strategy;
  std::size_t pulls = 0, rewards = 0;
  double reward_sum = 0.0;
  bool exhausted = false;
};

class BanditPortfolio final : public Searcher {
 public:
  BanditPortfolio(const Space& space, const StrategyOptions& options)
      : Searcher(space, options.seed),
        short_run_(options.budget && is_short(*options.budget)),
        schedule_(options.budget ? *options.budget : 0) {
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
    schedule_.set_budget(evaluations);
    bool all = true;
    for (auto& a : arms_) all = a.strategy->learn_budget(evaluations) && all;
    return all;
  }

 private:
  /// A budget the bandit has too few pulls to learn from: the cycle instead (strategy.hpp).
  static bool is_short(std::uint64_t evaluations) { return evaluations <= kBanditBudget; }

  std::optional<Config> propose() override {
    // A stalled short run: some of the local arms' turns explore (short_run_schedule.hpp). Such a
    // proposal is no arm's, so it rewards none.
    if (short_run_ && !schedule_.models_turn(total_pulls_) && schedule_.explores()) {
      if (auto c = random_unseen()) {
        ++total_pulls_;
        return c;
      }
    }
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
    if (schedule_.models_turn(total_pulls_) && !model.exhausted) return &model;
    if (Arm* local = best_bound(&model)) return local;
    return model.exhausted ? nullptr : &model;
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
    if (short_run_) schedule_.told(o.valid && (valid_.empty() || fitness < valid_.front()));
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
      // A short run's schedule weighs the model against the pattern arm (kShortRunArms' last,
      // after any prior's arm); the prior's arm is the bandit's alone.
      if (short_run_ && it->second == model_arm_) schedule_.model_rewarded(reward);
      else if (short_run_ && it->second == arms_.size() - 1) schedule_.pattern_rewarded(reward);
    }
  }

  void restart() override {}  // the arms restart themselves

  const bool short_run_;
  std::vector<Arm> arms_;
  std::size_t model_arm_ = 0;  ///< bayes_opt's place in arms_ (after the prior's arm)
  std::size_t total_pulls_ = 0;
  ShortRunSchedule schedule_;  ///< a short run's turns (told nothing in a long one)
  std::map<Config, std::size_t> credit_;
  std::set<Config> told_;
  std::vector<double> valid_;  ///< sorted valid fitness values
};

}  // namespace

std::unique_ptr<Strategy> make_bandit_portfolio(const Space& space, const StrategyOptions& options) {
  return std::make_unique<BanditPortfolio>(space, options);
}

}  // namespace cutune::search
