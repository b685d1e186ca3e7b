#pragma once
// Simulation: a strategy tuned against a recorded space instead of a GPU. Each
// evaluation returns the recorded result and costs its recorded compile + benchmark
// (+ verification) time in simulated time, through the same Session as a real run.
// `cutune tune --simulate` runs the tuning loop itself on a recording (runner::ReplayPipeline,
// which models the same events in the same order); this is `cutune score`'s fast path, for the
// thousands of runs a score takes, and tests/test_replay.cpp checks that both make the same run.
//
// With N evaluators (a node's GPUs) the simulation is event-driven: up to N configurations
// run at once, each finishing its recorded cost after it started; the next one to finish
// is told to the strategy at its finish time, and the evaluator it frees takes the next
// proposal. The strategy is asked when an evaluator is free and nothing proposed is
// waiting, for as many as keep max(N, batch) proposals unanswered: with N = 1 that is the
// sequential loop (ask a batch, evaluate it in order, ask again), trace for trace.
//
// With compile workers (SimulationOptions::compile_workers > 0) it is cutune's own tuning
// loop instead: W compile workers compile ahead in parallel, each configuration taking its
// recorded compile time, and an evaluator then spends only its recorded benchmark and
// verification time. Each evaluator holds two (one running, one staged, as a GPU worker
// does), and the strategy is asked, `batch` at a time, whenever fewer than the lookahead
// (proposals_ahead(), or SimulationOptions::lookahead) are queued, compiling or compiled and
// waiting. At the time budget what is queued, compiling or compiled is dropped and what the
// evaluators hold finishes, as in the loop. Kernel Tuner compiles and benchmarks one configuration after the other, which is
// the model without compile workers.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutune/search/recorded_space.hpp"
#include "cutune/search/session.hpp"

namespace cutune::search {

struct SimulationOptions {
  SessionOptions session;
  /// Configurations asked at a time: at most as many as the real tuning loop asks at once.
  std::size_t batch = 8;
  /// Evaluators working at once (>= 1). The session's clock, and so the time budget and the
  /// trace's elapsed_s, is then their wall clock.
  std::size_t workers = 1;
  /// 0: a configuration's whole recorded cost is spent on its evaluator. N: the tuning
  /// loop's pipeline with N compile workers (see above).
  std::size_t compile_workers = 0;
  /// With compile workers: configurations queued, compiling or compiled and not yet held by
  /// an evaluator, at most, before the strategy is asked again; 0: proposals_ahead(), the
  /// real loop's rule.
  std::size_t lookahead = 0;
  /// With a time budget (session.max_time_s): tell the strategy the evaluation budget it comes
  /// to at the pace of the first kPaceResults fresh results (pace.hpp), as a real run with a
  /// time budget alone does.
  bool budget_from_pace = false;
  /// Evaluated before the strategy's first proposal, in order, and told to it: what the tuning
  /// loop evaluates before the strategy's own (loop_first()). Empty: the strategy's proposals
  /// alone, as another tool's runs are.
  std::vector<Config> first;
};

struct SimulationResult {
  std::vector<TraceEntry> trace;
  std::uint64_t revisits = 0;
  SessionEnd end = SessionEnd::Running;
  /// Evaluator time spent idle before the last result, summed over the evaluators: an
  /// evaluator is idle when the strategy had nothing to propose while results were pending.
  double idle_s = 0.0;
  /// With budget_from_pace, once the first kPaceResults results arrived: their pace (seconds,
  /// or evaluations, per evaluation) and the evaluation budget the strategy was told.
  std::optional<double> pace_s;
  std::optional<std::uint64_t> learnt_budget;
};

/// A configuration's recorded cost split into what a compile worker spends and what an
/// evaluator spends, summing to cost_s, in the recorded parts' proportions (an imputed cost,
/// whose parts were not recorded, and a cost in evaluations go to the evaluator whole).
std::pair<double, double> compile_and_evaluate_s(const RecordedResult& result, CostUnit unit);

/// The lookahead the pipeline keeps for `strategy`: options.lookahead, else the loop's rule
/// (proposals_ahead) for options.compile_workers and two slots per evaluator.
std::size_t pipeline_lookahead(const Strategy& strategy, const SimulationOptions& options);

/// What a tuning of the recorded kernel evaluates before its strategy proposes anything, as
/// the loop does (Tuning::run_search): the default configuration when the recording names the
/// one its tuning evaluated first (Space::default_named: a cache's cutune_default), or else
/// nothing (a tuning of a kernel that names no default starts with its strategy's proposals).
/// A named default the recording does not hold gives way to its first configuration in the
/// listing order, as a T1 file whose defaults break a restriction gets the first valid one.
std::vector<Config> loop_first(const RecordedSpace& recorded);

/// Runs `strategy` (made over recorded.space()) to the end of its session with
/// options.workers evaluators (and options.compile_workers compile workers). Throws
/// std::logic_error if the strategy proposes a configuration that is not recorded,
/// InputError for 0 workers.
SimulationResult simulate(const RecordedSpace& recorded, Strategy& strategy,
                          const SimulationOptions& options,
                          const std::vector<std::pair<Config, RecordedResult>>& stored = {});

/// Another tool's run (e.g. Kernel Tuner's) as a trace: the configurations it evaluated,
/// in order, each unique one costing its recorded time; repeats are revisits (free).
/// Throws InputError naming `what` for a configuration that is not recorded.
std::vector<TraceEntry> replay_trace(const RecordedSpace& recorded, const std::vector<Config>& evaluated,
                                     const std::string& what);

}  // namespace cutune::search
