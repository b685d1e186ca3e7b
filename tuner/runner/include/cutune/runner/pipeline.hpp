#pragma once
// What the tuning loop (Tuning, runner.cpp) drives: the configurations it submits are
// compiled ahead and evaluated on lanes, and their outcomes come back as they finish, on the
// pipeline's clock. One loop, two pipelines:
// - GpuPipeline (gpu_pipeline.hpp): the compile pool ahead of the GPU workers' lanes (this
//   process's GPUs, and other MPI ranks'), on the wall clock.
// - ReplayPipeline (replay_pipeline.hpp): a recording answers each evaluation with its
//   recorded result, costing its recorded time on a simulated clock (`tune --simulate`);
//   nothing is compiled and no GPU or driver is needed.
// The clock and what an evaluation costs are the pipeline's, so that the loop's time budget,
// the pace a time budget is planned at, and the session's trace mean the same in both.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/search/recorded_space.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::runner {

/// One answer from a lane, or a configuration that did not compile (never on a GPU).
struct LaneOutcome {
  CompiledConfig compiled;                  ///< its cubin released
  std::optional<GpuEvaluation> evaluation;  ///< none: compile failure
  double eval_ms = 0.0;                     ///< startable (submitted, or the one before answered) to answered
  std::size_t lane = 0;
  /// When it arrived on the pipeline's clock (Pipeline::now_s), and what it cost there: on
  /// GPUs the wall clock since the outcome before (as Kernel Tuner's time_limit counts), in a
  /// replay its recorded cost. The session's trace and time budget count these.
  double finished_s = 0.0, cost_s = 0.0;
  /// A replayed evaluation: the recorded result it answered with (its row says it is simulated).
  std::optional<search::RecordedResult> recorded;
};

class Pipeline {
 public:
  virtual ~Pipeline() = default;

  // Start-up.
  /// Each lane's GPU, in lane order (waits; rethrows a lane's start-up error).
  virtual std::vector<DeviceIdentity> identities() = 0;
  /// Starts compiling for `device`, the lanes' GPU (its architecture is known only from
  /// identities()); lanes then take work.
  virtual void start(const DeviceIdentity& device) = 0;
  virtual std::size_t compile_workers() const = 0;
  virtual std::size_t lanes() const = 0;
  virtual std::string lane_name(std::size_t lane) const = 0;
  /// Evaluations all lanes hold at once; once identities() has returned.
  virtual std::size_t capacity() const = 0;
  /// Waits until every lane has set up (rethrows the first error).
  virtual void wait_ready() = 0;
  /// Once ready: what lane `lane`'s worker said (verification, L2 method, argument bytes).
  virtual const worker::Ready& ready(std::size_t lane) const = 0;

  // The search.
  /// Proposals the loop may submit now, at most: what keeps `lookahead` configurations
  /// submitted and not yet on a lane (search/lookahead.hpp's rule).
  virtual std::size_t room(std::size_t lookahead) const = 0;
  virtual void submit(const Config& config) = 0;
  /// Submitted and not yet taken by a lane.
  virtual std::size_t pending() const = 0;
  /// The loop submitted: lanes with room take.
  virtual void fed() = 0;
  /// The next outcome; nullopt when nothing is in flight, being taken or pending (the loop
  /// must feed, or is done), or at `deadline_s` on the clock.
  virtual std::optional<LaneOutcome> next(std::optional<double> deadline_s) = 0;
  /// Out of time: what is pending is dropped (compiles in progress too) and lanes take nothing
  /// more; what they hold still answers through next().
  virtual void stop_taking() = 0;
  /// The screening's best so far (time objective), sent with each later evaluation.
  virtual void set_best_ms(std::optional<double> best_ms) = 0;
  /// The hang timeout, applied by each lane before its next evaluation.
  virtual void set_timeout(std::chrono::milliseconds timeout) = 0;
  virtual std::size_t restarts(std::size_t lane) const = 0;
  virtual bool lost(std::size_t lane) const = 0;

  // The clock.
  /// From now on the clock reads `origin_s` at the tuning's start: the session's time once
  /// the stored results it resumed from were told (their costs).
  virtual void set_clock(double origin_s) = 0;
  /// Seconds on the session's clock.
  virtual double now_s() const = 0;
  /// A fresh outcome as a time budget's pace counts it (search/pace.hpp): what compiling it
  /// took a compile worker and evaluating it a lane, seconds.
  virtual std::pair<double, double> pace_costs_s(const LaneOutcome& outcome) const = 0;
  /// What a stored result returns and costs where the pipeline knows it better than its row
  /// does: a replay's recorded result (resuming is free of re-measuring, and costs the
  /// recorded time). nullopt: the row's (on GPUs, always).
  virtual std::optional<search::RecordedResult> recorded_result(const Config&) const { return std::nullopt; }

  // After the search.
  /// The finalists measured thoroughly, interleaved, on lane 0, in the order they were
  /// measured; empty where nothing can be re-measured (a replay).
  virtual std::vector<std::pair<Config, GpuEvaluation>> remeasure(const std::vector<Config>& finalists) = 0;
  /// Device-to-device copy bandwidth (GB/s) over `bytes` on lane 0; 0 where there is no GPU here.
  virtual double copy_bandwidth_gbps(std::size_t bytes) = 0;
  /// Ends the lanes, then the compile workers: everything is stored.
  virtual void release() = 0;
  virtual CompilePool::Stats compile_stats() const = 0;
};

}  // namespace cutune::runner
