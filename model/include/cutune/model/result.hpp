#pragma once
// One evaluated configuration, and what a tuning declared, as plain values: what the runner
// makes of a GPU worker's answer, what an import makes of a Kernel Tuner file's entry, what a
// simulation makes of a recording, and what the store gives back from its rows. Only the store
// turns them into rows (db/store); the files have their own writers (db/formats, report).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cutune/model/configuration.hpp"
#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/model/status.hpp"
#include "cutune/model/value.hpp"

namespace cutune {

/// A configuration's values by parameter name, in declared order, as a DB row or a file keeps
/// them: bools, ints and floats as they are, any other value of a space as its str()
/// (Configuration::to_json's rule); None and lists only where a file wrote null or an array.
using ParameterValues = std::vector<std::pair<std::string, Value>>;

/// The values `c` is kept with (the rule above).
ParameterValues stored_values(const Configuration& c);
/// The members of a JSON object (a DB row's or a file's configuration) as values: bool, integer,
/// float and string as such, null as None, an array as a list (an object, which no parameter
/// value is, as its text).
ParameterValues parameter_values(const nlohmann::ordered_json& object);

/// `values` as a configuration of `space`, checked (ARCHITECTURE decision 9: DB values are
/// never code): every declared parameter present with a value its list declares, of the same
/// type (a string never stands for a number, nor a number for a bool), no undeclared
/// parameter, and no restriction violated. Throws InputError saying what is wrong (the
/// parameter and value); the caller adds where the values came from.
Configuration checked_configuration(const Space& space, const ParameterValues& values);

/// The configuration a result is of: its key (Kernel Tuner's "128,4,1"), its values, and the
/// Configuration itself where a space is known (made in this process). One read from a DB or a
/// file without a space keeps the key and the values; configuration_in(space) checks them.
class ResultConfig {
 public:
  ResultConfig() = default;
  /// Of a known space. Implicit: a Configuration is a result's configuration.
  ResultConfig(const Configuration& c);  // NOLINT(google-explicit-constructor)
  /// Read where no space is known.
  ResultConfig(std::string key, ParameterValues values) : key_(std::move(key)), values_(std::move(values)) {}

  const std::string& key() const { return key_; }
  const ParameterValues& values() const { return values_; }
  /// The Configuration it was made from; none when it was read without a space.
  const std::optional<Configuration>& configuration() const { return configuration_; }
  /// As a configuration of `space`: its own when it is of that space, else its values checked
  /// (checked_configuration).
  Configuration configuration_in(const Space& space) const;
  /// {"block_size_x":128,...}: Configuration::to_json where the space is known, else the values
  /// in their order (null for None, an array for a list).
  nlohmann::ordered_json to_json() const;

  /// Same key and the same values, each of the same type: how the configuration is kept,
  /// whether or not a space is known.
  friend bool operator==(const ResultConfig& a, const ResultConfig& b);

 private:
  std::string key_;
  ParameterValues values_;
  std::optional<Configuration> configuration_;
};

/// The statistics of a measured result as they are kept with it: MeasuredStats less the
/// samples (the result's own) and less the SM clock after each sample (kept as their median
/// and minimum). summary.median is the result's median; summary.rel_stddev is stddev / mean.
struct ResultStats {
  MeasurementLevel level = MeasurementLevel::Screening;
  Summary summary;
  StopReason stop_reason = StopReason::none;
  double measure_ms = 0.0;  ///< SampleSet::wall_ms: the sampling's wall time
  L2Method l2;
  SampleTimer timer = SampleTimer::Events;
  std::size_t timer_fallbacks = 0;
  std::optional<double> sm_clock_mhz, sm_clock_min_mhz;  ///< median and minimum over the samples
  std::vector<double> discarded_ms;
  std::size_t back_offs = 0, block_timeouts = 0;
  std::optional<double> nvml_sm_clock_mhz, temperature_c, power_w, energy_mj_per_launch;

