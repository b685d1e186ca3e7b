#pragma once
// The SQLite store: devices, kernels, problems, runs, measurements, winners. Versioned
// schema (PRAGMA user_version), every measurement committed as it is made (WAL), unique
// keys on canonical identities so an interrupted run resumes by skipping stored work.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/model/result.hpp"
#include "cutune/model/shape_selector.hpp"
#include "cutune/model/status.hpp"

struct sqlite3;

namespace cutune::db {

/// Now as ISO 8601 UTC with milliseconds: "2026-11-21T23:59:01.123Z". Every timestamp the
/// store writes has this form, so timestamps sort as text.
std::string utc_now_iso();
/// `t` in utc_now_iso's form.
std::string utc_iso(std::chrono::system_clock::time_point t);

/// A stored measurement is a Result (model/result.hpp): the store turns it into a row of
/// `measurements` and back, and is the only place that knows the row's columns and their JSON.
using Measurement = Result;

/// The figure a stored measurement ranks by for `objective` (Result::objective_value): what
/// tune ranks by and what merge recomputes winners by.
std::optional<double> objective_value(const Measurement& m, const Objective& objective);

/// The statistics as the store keeps them with a measurement and with each finalist of a
/// winner ("level", "samples", "mean_ms", ..., "stop_reason", "l2", "timer", "sm_clock_mhz",
/// "temperature_c", "power_w", "energy_mj_per_launch" when measured), for a document that
/// embeds the same object (tune --report).
nlohmann::ordered_json stats_object(const ResultStats& stats);
nlohmann::ordered_json stats_object(const MeasuredStats& stats);
/// stats_object as text.
std::string stats_json(const MeasuredStats& stats);
/// The finalists as the store keeps them with a winner (each: config_key, config, is_default,
/// tied_with_winner, screening_median_ms, median_ms, objective_value, stats, samples_ms), for a
/// document that embeds the same array (tune --report).
nlohmann::ordered_json finalists_array(const std::vector<Finalist>& finalists);

/// What set_winner stores for one (kernel, problem, GPU model, objective).
using WinnerChoice = TunedWinner;

/// A stored winner: what was declared, and for which kernel, problem and GPU model, by which run.
struct Winner : TunedWinner {
  std::string kernel;
  std::string problem_key;   ///< "n=268435456"
  std::string gpu_model;     ///< DeviceIdentity::model_key()
  std::int64_t run_id = 0;
  std::string updated_at;
  /// What the winning configuration costs the GPU, from its stored measurement on the device
  /// that measured it; none for an import, a simulation, or a row stored before they were kept.
  std::optional<KernelResources> resources;
};

struct WinnerFilter {
  /// "" = any. kernel and problem match exactly; gpu is a case-insensitive substring of
  /// the model key ("h200", "sm_90", "NVIDIA H200/sm_90"), or of its slug ("nvidia-h200").
  std::string kernel, gpu, problem;
  std::string objective;  ///< an objective's name as the user typed it; "" = any
};

/// One tuning session, as Store::begin_run and Run::end recorded it.
struct RunInfo {
  std::int64_t id = 0;
  std::int64_t kernel_id = 0, problem_id = 0, device_id = 0;
  std::string tool_version, strategy;
  std::uint64_t seed = 0;
  std::string command;
  std::string started_at;
  std::string finished_at;  ///< "" while running, or when the run was interrupted
};

/// What Store::begin_run records: the run's target (device, kernel, problem) and how the
/// run was made.
struct RunSpec {
  DeviceIdentity device;
  std::string kernel;        ///< the kernel's name
  /// Its __global__ function's name without namespace or template arguments ("" unknown): a
  /// prior finds the kernel by either name (measurement_targets), so a tuning of another
  /// problem file of the same function, or of Kernel Tuner's cache of it, finds this one.
  std::string kernel_function;
  std::string source_hash;   ///< its identity: an edited source is a new kernel
  std::string problem_key;   ///< "n=268435456"
  std::string problem_json;  ///< kept when the problem is new
  std::string tool_version;  ///< cutune's version
  std::string strategy;      ///< "random", "import", ...
  std::uint64_t seed = 0;
  std::string command;       ///< the command line
};

/// A (kernel, problem, device) that has measurements, for exports.
struct MeasurementTarget {
  std::int64_t kernel_id = 0, problem_id = 0, device_id = 0;
  std::string kernel, problem_key, problem_json, gpu_model;
  std::string kernel_function;  ///< "" when the store does not know it
  std::size_t count = 0;  ///< measurements stored
};

/// One cell of a cross matrix (Store::put_cross_row): a configuration measured at a problem.
struct CrossCell {
  std::string problem_key;
  ResultConfig config;
  std::optional<double> median_ms;  ///< none: it failed there (status says how)
  Status status = Status::Ok;
  std::string gpu_model, measured_at;  ///< filled in by the store when read
};

/// Who tunes a (kernel, problem, GPU model, objective) that an application found no winner for
/// (cutune::loader's on_miss): one claim per key, so the processes of one application (MPI
/// ranks, a job array) that miss the same winner tune it once.
struct TuningClaim {
  std::string kernel, problem_key, gpu_model, objective;  ///< the key
  std::int64_t holder_pid = 0;  ///< the process that claimed it
  std::string holder_host;      ///< its host name
  std::int64_t tuner_pid = 0;   ///< the tuning process it started; 0 until started
  std::string started_at, expires_at;  ///< utc_now_iso form; filled in by the store
  /// The same holder (pid and host): the caller holds the claim the store answered with.
  bool held_by(const TuningClaim& other) const {
    return holder_pid == other.holder_pid && holder_host == other.holder_host;
  }
};

class Store;

/// A run in progress, from Store::begin_run: it holds the ids of its target and its own,
/// and makes the writes a run makes. It refers to its Store, which must outlive it.
/// Move-only: a run ends once, so two handles to it would be one too many.
class Run {
 public:
  Run(Run&&) noexcept = default;
  Run& operator=(Run&&) noexcept = default;
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  std::int64_t id() const { return id_; }
  std::int64_t kernel_id() const { return kernel_id_; }
  std::int64_t problem_id() const { return problem_id_; }
  std::int64_t device_id() const { return device_id_; }

