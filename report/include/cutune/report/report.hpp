#pragma once
// `cutune report`: one self-contained HTML page about what a DB holds. Charts are inline SVG
// drawn here (no JavaScript, no network needed to read them), the data behind them is
// embedded as JSON (<script type="application/json" id="cutune-report-data">), and the page
// depends on the DB's content only (no clock, no host name), so the same DB gives the same
// bytes.
#include <cstdint>
#include <optional>
#include <string>

#include "cutune/db/store.hpp"

namespace cutune::report {

struct ReportOptions {
  /// Which targets (kernel, problem, device), as `cutune query` filters: kernel and problem
  /// exactly, gpu a case-insensitive substring of the GPU model; "" = any.
  std::string kernel, problem, gpu;
  /// Only this run's measurements (and its target).
  std::optional<std::int64_t> run;
  /// How the DB is named in the page ("" = its path).
  std::string db_label;
  /// The DB compared against (--compare), and how it is named in the page.
  const db::Store* compare = nullptr;
  std::string compare_label;
  /// --compare: a change is reported when the two medians' intervals are apart and the
  /// medians differ by more than this fraction (nvbench's compare script reports a change
  /// only beyond the noise too).
  double change_threshold = 0.05;
  /// Rows of the top-configurations table.
  std::size_t top = 10;
};

/// The HTML page. Throws InputError when nothing in `store` matches the filters (naming
/// them), or when --run names a run the DB does not hold.
std::string render_report(const db::Store& store, const ReportOptions& options);

}  // namespace cutune::report
