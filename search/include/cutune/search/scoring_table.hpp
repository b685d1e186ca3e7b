#pragma once
// The strategy comparison: every strategy simulated `repeats` times on every
// recorded space, runs of other tools (Kernel Tuner's, as traces) beside them, all scored by
// the same SpaceScoring, one table.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cutune/search/recorded_space.hpp"
#include "cutune/search/scoring.hpp"

namespace cutune::search {

struct ComparisonOptions {
  std::vector<std::string> strategies;  ///< cutune's (make_strategy names)
  unsigned repeats = 100;
  std::uint64_t seed = 1;  ///< repeat r of every strategy on every space uses seed + r
  ScoringOptions scoring;
  /// Proposals asked at a time before their results are told: 8, as many as the real tuning
  /// loop has pending with 4 compile workers (search::proposals_ahead + the GPU worker's 2);
  /// 1: sequential.
  std::size_t batch = 8;
  /// Evaluators at once in each simulated run; scoring.workers must equal it (the
  /// baseline and window follow it).
  std::size_t workers = 1;
  /// cutune's runs as its tuning loop makes them, compiles ahead in parallel on this many
  /// compile workers (SimulationOptions::compile_workers); 0: each configuration's recorded
  /// compile and benchmark time spent in series, as Kernel Tuner does. Other tools' traces are
  /// replayed in series either way: that is how they ran.
  std::size_t compile_workers = 0;
  std::size_t lookahead = 0;  ///< SimulationOptions::lookahead (0: the loop's rule)
  unsigned threads = 0;    ///< 0: one per core
  /// Per space (empty: none), the prior every strategy gets there (StrategyOptions::prior).
  std::vector<std::shared_ptr<const SpacePrior>> priors;
  /// Strategies get the time window only, and learn their evaluation budget from the pace of
  /// their first results (SimulationOptions::budget_from_pace), as a real run given only a
  /// time budget does; false: they are told it (evaluation_budget) before they start.
  bool budget_from_pace = false;
  /// cutune's runs evaluate the default configuration first, as its tuning loop does
  /// (loop_first(), SimulationOptions::first); false: each strategy's proposals alone.
  bool default_first = true;
};

/// Runs of another tool on one space (e.g. "kernel_tuner:genetic_algorithm").
struct ExternalRuns {
  std::string strategy;
  std::string space;  ///< a RecordedSpace name
  std::vector<std::vector<TraceEntry>> runs;
};

struct ScoreRow {
  std::string strategy;
  std::string source;            ///< "cutune" or "trace"
  std::vector<double> per_space; ///< NaN where it has no runs
  std::vector<std::size_t> runs; ///< per space
  double overall = 0.0;          ///< mean over spaces (NaN unless every space has runs)
  /// The same against the failure-aware random baseline B_fa (scoring.hpp).
  std::vector<double> per_space_failure_aware;
  double overall_failure_aware = 0.0;
  /// Standard errors of per_space and overall (sampling_error); NaN where not estimated.
  std::vector<double> per_space_error;
  double overall_error = 0.0;
};

struct ScoreTable {
  std::size_t workers = 1;  ///< evaluators at once in every run
  std::vector<std::string> spaces;
  /// Per space: the window end T(p_end) (each run's time budget) and the evaluation budget
  /// given to cutune's strategies for planning (2x what random search makes by then, at
  /// most the space). time_budget_s is in the space's unit: an evaluation count for a space
  /// without recorded costs.
  std::vector<CostUnit> units;
  std::vector<double> time_budget_s;
  std::vector<std::uint64_t> evaluation_budget;
  std::vector<ScoreRow> rows;  ///< best overall first
};

/// Throws InputError for an unknown strategy, external runs naming an unknown space, or
/// external runs with more than one worker (they are sequential runs).
ScoreTable compare_strategies(const std::vector<RecordedSpace>& spaces, const ComparisonOptions& options,
                              const std::vector<ExternalRuns>& external = {});

/// Runs per subset for sampling_error.
inline constexpr std::size_t kErrorSubsetRuns = 5;

/// The sampling error of a score of `runs`: the score pools the runs (an isotonic fit to all of
/// them), so there are no per-run scores to take a spread of. Instead the runs are cut into
/// disjoint subsets of kErrorSubsetRuns in order, each scored alone; the standard deviation of
/// those scores times sqrt(kErrorSubsetRuns / runs) estimates the standard error of the score
/// of all runs (as if it were a mean over runs). NaN with fewer than two subsets. Why: at 40 runs
/// the overall score of one strategy moved by 0.07 from one seed set to another, as much as the
/// margins the strategy tables were read for.
double sampling_error(const SpaceScoring& scoring, const std::vector<std::vector<TraceEntry>>& runs);

/// The evaluation budget a strategy gets on a space (see ScoreTable::evaluation_budget).
std::uint64_t planning_budget(const SpaceScoring& scoring);
/// The same for cutune's tuning loop with `compile_workers` compiling ahead of `workers`
/// evaluators (0 compile workers: planning_budget): 2x the evaluations its pipeline makes by
/// the window's end at the pace of its slower stage, at most the space.
std::uint64_t pipeline_planning_budget(const RecordedSpace& space, const SpaceScoring& scoring,
                                       std::size_t compile_workers, std::size_t workers);

/// A plain-text table: one row per strategy, a column per space and the overall score,
/// headed by the number of evaluators; then the same against the failure-aware baseline,
/// and a line naming the spaces scored in evaluations (no recorded costs), if any.
std::string format_score_table(const ScoreTable& table);

}  // namespace cutune::search
