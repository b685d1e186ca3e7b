#pragma once
// Kernel Tuner cache files: read every generation, write Kernel Tuner's own line layout.
//
// What Kernel Tuner 1.5.0 does (kernel_tuner/util.py; 0.4.5 to 1.4.0 the same layout):
//  - process_cache() creates the file with json.dumps(header, indent="")[:-3]: the header
//    one value per line, no indentation, ending in `"cache": {` with no newline;
//  - store_cache() appends one line per configuration: "\n" + json.dumps({key: entry})[1:-1]
//    + ",", so a crash leaves a file ending in ",";
//  - close_cache() replaces that last "," by "}\n}" (and leaves a file without entries open);
//  - read_cache()/correct_open_cache() accept an open file: strip it, drop one trailing
//    ",", append "}\n}".
// Errors: up to 1.3 the objective field holds the error's class name ("time":
// "InvalidConfig"); 1.4 and 1.5 write "__error__": "InvalidConfig" and no "time", and on
// reading mark an entry failed when any field holds one of the names.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cutune/db/store.hpp"

namespace cutune::db::kt {

/// Kernel Tuner's ErrorConfig class name written for a failed status: Compile
/// "CompilationFailedConfig", Runtime "RuntimeFailedConfig", Constraints "InvalidConfig";
/// Correctness and Timeout, which Kernel Tuner has no class for, "RuntimeFailedConfig" (the
/// exact status travels in "cutune_status"); Ok "".
const char* kt_error_name(Status s);

/// The status of one of Kernel Tuner's ErrorConfig class names ("ErrorConfig", the base
/// class, is a runtime failure); nullopt for any other string.
std::optional<Status> status_of_kt_error(std::string_view name);

/// One configuration of a cache file ("key": {...}). Times are Kernel Tuner's milliseconds.
struct KtEntry {
  std::string key;  ///< "128,alg_2,15,True,2.45" (as in the file; computed if empty on write)
  nlohmann::ordered_json params = nlohmann::ordered_json::object();  ///< name -> value
  Status status = Status::Ok;
  /// Read: the ErrorConfig name the file gave ("InvalidConfig", ...; "" when ok). Ignored on
  /// write, where kt_error_name(status) is written.
  std::string error;
  /// "time": the mean of `times_ms` (Kernel Tuner's np.average); NaN when absent or failed.
  double time_ms = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> times_ms;  ///< "times": every timed launch
  std::optional<double> compile_time_ms, verification_time_ms, benchmark_time_ms;
  std::optional<double> strategy_time_ms, framework_time_ms;
  std::string timestamp;  ///< "2023-12-22 09:54:05.502007+00:00" (kt_timestamp)
  /// Every other field, in file order: observers ("temperature"), metrics ("GFLOP/s"),
  /// cutune's own ("cutune_median", ...). "cutune_status" is not here: it is `status`.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  bool operator==(const KtEntry&) const;  ///< NaN equals NaN
};

/// Header field of a cache cutune wrote for a problem of named variables: {name: value}, as the
/// problem's key names them. A cache's problem_size is the launch's extent only, which may leave a
/// variable out (the matmul template's is [n, m], so runs at k=1024 and k=4096 share it): a
/// resumed file, a prior from the file and its import then tell the problems apart.
inline constexpr const char* kProblemField = "cutune_problem";

/// The fields of a cache file before "cache".
struct KtCacheHeader {
  std::optional<std::string> schema_version;  ///< only in the proposed cache format 1.0.0
  std::string device_name;
  std::string kernel_name;
  /// An int, a list of ints, or a string ("callable"); null when the file has none.
  nlohmann::ordered_json problem_size;
  std::vector<std::string> tune_params_keys;  ///< the order of the values in a key
  nlohmann::ordered_json tune_params = nlohmann::ordered_json::object();  ///< name -> [values]
  /// "time" (up to 1.3) or ["time", ...] (1.4 on: always a list); null when absent.
  nlohmann::ordered_json objective;
  /// Any other top-level field, kept and written back before "cache".
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  /// The objective as a list ([] when absent).
  std::vector<std::string> objectives() const;
  bool operator==(const KtCacheHeader&) const;
};

/// How the file ended. Open: no closing "}\n}" (a run in progress, a crash between lines,
/// or a run that stored nothing). Truncated: a crash in the middle of a line (or a tail of
/// NUL bytes left by a power loss); the partial entry was dropped.
enum class KtFileState { Closed, Open, Truncated };

struct KtCache : KtCacheHeader {
  std::vector<KtEntry> entries;  ///< in file order; a repeated key keeps its first place
  KtFileState file_state = KtFileState::Closed;
};

/// Reads a cache file (.json, or gzip-compressed .json.gz) of any Kernel Tuner generation:
/// pretty-printed or line layout, open or closed, NaN/Infinity, errors as "time":
/// "InvalidConfig" or "__error__". Throws InputError (one line, naming the file and the
/// field, e.g. `cache.json: cache["128,4"].time: expected a number or an error name`) for
/// malformed JSON, a missing "cache"/"device_name"/"kernel_name"/"tune_params_keys", a
/// known field of the wrong type, or an entry without one of the parameters.
KtCache read_cache(const std::filesystem::path& path);
KtCache parse_cache(std::string_view text, std::string_view name_for_errors);

/// Whether `field` is one of the entry fields entry_to_json writes itself ("time", "times",
/// "compile_time", ..., "__error__", "cutune_status"): no extra field may have its name.
bool is_known_entry_field(std::string_view field);

/// Kernel Tuner's key: ",".join(str(v) for v in values) (python_str: True, 2.45, alg_1).
std::string config_key(const std::vector<nlohmann::ordered_json>& values);
/// The key of `params` taken in the order of `keys`; throws std::invalid_argument when a
/// key is missing from params.
std::string config_key(const nlohmann::ordered_json& params, const std::vector<std::string>& keys);

/// np.average(times) as Kernel Tuner computes "time": numpy's pairwise summation, / n.
/// NaN for an empty list.
double kt_mean(const std::vector<double>& times_ms);

/// str(datetime.now(timezone.utc)) as Kernel Tuner stamps entries:
/// "2023-12-22 09:54:05.502007+00:00".
std::string kt_timestamp(std::chrono::system_clock::time_point t = std::chrono::system_clock::now());

/// The entry as Kernel Tuner's fields, in the order Kernel Tuner writes them: the
/// parameters, "time" and "times" (a failure: "time" and "__error__" both set to the
/// ErrorConfig name, which every Kernel Tuner version reads as a failure), "compile_time",
/// "verification_time", "benchmark_time", "cutune_status" (Correctness and Timeout only),
/// the extra fields, "strategy_time", "framework_time", "timestamp". An unset time is
/// written as the int 0, as Kernel Tuner writes a time it did not take (`x or 0`). Kernel
/// Tuner 1.4/1.5 write no "time" for a failure and no strategy/framework time in the file;
/// older versions need them, and every version reads them. Throws std::invalid_argument
/// when an extra field has the name of a parameter or of a field above.
nlohmann::ordered_json entry_to_json(const KtEntry& entry);

/// The header exactly as Kernel Tuner writes it: json.dumps(header + "cache": {},
/// indent="")[:-3], ending in `"cache": {` without a newline.
std::string format_cache_header(const KtCacheHeader& header);
/// One appended line: "\n" + json.dumps({key: entry_to_json(entry)})[1:-1] + ",".
std::string format_cache_line(const KtEntry& entry);

/// Writes a cache file as Kernel Tuner does, one line per configuration as tuning goes, so
/// that a crash leaves a file that Kernel Tuner and cutune both resume. Move-only: it owns
/// the open file.
class KtCacheWriter {
 public:
  KtCacheWriter() = default;
  KtCacheWriter(KtCacheWriter&&) noexcept = default;
  KtCacheWriter& operator=(KtCacheWriter&&) noexcept = default;
  KtCacheWriter(const KtCacheWriter&) = delete;
  KtCacheWriter& operator=(const KtCacheWriter&) = delete;
  /// Leaves the file as it is (open): call close() to complete it.
  ~KtCacheWriter() = default;

