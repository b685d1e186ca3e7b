#pragma once
// The report's sections: each returns its HTML (inline SVG and tables) and fills the JSON
// that is embedded beside it. Private to cutune::report.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report_data.hpp"

namespace cutune::report {

/// One target: best so far (time, evaluations) against random search, where the time went,
/// the distribution with failure shares, parameter sensitivity, the top configurations,
/// energy against time. `data` gets the figures behind them.
std::string target_section(const TargetView& target, const ReportOptions& options, nlohmann::ordered_json& data);

/// Each GPU model's winner on the other models, relative to their best, per kernel and
/// problem of `targets` measured on two models or more.
std::string across_gpus_section(const db::Store& store, const std::vector<TargetView>& targets,
                                nlohmann::ordered_json& data);

/// This DB against options.compare, per target.
std::string compare_section(const db::Store& store, const std::vector<TargetView>& targets,
                            const ReportOptions& options, nlohmann::ordered_json& data);

/// Text for HTML (the same escaping as the SVG's).
std::string html(const std::string& text);

}  // namespace cutune::report