  /// Everything stored for the target (by earlier runs too), oldest first: what a resumed
  /// run skips.
  std::vector<Measurement> measurements() const;
  /// Everything stored for the target's kernel and problem on any GPU of its device's model
  /// (Store::model_measurements): what a tuning reuses unless told to keep to its own GPU.
  std::vector<Measurement> model_measurements() const;
  /// Inserts and commits one measurement of the target, recorded as this run's. Unique on
  /// (kernel, problem, device, config): a configuration already stored, by any run, is
  /// ignored and returns false. Throws std::invalid_argument for a NaN median/compile/verify
  /// time, std::logic_error once the run has ended.
  bool add(const Measurement& m);
  /// Replaces the winner of (kernel, problem, the device's GPU model, objective), recorded
  /// as this run's. Throws std::logic_error once the run has ended.
  void set_winner(const WinnerChoice& winner);
  /// Records the run's end (RunInfo::finished_at). Throws std::logic_error the second time.
  void end();
  bool ended() const { return ended_; }

 private:
  friend class Store;
  Run(Store& store, std::int64_t id, std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id)
      : store_(&store), id_(id), kernel_id_(kernel_id), problem_id_(problem_id), device_id_(device_id) {}
  void require_open(const char* what) const;

  Store* store_;
  std::int64_t id_, kernel_id_, problem_id_, device_id_;
  bool ended_ = false;
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
  /// writes anything, and refuses an empty file. A refused file is left byte for byte. A DB
  /// of an older schema is read through a copy in memory, migrated there (the file is left as
  /// it is; the copy costs memory as large as the file).
  static Store open(const std::filesystem::path& path, bool create);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  static constexpr int kSchemaVersion = 6;
  int schema_version() const;
  const std::filesystem::path& path() const { return path_; }
  bool read_only() const { return read_only_; }

  /// Starts a run: the device, kernel and problem are upserted (the one place that does it
  /// for a run) and the run recorded as started now. Every write of a tuning, a simulation
  /// or an import goes through the returned Run.
  Run begin_run(const RunSpec& spec);
  std::optional<RunInfo> run(std::int64_t run_id) const;
  /// The runs of a target (kernel, problem, device), oldest first: finished, interrupted and
  /// in progress (finished_at "" for both of the last).
  std::vector<RunInfo> runs(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id) const;

  /// Devices are keyed by uuid; a device without one (uuid "") by (name, compute
  /// capability, SM count, memory size). An existing row gets its other fields (clocks,
  /// driver, NVRTC, model key) updated and keeps its id.
  std::int64_t upsert_device(const DeviceIdentity& device);
  std::optional<DeviceIdentity> device(std::int64_t device_id) const;
  /// Kernels are keyed by (name, source hash): an edited source is a new kernel, so its
  /// measurements are not mistaken for the old one's.
  /// The kernel's row; `function` (its __global__ function's bare name) is stored when the row
  /// has none yet and the store is writable.
  std::int64_t upsert_kernel(const std::string& name, const std::string& source_hash,
                             const std::string& function = "");
  /// Keyed by (kernel, problem key); an existing problem keeps its stored JSON.
  std::int64_t upsert_problem(std::int64_t kernel_id, const std::string& problem_key,
                              const std::string& problem_json);

