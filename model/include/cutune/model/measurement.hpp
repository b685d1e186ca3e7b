#pragma once
// One measured configuration as plain data: the samples and their statistics, the
// conditions they were taken in, and what the GPU stage made of the configuration (its
// status, its verification). Made by the measurement (tuner/measure) and the GPU worker,
// carried over the worker pipe, stored by the DB; typed everywhere inside a process, with
// the names below only where the data leaves it (DB rows, the pipe, reports).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/status.hpp"

namespace cutune {

/// Why sampling one configuration stopped.
enum class StopReason {
  none,              ///< keep sampling
  converged,         ///< the median's relative interval half-width reached the target
  noise_stabilised,  ///< the noise stopped improving: an inherently noisy stream
  time_cap,          ///< the per-configuration time budget is spent
  sample_cap,        ///< max_samples taken
  clearly_slower,    ///< screening: certainly slower than the best so far
};
/// "none", "converged", "noise stabilised", "time cap", "sample cap", "clearly slower".
std::string_view to_string(StopReason r);
std::optional<StopReason> parse_stop_reason(std::string_view name);

/// What times a sample. Events: a CUDA event pair around the launches. Activity: the GPU's
/// own start and end timestamps of the work (CUPTI). See measure::SamplerSettings::timer.
enum class SampleTimer { Events, Activity };
const char* timer_name(SampleTimer t);  ///< "events", "activity"
std::optional<SampleTimer> parse_sample_timer(std::string_view name);

/// Summary statistics of timing samples (measure::summarize). The median ranks
/// configurations; its interval comes from order statistics (GPU timings are skewed,
/// often bimodal, never Gaussian).
struct Summary {
  std::size_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0;
  double rel_stddev = 0;  ///< stddev / mean (nvbench's "noise"); 0 when mean is 0
  /// Confidence interval of the median: [ci_low, ci_high] (order statistics, see median_ci).
  double ci_low = 0, ci_high = 0;
  /// Coverage that interval actually has. It is at least the requested confidence, except
  /// for samples too small to reach it (n < 6 at 95%), where the interval is [min, max].
  double ci_coverage = 0;
  /// (ci_high - ci_low) / (2 * median): the noise the stopping criterion drives down.
  double rel_ci_half_width = 0;
  friend bool operator==(const Summary&, const Summary&) = default;
};

/// What measuring one configuration produced (measure::Sampler::measure).
struct SampleSet {
  std::vector<double> samples_ms;    ///< kept samples, in arrival order
  std::vector<double> clocks_mhz;    ///< SM clock after each kept sample (empty without probe)
  std::vector<double> discarded_ms;  ///< samples taken while throttled
  std::size_t back_offs = 0;
  std::size_t block_timeouts = 0;    ///< samples whose queueing outlasted the blocking kernel
  StopReason reason = StopReason::none;
  double wall_ms = 0;                ///< measurement time, warm-up and back-offs included
  SampleTimer timer = SampleTimer::Events;  ///< what timed the samples
  /// Activity-timed samples for which CUPTI delivered no record, timed by the events instead.
  std::size_t timer_fallbacks = 0;
  friend bool operator==(const SampleSet&, const SampleSet&) = default;
};

/// Which criterion measured a configuration: the cheap one while searching, or the thorough
/// one (finalists, `cutune measure`).
enum class MeasurementLevel { Screening, Thorough };
const char* level_name(MeasurementLevel l);  ///< "screening", "thorough"
std::optional<MeasurementLevel> parse_level(std::string_view name);

/// How each sample was kept from finding the kernel's data in L2.
struct L2Method {
  enum class Kind {
    Flush,   ///< the L2 flushed before every sample
    Rotate,  ///< argument sets rotated, together several L2 sizes (data that fits in L2)
    Warm,    ///< neither: back-to-back on the same data, as Kernel Tuner measures
  };
  Kind kind = Kind::Flush;
  std::size_t argument_sets = 1;  ///< Rotate: how many sets; 1 otherwise
  friend bool operator==(const L2Method&, const L2Method&) = default;
};
/// "flush", "rotate N" or "warm".
std::string to_string(const L2Method& m);
std::optional<L2Method> parse_l2_method(std::string_view name);

/// Values observed on one configuration, by name, in the order they were observed: what a
/// Kernel Tuner observer gives per configuration ("error_rmse", "num_regs", "temperature"), each
/// a number. Names are the observers' own, so that they land in Kernel Tuner's result rows as-is.
using ObservedValues = std::vector<std::pair<std::string, double>>;

/// Statistics and conditions of one measured configuration.
struct MeasuredStats {
  MeasurementLevel level = MeasurementLevel::Screening;
  SampleSet set;
  Summary summary;
  L2Method l2;
  std::optional<double> temperature_c, power_w, energy_mj_per_launch, nvml_sm_clock_mhz;
  friend bool operator==(const MeasuredStats&, const MeasuredStats&) = default;
};

/// What the GPU stage made of one configuration.
struct GpuEvaluation {
  Status status = Status::Ok;
  std::string error;
  double verify_ms = 0.0;
  /// In the worker: loading the module and resolving launches, and the whole evaluation
  /// (load, verification, sampling, readings, unload): where a configuration's time goes.
  double load_ms = 0.0, stage_ms = 0.0;
  /// In a worker: how long it waited between its previous answer and this request.
  double idle_before_ms = 0.0;
  std::optional<MeasuredStats> stats;  ///< set when status is Ok
  /// What the loaded configuration costs the GPU; set once its launches were resolved, for a
  /// failure after that too (a launch refused for its resources, a resource restriction).
  std::optional<KernelResources> resources;
  bool context_lost = false;  ///< a sticky error: this process can do no more GPU work
  /// Outputs verified against the default configuration's had no expected output yet, and
  /// this configuration's became it (the first that ran correctly: normally the default).
  /// A restarted worker must be given this configuration first to learn the same answer.
  bool defined_expected = false;
  /// What the verifier outside cutune (ExternalVerifier: the package's observers) observed on
  /// this configuration's outputs; empty without one.
  ObservedValues observed;
  double median_ms() const { return stats ? stats->summary.median : 0.0; }
  const std::vector<double>& samples_ms() const;
  friend bool operator==(const GpuEvaluation&, const GpuEvaluation&) = default;
};

}  // namespace cutune
