#pragma once
// What the report shows, read from a store into typed values: per target (kernel, problem,
// device) its evaluations in the order they were stored, what each cost and when it ended
// within its run. Private to cutune::report.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/report/report.hpp"

namespace cutune::report {

/// One stored measurement, as the charts need it.
struct Evaluation {
  std::string key;
  std::vector<std::pair<std::string, std::string>> parameters;  ///< name, value as written in the DB's JSON
  Status status = Status::Ok;
  double median_ms = 0.0;
  std::optional<double> ci_low_ms, ci_high_ms;  ///< the median's 95% interval, when stored
  std::size_t samples = 0;
  /// What evaluating it cost, seconds. A simulated evaluation has only its recorded total
  /// (compile + verification + benchmark of the recording), not split.
  double compile_s = 0, load_s = 0, verify_s = 0, sampling_s = 0, overhead_s = 0, recorded_s = 0;
  bool simulated = false;
  double end_s = 0.0;  ///< since its run's start, when it was stored (see RunView::clock)
  std::optional<double> energy_mj;
  std::optional<KernelResources> resources;  ///< what it costs the GPU, where it was kept
  std::int64_t run_id = 0;
  double cost_s() const { return compile_s + load_s + verify_s + sampling_s + overhead_s + recorded_s; }
  bool ok() const { return status == Status::Ok && median_ms > 0; }
};

/// How a run's time axis was made.
enum class Clock {
  Simulated,   ///< the recorded costs, summed in order (tune --simulate)
  Timestamps,  ///< the measurements' timestamps against the run's start
  SummedCost,  ///< no usable timestamps (all equal): the costs summed in order
};
const char* clock_name(Clock c);

struct RunView {
  std::int64_t id = 0;  ///< 0: measurements stored without a run
  std::string strategy, command, started_at, finished_at;
  std::uint64_t seed = 0;
  std::vector<std::size_t> evaluations;  ///< indices into TargetView::evaluations, in stored order
  Clock clock = Clock::SummedCost;
  double wall_s = 0.0;  ///< start to the last evaluation (or to the run's recorded end)
  bool serial_compile = false;  ///< compiles on the critical path (Kernel Tuner's imports), not in a pool
  std::string label() const;
};

struct TargetView {
  std::string kernel, problem, gpu_model, device_name;
  std::vector<Evaluation> evaluations;
  std::vector<RunView> runs;
  std::optional<db::Winner> winner;  ///< the time winner stored for the kernel, problem and GPU model
};

/// The targets matching the options, in the store's order (kernel, problem, GPU model).
/// Throws InputError when none matches or --run names no run.
std::vector<TargetView> collect_targets(const db::Store& store, const ReportOptions& options);

/// Every GPU model's ok medians for one kernel and problem, over all devices of the model
/// (the first stored per configuration), for the across-GPU matrix and --compare.
struct ModelMedians {
  std::string gpu_model;
  std::map<std::string, double> ok;                               ///< key -> median
  std::map<std::string, std::string> failed;                      ///< key -> status name
  std::map<std::string, std::pair<double, double>> intervals;     ///< key -> the median's interval
  /// The best ok median (equal medians: the smaller key); none without ok rows.
  std::optional<std::pair<std::string, double>> best() const;
  std::optional<double> median(const std::string& key) const;
  std::optional<std::pair<double, double>> interval(const std::string& key) const;
  std::optional<std::string> failure(const std::string& key) const;
};
std::vector<ModelMedians> medians_by_model(const db::Store& store, const std::string& kernel,
                                           const std::string& problem);

/// Seconds since the epoch of an ISO 8601 UTC timestamp as the store writes them
/// ("2026-11-21T23:59:01.123Z"); none for another form.
std::optional<double> parse_utc_s(const std::string& iso);

}  // namespace cutune::report