  std::optional<Measurement> find_measurement(std::int64_t kernel_id, std::int64_t problem_id,
                                              std::int64_t device_id,
                                              const std::string& config_key) const;
  std::vector<Measurement> measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                        std::int64_t device_id) const;
  /// The kernel's and problem's measurements on every device of `device_id`'s GPU model
  /// (DeviceIdentity::model_key: name and architecture): that device's first, then each other
  /// device's in the order the DB first saw it, each oldest first. A configuration measured
  /// on several of them comes once, as the first of them has it. Winners are per model and
  /// Kernel Tuner's cache is per GPU name, so a second GPU of the model need not measure again
  /// what the first did (shards on several GPUs, a session on another machine of the model).
  std::vector<Measurement> model_measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                              std::int64_t device_id) const;

  std::vector<Winner> winners(const WinnerFilter& filter = {}) const;

  /// The targets with measurements whose kernel, problem and GPU match `filter` as for
  /// winners() (objective ignored), ordered by kernel, problem, GPU model. With
  /// `or_function`, filter.kernel matches the kernel's function name too (a prior: the same
  /// kernel under another name); without, only cutune's name (exports and queries name one).
  std::vector<MeasurementTarget> measurement_targets(const WinnerFilter& filter, bool or_function = false) const;

  /// Runs `body` as one transaction: committed when it returns true, rolled back (nothing
  /// stored) when it returns false or throws. The store's own writes nest inside it.
  void transaction(const std::function<bool()>& body);

  /// What merge_from did.
  struct MergeStats {
    std::size_t devices_added = 0, kernels_added = 0, problems_added = 0, runs_added = 0;
    std::size_t measurements_added = 0;
    std::size_t measurements_present = 0;  ///< already here (same target and configuration): kept
    std::size_t winners_written = 0;       ///< winners added or changed
  };
  /// Adds everything of `source` to this DB, as one transaction, and returns what it added.
  /// `source` may be this DB's file (opened again) or this very store: it is read whole first.
  /// - Identities: devices by uuid, else by (name, compute capability, SM count, memory);
  ///   kernels by (name, source hash); problems by (kernel, key); runs by (target, tool
  ///   version, strategy, seed, command, start time). A device seen in both keeps the
  ///   earliest first_seen_at and the latest last_seen_at; a run finished in `source` and
  ///   unfinished here gets its finished_at.
  /// - Measurements: unique per (target, configuration); the first stored wins (this DB's,
  ///   then the sources in the order merged), so nothing is measured twice in the result.
  ///   Each keeps its run.
  /// - Winners, per (kernel, problem, GPU model, objective) that has one on either side,
  ///   from the merged measurements of every device of that model: the best ok value for
  ///   the objective (time: median; energy: per launch; a metric: its value, in its
  ///   direction), equal values in the order of the keys' text. A stored winner (this DB's
  ///   first, then the source's) is kept as it is when the best is its own configuration at
  ///   the median it was declared with, or is among the finalists it was re-measured against
  ///   with the screening median they had: its verdict was then declared over the best there
  ///   is. Otherwise the best becomes a screening winner (nothing was re-measured over the
  ///   merged set). A group without any ok measurement keeps its stored winner.
  /// Merging the same source again, or a DB into itself, changes no row.
  MergeStats merge_from(const Store& source);

  /// Shape sweeps (selector_rows.cpp). One row of a cross matrix: the configurations measured
  /// together at one problem on one device, replacing what was stored for them there.
  void put_cross_row(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                     const std::vector<CrossCell>& cells);
  /// Every cross-matrix cell of kernel `kernel` (by name) on GPUs of model `gpu_model`
  /// (DeviceIdentity::model_key), by problem key then configuration key.
  std::vector<CrossCell> cross_cells(const std::string& kernel, const std::string& gpu_model) const;
  /// Replaces the selector of (kernel, GPU model, objective).
  void set_selector(const ShapeSelector& selector);
  /// The selectors whose kernel, GPU model and objective match `filter` as for winners().
  std::vector<ShapeSelector> selectors(const WinnerFilter& filter = {}) const;

  /// Tunings on first use (claim_rows.cpp). Takes the claim of `claim`'s key for its holder,
  /// expiring `expires_in_s` from now, unless another holder's unexpired claim is stored; an
  /// expired one is replaced. One write transaction (BEGIN IMMEDIATE), so of several processes
  /// claiming at once exactly one wins. Returns the claim stored afterwards: the caller won
  /// when it is held_by(claim).
  TuningClaim claim_tuning(const TuningClaim& claim, double expires_in_s);
  /// Records the tuning process of a claim `claim`'s holder holds (no-op otherwise).
  void set_claim_tuner(const TuningClaim& claim, std::int64_t tuner_pid);
  /// Deletes the claim of `claim`'s key if `claim`'s holder holds it; true when it did.
  bool release_tuning_claim(const TuningClaim& claim);
  /// The stored claim of `key`'s key (expired or not); none when nobody claimed it.
  std::optional<TuningClaim> tuning_claim(const TuningClaim& key) const;

  /// PRAGMA integrity_check == "ok".
  bool integrity_ok() const;

 private:
  friend class Run;
  explicit Store(sqlite3* db);
  /// The rows behind Run, by id.
  std::int64_t insert_run(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                          const RunSpec& spec);
  void finish_run(std::int64_t run_id);
  bool insert_measurement(std::int64_t run_id, std::int64_t kernel_id, std::int64_t problem_id,
                          std::int64_t device_id, const Measurement& m);
  void write_winner(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                    std::int64_t run_id, const WinnerChoice& winner);

  sqlite3* db_ = nullptr;
  std::filesystem::path path_;  ///< for error messages
  bool read_only_ = false;
};

}  // namespace cutune::db
