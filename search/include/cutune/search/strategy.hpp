#pragma once
// Search strategies behind one small ask/tell interface over the index space of a Space
// (STYLE.md, convention 7). The contract, tested for every strategy in
// tests/test_strategies.cpp:
// - ask(max) returns up to `max` configurations, all valid (moves that land on an invalid
//   point are repaired to the nearest valid one, see neighbourhood.hpp); it may be called
//   again before earlier proposals are told, and results may arrive in any order;
// - ask returns empty only when the strategy has nothing more to propose;
// - a strategy may propose a configuration it proposed before (GA/PSO do): the caller
//   answers revisits from stored results without re-running or counting them;
// - tell accepts failures (valid = false) and configurations the strategy did not propose
//   (the caller's default configuration, resumed results);
// - deterministic for a seed: same tells in the same order give the same proposals.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/space.hpp"
#include "cutune/search/prior.hpp"

namespace cutune::search {

struct Observation {
  bool valid = false;      ///< false for any failure status
  double objective = 0.0;  ///< lower is better (time in ms)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// Up to `max` valid configurations to evaluate next; empty only when the search is over.
  virtual std::vector<Config> ask(std::size_t max) = 0;
  /// The result of a configuration (usually one that ask() proposed; any valid one is accepted).
  virtual void tell(const Config& config, const Observation& observation) = 0;
  /// Whether results change what it proposes. One that does not (brute force, random
  /// sampling) may be asked far ahead, so that compiling runs well ahead of the GPU; one
  /// that does is asked only a little ahead, or it would propose blind.
  virtual bool learns() const { return true; }
  /// The evaluation budget to plan with, learnt during the run: a run with a time budget and
  /// no evaluation budget tells it once, from the pace of its first results (pace.hpp).
  /// Returns whether it now plans with it: a strategy that re-plans in place (bayes_opt, a
  /// short-run portfolio) says true; one that does not says false, and one made with
  /// StrategyOptions::budget_learnt is then made again with the budget (make_strategy).
  virtual bool learn_budget(std::uint64_t evaluations) {
    (void)evaluations;
    return false;
  }
};

/// The strategy `cutune tune` uses unless told otherwise: the best overall score of
/// results/strategies/strategies_200.md (0.508 over 26 recorded spaces of 13 kernel families, 200 runs on
/// each; Kernel Tuner 1.5.0's best, adaptive_tabu_greywolf, 0.309).
/// Without a budget it still evaluates the whole space, only in a better order.
inline constexpr const char* kDefaultStrategy = "bandit_portfolio";

/// A short run for the model-based strategies: with an evaluation budget of at most this many,
/// bayes_opt re-plans after every pick and surrogate_vnd keeps its initial sample, and a run
/// whose budget is still to be learnt plans as one. Measured with bayes_opt alone against the
/// four-arm portfolio (results/strategies/strategies_200.notes.md): on the 15 small spaces (planning budgets
/// 12 to 236) bayes_opt 0.162 against 0.133 (200 runs, 8 pending; one at a time 0.214 against
/// 0.183); on the four large ones (budgets 550 to 4334) the portfolio led, 0.808 against 0.687.
/// Any bound from 237 to 549 gives the same scores there; 400 is twice the results bayes_opt's
/// GP holds.
inline constexpr std::uint64_t kModelLedBudget = 400;

/// With an evaluation budget of at most this many, the default (bandit_portfolio) does not run
/// its bandit over all four arms: its model-based arm (bayes_opt) and its pattern arm take turns
/// in a cycle (search/src/strategies/short_run_schedule.hpp has the rule and its measurements), beside a prior's
/// arm when there is a prior. A bandit learns which arm pays only over many pulls, and in a short
/// run every arm's random start dilutes the arms that learn from the first results. The seven
/// recorded spaces with budgets above kModelLedBudget, the cycle against the bandit (200 runs,
/// seeds 1..200, batch 8 / one at a time), by budget: convolution_A4000 (550) 0.697 / 0.693,
/// dedispersion_A4000 (658) 0.838 / 0.803, Kernel Tuner's sum_floats (846) 0.888 / 0.854, BAT
/// GEMM (926) 0.864 / 0.855; then the bandit leads: sepconv (1380) 0.880 / 0.896,
/// convolution_A100 (2410) 0.711 / 0.861, dedispersion_A100 (4334) 0.775 / 0.915.
/// One at a time, the four up to 926: 0.744 / 0.744, 0.851 / 0.855, 0.904 / 0.889, 0.881 / 0.874.
/// The crossing lies between 926 and 1380; 1000 is a round bound between them.
inline constexpr std::uint64_t kBanditBudget = 1000;

struct StrategyOptions {
  // A constructor, not an aggregate: callers write {name, seed, budget} and the prior stays
  // unset without a missing-initializer warning at each of them.
  StrategyOptions(std::string name_ = kDefaultStrategy, std::uint64_t seed_ = 1,
                  std::optional<std::uint64_t> budget_ = std::nullopt, std::shared_ptr<const SpacePrior> prior_ = nullptr)
      : name(std::move(name_)), seed(seed_), budget(budget_), prior(std::move(prior_)) {}

  std::string name = kDefaultStrategy;
  std::uint64_t seed = 1;
  /// Unique evaluations; none = the whole space. The caller enforces it; brute_force and
  /// random also stop proposing at it, the others adapt (e.g. bayes_opt's initial sample).
  std::optional<std::uint64_t> budget;
  /// What the same kernel measured elsewhere (prior.hpp), mapped onto this space; null or
  /// empty: none. Every strategy then proposes the prior's seeds first (kPriorSeeds of
  /// them); bandit_portfolio also gets one more arm, a local search ordered by the prior.
  std::shared_ptr<const SpacePrior> prior;
  /// No budget yet, but one will be learnt (Strategy::learn_budget; a time budget alone, from
  /// the pace of the first results): until then it plans as a short run (kModelLedBudget), then
  /// it re-plans with the budget learnt, in place or made again (make_strategy). Unset: without
  /// a budget it plans for the whole space.
  bool budget_learnt = false;
};

/// The prior's best configurations proposed before a strategy's own: one batch of the
/// tuning loop (8), each source's best in turn (2 other GPUs: 4 each). Not tuned: with the
/// A100/A4000 recordings the A4000's best is rank 43 of 4201 on the A100 and the A100's
/// best few include ranks 11..33 of 11130 on the A4000, so a few seeds reach them. From
/// another problem size only two come first, the rest only if those two beat the strategy's
/// own first results (prior_guided.cpp: 2048^3's best eight are among 1024^3's worst).
inline constexpr std::size_t kPriorSeeds = 8;

/// Whether `cutune tune` uses a matching prior from its DB unless told `--prior none`: the
/// leave-one-GPU-out scores of results/transfer_prior/transfer_prior.md decide it (on: better in all 12
/// strategy x space pairs, bandit_portfolio 0.693 -> 0.876; over all 19 recorded spaces, the
/// default of 2026-11-27 0.401 -> 0.708, better on 16).
inline constexpr bool kPriorByDefault = true;

/// Names accepted by make_strategy.
std::vector<std::string> strategy_names();
/// Throws InputError naming an unknown strategy. A learning strategy made with budget_learnt
/// is made again when it learns its budget (learn_budget), with that budget and told every
/// result told so far in the same order; results of its earlier proposals that arrive later
/// are told to the new one.
std::unique_ptr<Strategy> make_strategy(const Space& space, const StrategyOptions& options);

}  // namespace cutune::search
