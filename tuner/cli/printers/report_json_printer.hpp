#pragma once
// The JSON documents a run is written to: `tune --report` and `measure --json`. Each is made
// from a typed summary; the keys are what scripts and the benchmark tables read, so a key
// changes only with its readers.
#include <nlohmann/json.hpp>
#include <string>

#include "cutune/runner/runner.hpp"
#include "cutune/search/prior.hpp"
#include "tune_summary.hpp"

namespace cutune::cli {

/// `tune --report`: the target, the command, the counts, the winner with its verdict and
/// finalists, the default, costs, throughput and the time breakdown, failures by status and
/// the winner's metrics (one key each, last).
nlohmann::ordered_json tune_report_json(const TuneSummary& summary);

/// `measure --json`: the target and, per configuration, its status and (measured) its
/// statistics, raw samples, clocks and back-to-back loop. `date`: when it was measured.
nlohmann::ordered_json measure_json(const runner::MeasureSession& session, const std::string& kernel,
                                    const std::string& command, const std::string& date);

/// One prior offered to a run, as the JSON outputs write it (used or not, and why).
nlohmann::ordered_json prior_use_json(const search::PriorUse& use);

}  // namespace cutune::cli
