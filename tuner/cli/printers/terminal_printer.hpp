#pragma once
// What the commands print on the terminal for a run: the tuning's summary after its
// per-configuration lines, `measure`'s statistics. Each printer takes a typed summary and
// an output stream, and only lays the values out.
#include <ostream>
#include <string>

#include "cutune/runner/runner.hpp"
#include "tune_summary.hpp"

namespace cutune::cli {

/// `tune`'s summary: the target, counts of configurations, the winner (and its verdict)
/// against the default, throughput and where the time went, the prior, the report command.
void print_tune_summary(std::ostream& out, const TuneSummary& summary);

/// `measure`: a heading line, then one line per configuration (its statistics or its failure).
void print_measure_session(std::ostream& out, const std::string& kernel, const runner::MeasureSession& session);

/// The line `tune` prints at the end of a run: the report command for its target, shell-quoted.
std::string report_hint(const std::string& db, const std::string& kernel, const std::string& problem);

}  // namespace cutune::cli
