#pragma once
// KTT's own results files (Kernel Tuning Toolkit, HiPerCoRe/KTT: Tuner::SaveResults with
// OutputFormat::JSON, written by its JsonSerializer from Source/Output/JsonConverters.cpp).
// The layout, as KTT 2.x writes it (nlohmann::json, keys sorted):
//   {"Metadata": {"ComputeApi", "Device", "GlobalSizeType", "KttVersion", "Platform",
//                 "TimeUnit": "Nanoseconds|Microseconds|Milliseconds|Seconds", "Timestamp"},
//    "Results": [{"KernelName", "Status": "Ok|ComputationFailed|ValidationFailed|
//                 CompilationFailed|DeviceLimitsExceeded",
//                 "Configuration": [{"Name", "Value", "ValueType": "Int|UnsignedInt|Double|
//                                    Float|Bool|String"}],       (before 2.1: "IsDouble")
//                 "TotalDuration", "TotalOverhead", "ExtraDuration", "CompilationOverhead",
//                 "DataMovementOverhead", "ValidationOverhead", "SearcherOverhead",
//                 "ProfilingOverhead", "Timestamp",
//                 "ComputationResults": [{"KernelFunction", "Duration", "Overhead", ...}]}],
//    "UserData": {...}}                                           (optional)
// Every duration is in Metadata.TimeUnit. Older files lack the per-part overheads (only
// TotalOverhead, ExtraOverhead); KTT writes each run of a configuration as its own result.
// KTT's XML output (OutputFormat::XML) holds the same and is not read.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/formats/kt_cache.hpp"

namespace cutune::db::ktt {

struct KttResults {
  std::string device;       ///< Metadata.Device
  std::string ktt_version;  ///< Metadata.KttVersion
  std::string kernel_name;  ///< the first result's KernelName
  std::vector<std::string> param_names;  ///< the first result's configuration, in order
  /// One per configuration, as Kernel Tuner's entries (milliseconds): params and key from
  /// Configuration; status from Status (CompilationFailed: compile; ValidationFailed:
  /// correctness; ComputationFailed, DeviceLimitsExceeded: runtime); time_ms and times_ms
  /// from TotalDuration (ok results only); compile_time_ms = CompilationOverhead (older
  /// files: TotalOverhead), verification_time_ms = ValidationOverhead, benchmark_time_ms =
  /// TotalDuration + DataMovementOverhead + ProfilingOverhead (what measuring it took;
  /// SearcherOverhead is the search's own time, as Kernel Tuner's strategy_time). A file
  /// without any overhead above 0 has no costs: the three stay unset. A configuration KTT
  /// wrote more than once keeps its first result.
  std::vector<kt::KtEntry> entries;
};

/// Whether a parsed document has KTT's top level ("Metadata" and "Results").
bool is_ktt_results(const nlohmann::ordered_json& doc);

/// Reads KTT results (.json or .json.gz). Throws InputError (one line naming the file and
/// the field: `r.json: Results[2].Status: unknown value "Broken"`) for malformed JSON, a
/// missing Metadata.TimeUnit or Results, or a result without KernelName / Status /
/// Configuration / TotalDuration or with a field of the wrong type.
KttResults read_ktt(const std::filesystem::path& path);
KttResults parse_ktt(std::string_view text, std::string_view name_for_errors);

}  // namespace cutune::db::ktt
