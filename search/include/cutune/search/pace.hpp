#pragma once
// A time budget as the evaluation budget a strategy plans with. Strategies plan with an
// evaluation budget (bayes_opt's initial sample and its batch planning, the portfolio's arms
// for a short run, annealing schedules); `cutune score` gives them 2x the evaluations random
// search makes in the time window at the pace of the pipeline's slower stage
// (pipeline_planning_budget). A run given a time budget and no evaluation budget does not
// know that pace before it starts: it measures it over its first kPaceResults results and
// then tells the strategy the same planning budget (Strategy::learn_budget), so that a real
// run plans as the scored one does. Both measure it with PaceEstimate: a simulation from the
// recorded costs, a run on a GPU from its measured compile and GPU times (not its wall clock:
// tuner/runner/src/runner.cpp has the measurements).
#include <cstddef>
#include <cstdint>
#include <optional>

namespace cutune::search {

/// Fresh results the pace is measured over: one batch of the tuning loop.
inline constexpr std::size_t kPaceResults = 8;

/// 2x the evaluations `time_budget_s` holds at `per_evaluation_s` each, at least 1 and at most
/// `size` (the whole space when the pace is not above 0).
std::uint64_t planning_budget_at_pace(double time_budget_s, double per_evaluation_s, std::uint64_t size);

/// The pipeline's pace from what its results cost: the compile workers' or the evaluators'
/// stage, whichever is slower.
class PaceEstimate {
 public:
  /// compile_workers 0: each configuration is compiled and benchmarked in series on its
  /// evaluator, as Kernel Tuner's runner does.
  PaceEstimate(std::size_t compile_workers, std::size_t workers);
  /// One result: what compiling it took a compile worker, and evaluating it an evaluator.
  void add(double compile_s, double evaluate_s);
  std::size_t results() const { return results_; }
  /// Wall-clock seconds per evaluation; 0 before any result.
  double per_evaluation_s() const;

 private:
  std::size_t compile_workers_, workers_;
  std::size_t results_ = 0;
  double compile_s_ = 0.0, evaluate_s_ = 0.0;
};

/// A time budget's evaluation budget, learnt once: the pace of the first kPaceResults results
/// (PaceEstimate) turned into planning_budget_at_pace. What a simulation and a run on a GPU
/// both tell their strategy (Strategy::learn_budget).
class PacedBudget {
 public:
  /// `size`: the configurations the run may evaluate (the budget's ceiling).
  PacedBudget(double time_budget_s, std::size_t compile_workers, std::size_t workers, std::uint64_t size);
  /// One fresh result's cost; the budget at the kPaceResults-th, nullopt before and after.
  std::optional<std::uint64_t> add(double compile_s, double evaluate_s);
  /// Once learnt: the pace it came from (seconds per evaluation) and the budget.
  std::optional<double> pace_s() const { return pace_s_; }
  std::optional<std::uint64_t> budget() const { return budget_; }

 private:
  double time_budget_s_;
  std::uint64_t size_;
  PaceEstimate pace_;
  std::optional<double> pace_s_;
  std::optional<std::uint64_t> budget_;
};

}  // namespace cutune::search
