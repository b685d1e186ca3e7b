#pragma once
// The SQLite store: devices, kernels, problems, runs, measurements, winners. Versioned
// schema (PRAGMA user_version), every measurement committed as it is made (WAL), unique
// keys on canonical identities so an interrupted run resumes by skipping stored work.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/device_identity.hpp"

struct sqlite3;

namespace cutune::db {

/// Kernel Tuner's invalidity values, plus ok.
enum class Status { Ok, Compile, Runtime, Correctness, Constraints, Timeout };
const char* status_name(Status s);               ///< "ok", "compile", "runtime", ...
std::optional<Status> parse_status(std::string_view name);

struct Measurement {
  std::string config_key;          ///< "128,4,1"
  std::string config_json;         ///< {"block_size_x":128,...}
  Status status = Status::Ok;
  std::string error;               ///< one line for failures ("" if ok)
  double median_ms = 0.0;          ///< NaN-free: 0 when not measured
  std::vector<double> samples_ms;  ///< every timed launch
  double compile_ms = 0.0;
  double verify_ms = 0.0;
  std::string started_at, finished_at;  ///< ISO 8601 UTC
};

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
};

struct WinnerFilter {
  std::string kernel, gpu, problem;  ///< "" = any; gpu matches name or model key (substring)
};

class Store {
 public:
  /// Opens (creating when `create`) the DB. Throws InputError naming the path when it
  /// cannot be opened, is not a cutune DB / is corrupt, or has a newer schema version.
  /// A read-only open never creates or migrates anything.
  static Store open(const std::filesystem::path& path, bool create);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  static constexpr int kSchemaVersion = 1;
  int schema_version() const;

  std::int64_t upsert_device(const DeviceIdentity& device);
  std::int64_t upsert_kernel(const std::string& name, const std::string& source_hash);
  std::int64_t upsert_problem(std::int64_t kernel_id, const std::string& problem_key,
                              const std::string& problem_json);
  std::int64_t begin_run(std::int64_t kernel_id, std::int64_t problem_id,
                         std::int64_t device_id, const std::string& tool_version,
                         const std::string& strategy, std::uint64_t seed,
                         const std::string& command);
  void end_run(std::int64_t run_id);

  /// Inserts and commits one measurement. Unique on (kernel, problem, device, config);
  /// a second insert of the same key is ignored and returns false.
  bool add_measurement(std::int64_t run_id, std::int64_t kernel_id, std::int64_t problem_id,
                       std::int64_t device_id, const Measurement& m);
  std::optional<Measurement> find_measurement(std::int64_t kernel_id, std::int64_t problem_id,
                                              std::int64_t device_id,
                                              const std::string& config_key) const;
  std::vector<Measurement> measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                        std::int64_t device_id) const;

  /// Replaces the winner of (kernel, problem, the device's GPU model).
  void set_winner(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                  std::int64_t run_id, const std::string& config_key,
                  const std::string& config_json, double median_ms, double default_ms);
  std::vector<Winner> winners(const WinnerFilter& filter = {}) const;

  /// PRAGMA integrity_check == "ok".
  bool integrity_ok() const;

 private:
  explicit Store(sqlite3* db);
  sqlite3* db_ = nullptr;
};

}  // namespace cutune::db
