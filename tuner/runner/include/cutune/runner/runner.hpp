#pragma once
// The tuning loop (ARCHITECTURE.md data flow): the strategy asks, the compile stage
// compiles ahead, the GPU stage verifies and times, every result is committed to the store
// as it is made, and the strategy is told. Work already stored is skipped (resume).
// Its inputs are a TuningSession (tuning_session.hpp), built and checked once.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/measure/statistics.hpp"
#include "cutune/model/configuration.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/result.hpp"
#include "cutune/model/status.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/tuning_session.hpp"
#include "cutune/search/session.hpp"

namespace cutune::runner {

/// A finalist's thorough time summary carried over to a metric objective, as the cost
/// measure::declare_winner ranks (lower first, intervals compared): the metric at the median
/// and at both ends of the median's interval (a metric may rise or fall with time), negated
/// when higher is better; median and interval +infinity (ranked last, never tied with a
/// finite one) when the metric has no finite value there. count and the rest are kept.
Summary metric_cost_summary(Summary time_ms, const std::function<double(double)>& metric_at_ms,
                                     bool higher_is_better);

struct TuneReport {
  DeviceIdentity device;
  std::string kernel, problem_key, date;
  std::int64_t run_id = 0;
  std::uint64_t space_valid = 0;
  std::uint64_t configs_tried = 0;    ///< evaluated in this run
  std::uint64_t configs_resumed = 0;  ///< found in the DB and skipped
  /// Of those, measured on other GPUs of the model (TuneOptions::Reuse::Model)
  std::uint64_t configs_resumed_other_gpus = 0;
  std::uint64_t configs_failed = 0;   ///< failed in this run or stored as failed
  std::vector<std::pair<std::string, std::uint64_t>> failures_by_status;
  std::optional<Configuration> winner;  ///< none when no configuration ran successfully
  double winner_ms = 0.0;
  Objective objective;                  ///< what it was ranked by, in which direction
  /// ms (time), mJ per launch (energy) or the metric's value at the winner's median
  double winner_objective_value = 0.0;
  std::optional<Configuration> default_config;  ///< set by every tuning
  double default_ms = 0.0;            ///< 0 when the default failed or was not evaluated
  /// The default has a result (it was evaluated first, or the strategy proposed it): when the
  /// problem names no default, a tuning need not evaluate it (TuningSession::default_first).
  bool default_evaluated = false;
  std::vector<std::pair<std::string, double>> winner_metrics;  ///< e.g. gbps
  double copy_gbps = 0.0;             ///< device-to-device copy measured in this run
  std::string verification;           ///< "reference" or "default configuration"
  /// The priors offered (the DB's measurements of this kernel on other GPUs or problems)
  /// and whether each was used; empty when none was looked for or found.
  std::vector<search::PriorUse> prior;
  std::string prior_summary;          ///< one line (SpacePrior::summary); "" when none offered
  /// A time budget without an evaluation budget: the evaluation budget the strategy learnt
  /// from the pace of the first results (search/pace.hpp); unset otherwise, or before then.
  std::optional<std::uint64_t> learnt_budget;
  /// The pace it was learnt at (seconds per evaluation on the pipeline's clock).
  std::optional<double> pace_s;
  /// The search as the session saw it: every result in the order it arrived (the stored ones
  /// it resumed from first), with its cost and time on the pipeline's clock; the revisits it
  /// answered; why it ended; the proposals it kept ahead of the lanes at most.
  std::vector<search::TraceEntry> trace;
  std::uint64_t revisits = 0;
  search::SessionEnd end = search::SessionEnd::Running;
  std::size_t lookahead = 0;