  static ResultStats of(const MeasuredStats& stats);
  friend bool operator==(const ResultStats&, const ResultStats&) = default;
};

/// Where a result came from.
enum class Provenance {
  Measured,   ///< timed by cutune on a GPU
  Imported,   ///< read from a results file (Kernel Tuner cache, T4, KTT)
  Simulated,  ///< answered from a recording (tune --simulate)
};
const char* provenance_name(Provenance p);  ///< "measured", "imported", "simulated"

/// A result timed by cutune.
struct MeasuredOrigin {
  std::optional<ResultStats> stats;  ///< none for a failure
  /// Loading the module and resolving its launches in the worker: a cost no other field holds.
  std::optional<double> load_ms;
  /// What the configuration costs the GPU (registers, local and shared memory, occupancy);
  /// none where it was not loaded or was stored before they were kept.
  std::optional<KernelResources> resources;
  /// What observers gave for it (Kernel Tuner's observer results: an AccuracyObserver's error,
  /// a RegisterObserver's num_regs, NVML readings under Kernel Tuner's names); empty for most.
  ObservedValues observed;
  friend bool operator==(const MeasuredOrigin&, const MeasuredOrigin&) = default;
};

/// A result read from a results file: what the file said beyond the samples and the costs.
struct ImportedOrigin {
  std::optional<double> mean_ms;              ///< Kernel Tuner's "time" (the mean)
  std::optional<double> ci_low_ms, ci_high_ms;  ///< the median's interval, where the file had it
  /// Every other field of the file's entry (observers, metrics, benchmark/strategy/framework
  /// times, timestamp), as the file wrote it: uninterpreted data, so that an export gives it back.
  nlohmann::ordered_json file_fields = nlohmann::ordered_json::object();
  friend bool operator==(const ImportedOrigin&, const ImportedOrigin&) = default;
};

/// A result answered from a recording, on the simulated clock.
struct SimulatedOrigin {
  double cost_s = 0.0;  ///< the recording's whole cost of the evaluation
  /// Its benchmark part; none in results simulated before it was kept (then cost_s is not split).
  std::optional<double> benchmark_s;
  friend bool operator==(const SimulatedOrigin&, const SimulatedOrigin&) = default;
};

/// One evaluated configuration.
struct Result {
  ResultConfig config;
  Status status = Status::Ok;
  std::string error;               ///< one line for a failure ("" if ok)
  double median_ms = 0.0;          ///< 0 when not measured
  std::vector<double> samples_ms;  ///< every timed launch (a NaN/inf sample reads back as NaN)
  double compile_ms = 0.0, verify_ms = 0.0;
  std::string started_at, finished_at;  ///< ISO 8601 UTC
  std::variant<MeasuredOrigin, ImportedOrigin, SimulatedOrigin> origin;
  /// The problem's metrics (cutune.Metrics, Kernel Tuner's `metrics`) evaluated for this
  /// configuration and its median, in declaration order; empty for failures. A metric that
  /// could not be evaluated for it is absent.
  std::vector<std::pair<std::string, double>> metrics;
  /// The run that stored it, as read back (0: none); Run::add records its own.
  std::int64_t run_id = 0;
  /// The device that measured it, as read back (0 before it is stored); Run::add records its run's.
  std::int64_t device_id = 0;

  Provenance provenance() const { return static_cast<Provenance>(origin.index()); }
  /// The origin's details; null for another provenance.
  const MeasuredOrigin* measured() const { return std::get_if<MeasuredOrigin>(&origin); }
  const ImportedOrigin* imported() const { return std::get_if<ImportedOrigin>(&origin); }
  const SimulatedOrigin* simulated() const { return std::get_if<SimulatedOrigin>(&origin); }
  /// The measured statistics; null when not measured by cutune or failed.
  const ResultStats* stats() const;

  /// Energy per launch (NVML) where it was measured.
  std::optional<double> energy_mj_per_launch() const;
  /// The median's interval where it is known (measured, or given by the imported file).
  std::optional<std::pair<double, double>> interval_ms() const;
  /// The mean of the samples where it is known.
  std::optional<double> mean_ms() const;
  /// The figure it ranks by for `objective`: its median (time), its energy per launch (energy)
  /// or the metric's value; none for a failure, a missing energy reading or a metric that could
  /// not be evaluated or is not finite.
  std::optional<double> objective_value(const Objective& objective) const;

  friend bool operator==(const Result&, const Result&) = default;
};

/// A finalist of a tuning: re-measured thoroughly, back to back with the others.
struct Finalist {
  ResultConfig config;
  bool is_default = false;
  bool tied = false;           ///< its interval overlaps the winner's (the winner too)
  double screening_ms = 0.0;   ///< its median while searching
  /// The objective at the thorough median (a metric's value; time: the median); none when not finite.
  std::optional<double> objective_value;
  ResultStats stats;           ///< the thorough measurement (stats.summary.median: its median)
  std::vector<double> samples_ms;
  friend bool operator==(const Finalist&, const Finalist&) = default;
};

/// What a tuning declared for one objective: the winning configuration, how, and over whom.
struct TunedWinner {
  ResultConfig config;
  double median_ms = 0.0;
  double default_ms = 0.0;  ///< the default's median in the same run (0 if failed)
  Objective objective;      ///< with its direction
  /// ms for time, mJ per launch for energy, the metric's value; 0 with objective time: the median.
  double objective_value = 0.0;
  /// Separated, tie, or screening for no re-measurement (a single candidate, or imported).
  Verdict verdict = Verdict::Screening;
  std::vector<Finalist> finalists;  ///< the re-measured finalists, winner first
  friend bool operator==(const TunedWinner&, const TunedWinner&) = default;
};

}  // namespace cutune
