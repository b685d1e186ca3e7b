#include "progress_printer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

namespace cutune::cli {

std::string progress_line(const runner::TuneOptions::Progress& p) {
  std::string line = fmt::format("[{}/{}] {} failed", p.done, p.total, p.failed);
  if (p.best_ms > 0) line += fmt::format(", best {:.4f} ms ({})", p.best_ms, p.best_key);
  if (p.done > 0 && p.total > p.done && p.elapsed_s > 0) {
    // Resumed configurations cost nothing, so this overestimates early in a resumed run.
    const double eta = p.elapsed_s / static_cast<double>(p.done) * static_cast<double>(p.total - p.done);
    const auto s = static_cast<long long>(std::lround(eta));
    line += fmt::format(", ETA {}:{:02}", s / 60, s % 60);
  }
  return line;
}

ProgressPrinter::ProgressPrinter(std::ostream& out) : out_(out) {
  live_ = &out == &std::cerr && ::isatty(STDERR_FILENO);
}

ProgressPrinter::~ProgressPrinter() { end(); }

void ProgressPrinter::end() {
  if (drawn_) out_ << '\n' << std::flush;
  drawn_ = false;
}

void ProgressPrinter::update(const runner::TuneOptions::Progress& p) {
  // Back to the main line (up over the worker lines drawn last time), then \r and
  // erase-to-end-of-line for each line: redraw in place.
  if (worker_lines_ > 0) out_ << "\x1b[" << worker_lines_ << 'A';
  out_ << '\r' << progress_line(p) << "\x1b[K";
  for (const auto& line : p.workers) out_ << "\n  " << line << "\x1b[K";
  worker_lines_ = p.workers.size();
  out_ << std::flush;
  drawn_ = true;
}

}  // namespace cutune::cli
