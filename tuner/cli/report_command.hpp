#pragma once
// `cutune report [--db PATH] [--kernel K] [--problem P] [--gpu G] [--run ID] [--compare OTHER.db]
// -o report.html`: one self-contained HTML page with charts about what a DB holds
// (cutune::report says what it shows).
#include <cstdint>
#include <optional>
#include <string>

#include "printers/terminal_printer.hpp"  // report_hint: the line a run ends with

namespace CLI {
class App;
}

namespace cutune::cli {

struct ReportArgs {
  std::string db, kernel, problem, gpu, compare, output;
  std::optional<std::int64_t> run;
  double threshold = 0.05;
};
CLI::App* add_report(CLI::App& app, ReportArgs& args);
/// Every DB is opened read-only and the page made before anything is written; the page is
/// written beside the output under a temporary name and renamed into place. A missing DB,
/// a file that is not a cutune DB, filters that match nothing or an output that cannot be
/// written: InputError, nothing written.
int cmd_report(const ReportArgs& args);

}  // namespace cutune::cli
