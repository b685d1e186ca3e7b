#pragma once
// T4, the community's autotuning results format, read and written in the two versions in
// use: 1.0.0 (Kernel Tuner 1.5's get_t4_results / store_output_file, schema
// T4/1.0.0/results-schema.json) and 1.1.0 (autotuning_methodology's T4.json, which KTT
// writes; it adds a "metadata" block).
//
// 1.0.0 names the compile time "compilation_time" in the schema, but Kernel Tuner writes
// "compilation" (and the Benchmark Hub's files have only that), so a 1.0.0 file cutune
// writes carries both, and the reader takes either.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/formats/kt_cache.hpp"

namespace cutune::db::kt {

/// The "metadata" block of 1.1.0 (1.0.0 writes these fields too, beside "timeunit").
struct T4Metadata {
  std::string compute_api = "CUDA";  ///< "OpenCL", "CUDA" or "Vulkan"; "" leaves it out
  std::string platform;              ///< e.g. "NVIDIA CUDA 12.4"; "" leaves it out
  std::string device;                ///< the GPU's name; "" leaves it out
  std::string autotuner = "cutune";
  std::string autotuner_version;     ///< "" leaves it out
  std::string timestamp;             ///< when tuning started; "" leaves it out
  /// Read: the file's unit ("miliseconds", Kernel Tuner's spelling, reads as milliseconds).
  /// Written: always "milliseconds", the unit of KtEntry.
  std::string timeunit = "milliseconds";
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  ///< other fields, kept
};

struct T4Results {
  std::string schema_version;           ///< "1.0.0", "1.1.0"; "" when the file has none
  T4Metadata metadata;
  std::vector<std::string> objectives;  ///< the first result's "objectives"
  std::vector<std::string> param_names; ///< the first result's configuration, in order
  /// One per result, times converted to milliseconds. key: python_str of the configuration
  /// values in their order; status from "invalidity" ("correct" with correctness 0 reads
  /// as Correctness); time_ms from the "time" measurement, else the mean of the runtimes;
  /// other measurements in `extra` by name.
  std::vector<KtEntry> entries;
};

/// A T4 results document, version "1.0.0" or "1.1.0" (else std::invalid_argument), in
/// Kernel Tuner's json.dump form (one line). Per result: timestamp (when set),
/// configuration (params), times (compilation[_time], benchmark, framework,
/// search_algorithm, validation: 0 when unset; runtimes), invalidity ("correct" or the
/// status name), correctness (1 when ok, else 0), measurements ("time" in ms, or the
/// ErrorConfig name for a failure; then every extra field, unit "ms" when its name starts
/// with "time"), objectives.
std::string format_t4(std::string_view version, const T4Metadata& metadata,
                      const std::vector<std::string>& objectives,
                      const std::vector<KtEntry>& entries);
void write_t4(const std::filesystem::path& path, std::string_view version,
              const T4Metadata& metadata, const std::vector<std::string>& objectives,
              const std::vector<KtEntry>& entries);

/// The separate metadata file of T4 1.0.0 (T4/1.0.0/metadata-schema.json), as Kernel
/// Tuner's store_metadata_file writes it (indent "  "): operating_system, hardware, and
/// environment.device_query holding the metadata fields above.
std::string format_t4_metadata_1_0_0(const T4Metadata& metadata);

/// Reads T4 results of either version (.json or .json.gz). Throws InputError (one line,
/// file and field: `r.json: results[3].invalidity: unknown value "broken"`) for malformed
/// JSON, a missing "results", or a result without configuration / times / invalidity /
/// correctness or with a field of the wrong type.
T4Results read_t4(const std::filesystem::path& path);
T4Results parse_t4(std::string_view text, std::string_view name_for_errors);

}  // namespace cutune::db::kt
