#pragma once
// The JSON columns of the store's rows, both ways: a result's configuration (config_json), its
// statistics and provenance (stats_json), a winner's finalists (finalists_json). The one
// place that writes or reads them. Private to cutune::db.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/result.hpp"

namespace cutune::db::detail {

/// config_json: {"block_size_x":128,...} in declared order (Configuration::to_json where the
/// space is known; the values as they were read otherwise).
std::string config_row(const ResultConfig& config);
/// A configuration read from a row: `key` and the values of `json`. Throws InputError naming
/// `where` ("path: measurement 3") when the text is not a JSON object.
ResultConfig config_of_row(std::string key, const std::string& json, const std::string& where);

/// stats_json: by provenance. Measured: the statistics (stats_object) and the module's load
/// time, "{}" for a failure; imported: Kernel Tuner's mean, the interval, "imported": true and
/// the file's other fields under "kt"; simulated: "simulated_cost_s" and "simulated_benchmark_s".
std::string stats_row(const Result& result);
/// The provenance and statistics of a row's stats_json, as stats_row writes them (rows of older
/// versions too: what a row lacks keeps its default). `median_ms` is the row's median.
void read_stats_row(Result& result, const std::string& json);

/// The resources a measured row's stats_json keeps (stats_row); none where it keeps none or
/// the text is not an object (a NULL column reads as "").
std::optional<KernelResources> resources_of_stats_row(const std::string& json);

/// finalists_json: finalists_array as text.
std::string finalists_row(const std::vector<Finalist>& finalists);
/// The finalists of a row's finalists_json; what an entry lacks keeps its default, and text that
/// is not an array holds none.
std::vector<Finalist> finalists_of_row(const std::string& json);

}  // namespace cutune::db::detail
