#pragma once
// Kernel Tuner files <-> the store (`cutune import`, `cutune export`, `tune --cache`): one
// results file of either kind (cache or T4) read into a neutral form, and the mapping between
// one file entry (KtEntry) and one stored Measurement, both ways.
//
// The cache fields cutune adds beside Kernel Tuner's "time" (the mean) and "times", because
// cutune ranks by the median and declares winners over its interval: "time_median",
// "time_ci_low", "time_ci_high" (the median's 95% interval) and "time_samples" (how many
// samples), all in milliseconds. Kernel Tuner keeps fields it does not know and ignores
// them, so a file with them still resumes and simulates.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cutune/formats/kt_cache.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/configuration.hpp"
#include "cutune/model/device_identity.hpp"
#include "cutune/model/space.hpp"

namespace cutune::db::kt {

inline constexpr const char* kMedianField = "time_median";
inline constexpr const char* kCiLowField = "time_ci_low";
inline constexpr const char* kCiHighField = "time_ci_high";
inline constexpr const char* kSampleCountField = "time_samples";
/// Header field of a cache cutune wrote: the device's structured identity (to_json), so an
/// exported file imports back onto the same device row.
inline constexpr const char* kDeviceField = "cutune_device";
/// Header field of a cache cutune wrote for a kernel whose name is not its CUDA function's (a
/// BAT benchmark: kernel_name "convolution", this "convolution_kernel", the name Kernel Tuner's
/// own cache of it has), so that a prior matches either (search::KernelNames).
inline constexpr const char* kKernelFunctionField = "cutune_kernel_function";

/// Header field of a cache cutune wrote: the space's default configuration as {parameter:
/// value}, present when a tuning evaluates it before its strategy proposes anything (the
/// problem names it, or its output defines a correct one: runner::evaluates_default_first). A
/// replay of the file (tune --simulate, score) then evaluates it first too; without the field,
/// nothing goes before the strategy's proposals, as in a tuning of a Kernel Tuner script.
inline constexpr const char* kDefaultField = "cutune_default";

/// Where the store's problem JSON of an imported cache keeps the file's tune_params (an export
/// writes them back as its header's); not a problem variable.
inline constexpr const char* kImportedTuneParamsKey = "kt_tune_params";

/// The kKernelFunctionField of a header; "" when it has none (every file Kernel Tuner wrote:
/// its kernel_name is the function's).
std::string kernel_function(const KtCacheHeader& header);

/// The problem's variables a header's kProblemField names; none when it has no field (every file
/// Kernel Tuner wrote). Throws InputError naming `where` and the field when it is not an object
/// of integers.
std::map<std::string, std::int64_t> problem_field(const KtCacheHeader& header, const std::string& where);

/// Records a problem's variables in kProblemField (kt_cache.hpp); no field for a problem of none.
void set_problem_field(KtCacheHeader& header, const std::map<std::string, std::int64_t>& variables);

/// The variables of a problem as the store's JSON holds it (ProblemInstance::json, or an import's:
/// every integer field but ProblemSize and kImportedTuneParamsKey), parsed; none for anything but
/// an object.
std::map<std::string, std::int64_t> stored_problem_variables(const nlohmann::ordered_json& problem);

/// What one results file holds, whatever its kind.
struct ResultsFile {
  std::string format;            ///< "Kernel Tuner cache", "T4 1.0.0", "T4 1.1.0", "T4", "KTT 2.2.0 results"
  std::string device_name;       ///< "" when the file names none (T4 without metadata.device)
  /// The structured identity when the file carries one (kDeviceField); else name only.
  std::optional<DeviceIdentity> device;
  std::string kernel_name;       ///< "" for T4 (it names no kernel)
  /// The CUDA function's name where a cutune-written cache carries it beside cutune's name
  /// (kKernelFunctionField); "" otherwise (a Kernel Tuner cache's kernel_name is the function's).
  std::string kernel_function;
  nlohmann::ordered_json problem_size;  ///< null when the file has none
  /// The problem's variables where a cutune-written cache names them (kProblemField); else empty.
  std::map<std::string, std::int64_t> problem_variables;
  std::vector<std::string> param_names;
  nlohmann::ordered_json tune_params = nlohmann::ordered_json::object();  ///< cache only
  std::vector<KtEntry> entries;
};

/// Reads a Kernel Tuner cache (any generation, .json or .json.gz, open or closed), T4
/// results (1.0.0 or 1.1.0) or KTT's results (ktt.hpp), telling them apart by their
/// top-level fields. Throws
/// InputError (one line naming the file and field) for anything else.
ResultsFile read_results_file(const std::filesystem::path& path);

/// The device a file's "cutune_device" header describes (DeviceIdentity's to_json form).
/// Throws InputError naming `where` and the field when it is malformed.
DeviceIdentity device_from_json(const nlohmann::ordered_json& j, const std::string& where);

/// "2023-12-22 09:54:05.502007+00:00" (kt_timestamp) as the store's ISO form
/// "2023-12-22T09:54:05.502Z"; nullopt when it is not in that form.
std::optional<std::string> iso_of_kt_timestamp(const std::string& stamp);

/// JSON text as the store keeps it (nlohmann's dump: NaN as null), with what is not valid
/// UTF-8 (a lone surrogate, which Python's json reads, or raw bytes) replaced by U+FFFD where
/// dump() would throw (a fuzz finding: tests/fuzz/corpus/kt_files/finding-invalid-utf8).
std::string store_json(const nlohmann::ordered_json& j);

/// A parameter value as JSON: bool, int, float; anything else as its str().
nlohmann::ordered_json value_json(const Value& v);

/// The header of a cache for a kernel whose space cutune knows (tune --cache, export):
/// tune_params are the declared lists, objective [objective] (Kernel Tuner writes the list
/// it tuned for: ["time"], ["GFLOP/s"]) and the device's structured identity in kDeviceField.
KtCacheHeader cache_header(const std::string& kernel_name, const Space& space,
                           const std::vector<std::int64_t>& problem_size, const DeviceIdentity& device,
                           const std::string& objective = "time");
/// Records the space's default configuration in kDefaultField: for a tuning that evaluates it
/// first (a replay of the file then does the same).
void set_default_field(KtCacheHeader& header, const Space& space);

/// A file entry as an imported result. median_ms: "time_median" when the entry has it,
/// else the median of "times", else "time"; 0 for a failure. Its ImportedOrigin keeps Kernel
/// Tuner's mean, the interval when given, and every other field of the entry (observers,
/// metrics, benchmark/strategy/framework times). `config` is the caller's (of the space where
/// it knows one).
Measurement measurement_of_entry(const KtEntry& entry, ResultConfig config, const std::string& imported_at);

/// A stored measurement as a cache/T4 entry: "time" is Kernel Tuner's mean of the samples
/// (kt_mean), "times" the samples; the metrics as fields of their own names, as Kernel
/// Tuner's process_metrics adds them to a result (so a T4 file lists them as measurements); cutune's median, interval and sample count in the fields
/// above; params from the result's configuration in its order. Failures carry their status.
KtEntry entry_of_measurement(const Measurement& m);
/// The same with params from `config` itself (its to_json()).
KtEntry entry_of_measurement(const Measurement& m, const Configuration& config);

}  // namespace cutune::db::kt