  /// Creates the file with the header (an empty file counts as absent), or resumes an
  /// existing one: its header must agree with `header` on device_name, kernel_name,
  /// problem_size (N and [N] agree), tune_params_keys and tune_params, else InputError
  /// `PATH: tune_params_keys: the file has [...], the problem has [...]`. On resume the
  /// file's complete entries are kept and returned (so the tuner skips them); a closed file
  /// is reopened, a partial last line from a crash is cut off; the file's own header,
  /// objective included, stays. Throws InputError when the path cannot be written, the file
  /// is gzip-compressed or not a cache, or a top-level field follows "cache".
  std::vector<KtEntry> open(const std::filesystem::path& path, const KtCacheHeader& header);

  /// Appends one entry as one line and flushes it to the OS. An entry whose key is already
  /// in the file is not written again (as Kernel Tuner's store_cache); returns whether
  /// it was written. A key is computed from the params when entry.key is empty.
  bool append(const KtEntry& entry);

  /// Completes the file as Kernel Tuner's close_cache does: the last "," becomes "}\n}". A
  /// file without entries is left open (`"cache": {`), as Kernel Tuner leaves it: closing it
  /// would make Kernel Tuner's resume write `{,` and corrupt the file. Idempotent.
  void close();

  bool is_open() const { return out_.is_open(); }
  std::size_t entry_count() const { return keys_.size(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  KtCacheHeader header_;
  std::unordered_set<std::string> keys_;
};

}  // namespace cutune::db::kt
