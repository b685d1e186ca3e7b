#pragma once
// The SQLite store: devices, kernels, problems, runs, measurements, winners. Versioned
// schema (PRAGMA user_version), every measurement committed as it is made (WAL), unique
// keys on canonical identities so an interrupted run resumes by skipping stored work.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/status.hpp"

struct sqlite3;

namespace cutune::db {

/// Now as ISO 8601 UTC with milliseconds: "2026-11-21T23:59:01.123Z". Every timestamp the
/// store writes has this form, so timestamps sort as text.
std::string utc_now_iso();

struct Measurement {
  std::string config_key;          ///< "128,4,1"
  std::string config_json;         ///< {"block_size_x":128,...}
  Status status = Status::Ok;
  std::string error;               ///< one line for failures ("" if ok)
  double median_ms = 0.0;          ///< NaN-free: 0 when not measured
  std::vector<double> samples_ms;  ///< every timed launch (a NaN/inf sample reads back as NaN)
  double compile_ms = 0.0;
  double verify_ms = 0.0;
  std::string started_at, finished_at;  ///< ISO 8601 UTC
  /// Statistics and conditions of the samples as a JSON object (mean_ms, min_ms, stddev_ms,
  /// ci_low_ms, ci_high_ms, stop_reason, sm_clock_mhz, temperature_c, power_w, ...);
  /// "{}" when there are none (failures, imported data).
  std::string stats_json = "{}";
  /// The problem's metrics (cutune.Metrics, Kernel Tuner's `metrics`) evaluated for this
  /// configuration and its median, in declaration order; empty for failures. A metric that
  /// could not be evaluated for it is absent.
  std::vector<std::pair<std::string, double>> metrics;
};

/// The JSON object stored with a measurement (Measurement::stats_json) and with each
/// finalist of a winner: the statistics of its samples and the conditions they were taken
/// in ("level", "samples", "mean_ms", ..., "stop_reason", "l2", "timer", "sm_clock_mhz",
/// "temperature_c", "power_w", "energy_mj_per_launch" when measured).
std::string stats_json(const MeasuredStats& stats);

struct Winner {
  std::string kernel;
  std::string problem_key;   ///< "n=268435456"
  std::string gpu_model;     ///< DeviceIdentity::model_key()
  std::string config_key;
  std::string config_json;
  double median_ms = 0.0;
  double default_ms = 0.0;   ///< the template default's median in the same run (0 if failed)
  std::int64_t run_id = 0;
  std::string updated_at;
  /// "separated": the thorough re-measurement separated the winner's median interval
  /// from every other finalist's; "tie": it did not (finalists_json says with whom);
  /// "screening": no re-measurement (a single candidate, or imported).
  std::string verdict = "screening";
  std::string finalists_json = "[]";  ///< the re-measured finalists, winner first
  /// What it won for: "time" (median), "energy" (per launch) or a metric's name; one
  /// winner per objective.
  std::string objective = "time";
  double objective_value = 0.0;       ///< ms for time, mJ per launch for energy, the metric's value
  bool higher_is_better = false;      ///< the direction it won in
};

/// What set_winner stores for one (kernel, problem, GPU model, objective).
struct WinnerChoice {
  std::string config_key, config_json;
  double median_ms = 0.0;
  double default_ms = 0.0;            ///< the default's median in the same run (0 if failed)
  std::string objective = "time";     ///< "time", "energy" or a metric's name
  double objective_value = 0.0;       ///< 0 with objective "time": the median
  std::string verdict = "screening";  ///< "screening", "separated" or "tie" (see Winner)
  std::string finalists_json = "[]";
  bool higher_is_better = false;      ///< the objective's direction (false for time and energy)
};

struct WinnerFilter {
  /// "" = any. kernel and problem match exactly; gpu is a case-insensitive substring of
  /// the model key ("h200", "sm_90", "NVIDIA H200/sm_90"), or of its slug ("nvidia-h200").
  std::string kernel, gpu, problem;
  std::string objective;  ///< "" = any
};

/// One tuning session, as begin_run/end_run recorded it.
struct RunInfo {
  std::int64_t id = 0;
  std::int64_t kernel_id = 0, problem_id = 0, device_id = 0;
  std::string tool_version, strategy;
  std::uint64_t seed = 0;
  std::string command;
  std::string started_at;
  std::string finished_at;  ///< "" while running, or when the run was interrupted
};

/// A (kernel, problem, device) that has measurements, for exports.
struct MeasurementTarget {
  std::int64_t kernel_id = 0, problem_id = 0, device_id = 0;
  std::string kernel, problem_key, problem_json, gpu_model;
  std::size_t count = 0;  ///< measurements stored
};

/// One connection to a cutune DB. Move-only: it owns the sqlite3 connection, which is
/// closed exactly once, by the destructor of whichever Store holds it last; a copy would
/// either close it twice or need a second connection with its own transactions and locks,
/// which is a different thing (open the file again for that).
class Store {
 public:
  /// Opens (creating when `create`) the DB. Throws InputError naming the path when it
  /// cannot be opened, is not a cutune DB / is corrupt, or has a newer schema version.
  /// create=false opens read-only (SQLITE_OPEN_READONLY): it never creates, migrates or
  /// writes anything, and refuses an empty file. A refused file is left byte for byte.
  static Store open(const std::filesystem::path& path, bool create);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  static constexpr int kSchemaVersion = 3;
  int schema_version() const;
  const std::filesystem::path& path() const { return path_; }
  bool read_only() const { return read_only_; }