  /// The thorough re-measurement of the finalists, winner first.
  struct Finalist {
    explicit Finalist(Configuration c) : config(std::move(c)) {}
    Configuration config;
    bool is_default = false;
    bool tied = false;               ///< its interval overlaps the winner's (the winner too)
    double screening_ms = 0.0;       ///< median while searching
    MeasuredStats stats;             ///< the thorough measurement
    /// The objective at the thorough median (a metric; time: the median); NaN when none.
    double objective_value = 0.0;
  };
  std::vector<Finalist> finalists;
  /// Screening: no re-measurement (finalists disabled or failed, or energy, whose one
  /// window per finalist gives no interval).
  Verdict verdict = Verdict::Screening;
  std::string l2_method;             ///< "flush", "rotate N" or "warm"
  /// Measurement wall time per configuration, sampling only (no compile, no verification).
  double screening_ms_per_config = 0.0;
  double thorough_ms_per_config = 0.0;
  /// Throughput: wall time of the session, the time of every timed sample added up, and
  /// what the compile pool did.
  double wall_s = 0.0;
  double timed_ms_total = 0.0;
  CompilePool::Stats compile;
  std::size_t compile_workers = 0;
  /// The compiler of every configuration ("nvrtc" or "nvcc") and why (jit::decide_compiler:
  /// asked for, or what the default configuration's NVRTC compile said).
  std::string compiler, compiler_reason;
  std::size_t worker_restarts = 0;  ///< GPU worker restarts (crashes, sticky errors, timeouts)
  double timeout_s = 0.0;           ///< the evaluation timeout in force at the end
  /// Where the wall time went (milliseconds, summed over the search): start-up until the
  /// GPU worker was ready (its set-up overlaps the first compiles), waiting for the compile
  /// pool, GPU evaluations as the tuner saw them (round trip; of which verification and
  /// sampling inside the worker), committing to the store, and everything after the search
  /// (finalists, copy ceiling).
  double startup_s = 0.0;
  std::string gpu_setup_ms = "{}";  ///< the GPU worker's set-up by phase (JSON object)
  double compile_ms_median = 0.0;   ///< over the NVRTC compiles of this session (not cache hits)
  /// search_ms: the search loop's wall time. The parts overlap since one evaluation stays in
  /// flight while the previous one is stored: they do not add up to it.
  double compile_wait_ms = 0.0, evaluate_ms = 0.0, verify_ms = 0.0, sampling_ms = 0.0, store_ms = 0.0,
         search_ms = 0.0, after_search_ms = 0.0;
  /// The worker's side of evaluate_ms (GpuEvaluation::load_ms, stage_ms): the rest of the
  /// round trip is the pipe and (de)serialising.
  double worker_load_ms = 0.0, worker_stage_ms = 0.0;
  /// The worker's idle time between one answer and the next request, over the search loop:
  /// the GPU's wait for the pipe, the tuner and compiles (GpuEvaluation::idle_before_ms).
  double worker_idle_ms = 0.0;
  /// Each GPU worker's share (one per GPU, local or on another rank), in lane order: the
  /// sums above, per worker.
  struct Worker {
    std::string name;                 ///< "GPU 0", "rank 1 GPU 0"
    std::string uuid;
    std::uint64_t evaluations = 0;
    double evaluate_ms = 0.0, verify_ms = 0.0, sampling_ms = 0.0, load_ms = 0.0, stage_ms = 0.0, idle_ms = 0.0;
    std::size_t restarts = 0;
    bool lost = false;                ///< stopped answering; its evaluations went to the others
  };
  std::vector<Worker> workers;
  /// The finalists as the winner keeps them (TunedWinner::finalists).
  std::vector<cutune::Finalist> stored_finalists() const;
};

/// Runs a tuning session on the GPUs `session.options().devices` (and the lanes of other
/// ranks in `remote_lanes`), all of one model, or replays a recording (TuningSession's
/// constructor says which): start-up, resume from the
/// store, the search, ranking, the finalists' re-measurement, the winner stored. Throws
/// InputError for bad input found only then (a Kernel Tuner cache file whose header
/// disagrees), cuda::NoDriver when there is no GPU (nothing stored, no DB created).
TuneReport tune(TuningSession session);
/// tune(TuningSession(problem, options)): the session's checks, then the tuning.
TuneReport tune(const KernelProblem& problem, const TuneOptions& options);

/// Configurations measured thoroughly (`cutune measure`): each compiled and verified,
/// then measured with the thorough criterion as finalists are: alone for one, interleaved
/// back to back for several. Used by the measurement benchmarks.
struct MeasuredConfig {
  explicit MeasuredConfig(Configuration c) : config(std::move(c)) {}
  Configuration config;
  double compile_ms = 0.0;
  GpuEvaluation evaluation;
  /// Independent check: one event pair around back-to-back launches on the same data
  /// (warm), divided by their count; 0 when not asked for or not measured.
  double loop_ms = 0.0;
  std::size_t loop_launches = 0;
};
struct MeasureSession {
  DeviceIdentity device;
  std::string problem_key, l2_method, verification;
  std::string compiler;  ///< "nvrtc" or "nvcc" (jit::decide_compiler)
  std::vector<MeasuredConfig> configs;
  /// The event pair around no work, sampled like the configurations (after them).
  double timer_floor_ms = 0.0;
};

/// Each `configs` entry "k=v,..." (others take their default; "" is the default
/// configuration). `loop_s`: > 0 adds the events-loop check lasting about that long.
/// Throws InputError for bad input, cuda::NoDriver without a GPU.
MeasureSession measure_configs(const KernelProblem& problem, const std::string& problem_text,
                               const std::vector<std::string>& configs, int device,
                               const worker::MeasureOptions& options, double loop_s = 0.0,
                               std::uint64_t data_seed = 42);

/// Parses "k=v,..." texts (others take their default) into valid configurations; throws
/// InputError naming `option` and the text for an unknown name or value or a violated
/// restriction.
std::vector<Configuration> parse_configs(const Space& space, const std::vector<std::string>& texts,
                                         const std::string& option);

/// FNV-1a 64-bit hash in hex: the stable identity of a kernel's source and description.
std::string content_hash(const std::string& data);

/// The kernel's identity in the store: content_hash of its source and its JSON file, so an
/// edited kernel is a new kernel (tune, and import/export with a named kernel).
std::string kernel_source_hash(const KernelProblem& problem);

}  // namespace cutune::runner
