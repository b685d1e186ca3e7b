#pragma once
// The live progress line of `cutune tune` on a terminal: configurations done of
// the total, failures, best so far and an ETA, redrawn in place, with one line per GPU
// worker below it when there are several. Not on a terminal the
// tuner prints one plain line per configuration instead (logs, CI).
#include <cstddef>
#include <ostream>

#include "cutune/runner/runner.hpp"

namespace cutune::cli {

class ProgressPrinter {
 public:
  /// Live only when `out` is stderr and stderr is a terminal.
  explicit ProgressPrinter(std::ostream& out);
  ~ProgressPrinter();  ///< ends the live line
  void end();          ///< ends the live line now (before a summary on stdout)
  bool live() const { return live_; }
  void update(const runner::TuneOptions::Progress& p);

 private:
  std::ostream& out_;
  bool live_ = false;
  bool drawn_ = false;
  std::size_t worker_lines_ = 0;  ///< drawn below the main line last time
};

/// "[123/396] 2 failed, best 0.0712 ms (256,2,8,4,1,1,0), ETA 0:12": the live line's text.
std::string progress_line(const runner::TuneOptions::Progress& p);

}  // namespace cutune::cli