  /// Devices are keyed by uuid; a device without one (uuid "") by (name, compute
  /// capability, SM count, memory size). An existing row gets its other fields (clocks,
  /// driver, NVRTC, model key) updated and keeps its id.
  std::int64_t upsert_device(const DeviceIdentity& device);
  std::optional<DeviceIdentity> device(std::int64_t device_id) const;
  /// Kernels are keyed by (name, source hash): an edited source is a new kernel, so its
  /// measurements are not mistaken for the old one's.
  std::int64_t upsert_kernel(const std::string& name, const std::string& source_hash);
  /// Keyed by (kernel, problem key); an existing problem keeps its stored JSON.
  std::int64_t upsert_problem(std::int64_t kernel_id, const std::string& problem_key,
                              const std::string& problem_json);
  std::int64_t begin_run(std::int64_t kernel_id, std::int64_t problem_id,
                         std::int64_t device_id, const std::string& tool_version,
                         const std::string& strategy, std::uint64_t seed,
                         const std::string& command);
  void end_run(std::int64_t run_id);
  std::optional<RunInfo> run(std::int64_t run_id) const;

  /// Inserts and commits one measurement. Unique on (kernel, problem, device, config);
  /// a second insert of the same key is ignored and returns false. run_id <= 0: no run
  /// (imported data). Throws std::invalid_argument for a NaN median/compile/verify time.
  bool add_measurement(std::int64_t run_id, std::int64_t kernel_id, std::int64_t problem_id,
                       std::int64_t device_id, const Measurement& m);
  std::optional<Measurement> find_measurement(std::int64_t kernel_id, std::int64_t problem_id,
                                              std::int64_t device_id,
                                              const std::string& config_key) const;
  std::vector<Measurement> measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                        std::int64_t device_id) const;

  /// Replaces the winner of (kernel, problem, the device's GPU model, objective).
  /// run_id <= 0: no run. Throws for an unknown device or objective or verdict.
  void set_winner(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                  std::int64_t run_id, const WinnerChoice& winner);
  std::vector<Winner> winners(const WinnerFilter& filter = {}) const;

  /// The targets with measurements whose kernel, problem and GPU match `filter` as for
  /// winners() (objective ignored), ordered by kernel, problem, GPU model.
  std::vector<MeasurementTarget> measurement_targets(const WinnerFilter& filter) const;

  /// Runs `body` as one transaction: committed when it returns true, rolled back (nothing
  /// stored) when it returns false or throws. The store's own writes nest inside it.
  void transaction(const std::function<bool()>& body);

  /// PRAGMA integrity_check == "ok".
  bool integrity_ok() const;

 private:
  explicit Store(sqlite3* db);
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;  ///< for error messages
  bool read_only_ = false;
};

}  // namespace cutune::db
