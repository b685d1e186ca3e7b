#pragma once
// The summary of one tuning as `cutune tune` reports it: the runner's report, and what the
// command line asked for that the report does not hold. A typed value: the printers
// (terminal_printer.hpp, report_json_printer.hpp) turn it into text and compute nothing but
// the layout; the tuning formats nothing.
#include <cstdint>
#include <string>

#include "cutune/runner/runner.hpp"

namespace cutune::cli {

struct TuneSummary {
  runner::TuneReport report;
  std::string command;                  ///< the command line as it ran
  std::string strategy;                 ///< --strategy
  std::uint64_t seed = 0;               ///< --seed
  int screening_samples_max = 0;        ///< --samples
  std::string compile_mode;             ///< the compile pool's workers: "process" or "thread"
  std::string db;                       ///< the DB the run is stored in
  /// Seconds from the process's start to the tuning's start, and to the report (-1: unknown):
  /// where the process's wall time went outside the tuning.
  double process_before_tune_s = -1.0;
  double process_at_report_s = -1.0;

  /// The default configuration's key; "" when the tuning set none.
  std::string default_key() const;
  /// The default's median over the winner's; 0 unless both were measured.
  double speedup_over_default() const;
};

}  // namespace cutune::cli
