#include "terminal_printer.hpp"

#include <fmt/format.h>

#include "cutune/model/status.hpp"

namespace cutune::cli {
namespace {

void print_counts(std::ostream& out, const TuneSummary& s) {
  const runner::TuneReport& r = s.report;
  out << fmt::format("\n{} on {} ({}), problem {}\n", r.kernel, r.device.name, r.device.arch(), r.problem_key);
  out << fmt::format("configurations: {} valid, {} evaluated now, {} resumed from {}{}, {} failed\n", r.space_valid,
                     r.configs_tried, r.configs_resumed, s.db,
                     r.configs_resumed_other_gpus
                         ? fmt::format(" ({} measured on other GPUs of the model)", r.configs_resumed_other_gpus)
                         : std::string(),
                     r.configs_failed);
  for (const auto& [status, n] : r.failures_by_status) out << fmt::format("  failed ({}): {}\n", status, n);
}

void print_winner(std::ostream& out, const TuneSummary& s) {
  const runner::TuneReport& r = s.report;
  if (!r.winner) {
    out << "no configuration ran successfully\n";
    return;
  }
  out << fmt::format("winner:  {} {}\n  median {:.4f} ms", r.winner->key(), r.winner->json(), r.winner_ms);
  for (const auto& [name, v] : r.winner_metrics) out << fmt::format(", {} {:.6g}", name, v);
  out << '\n';
  if (!r.objective.is_time())
    out << fmt::format("  ranked by {} ({} is better): {:.6g}\n", r.objective.name(),
                       r.objective.higher_is_better ? "higher" : "lower", r.winner_objective_value);
  if (r.verdict == Verdict::Separated)
    out << "  declared: its interval separates from every other finalist's\n";
  else if (r.verdict == Verdict::Tie)
    out << "  TIE: its interval overlaps another finalist's (see the report's finalists)\n";
  const std::string default_key = s.default_key();
  if (r.default_ms > 0)
    out << fmt::format("default: {} median {:.4f} ms -> speedup {:.3f}x\n", default_key, r.default_ms,
                       s.speedup_over_default());
  else if (r.default_evaluated)
    out << fmt::format("default: {} failed\n", default_key);
  else
    out << fmt::format("default: {} not evaluated (the problem names no default: no speedup baseline)\n",
                       default_key);
}

void print_throughput(std::ostream& out, const TuneSummary& s) {
  const runner::TuneReport& r = s.report;
  if (r.copy_gbps > 0) out << fmt::format("device-to-device copy: {:.1f} GB/s (read + write)\n", r.copy_gbps);
  out << fmt::format("{:.2f} s wall: {} compiled by {} {} workers ({} from the cache, {} shared); {} GPU "
                     "worker restart(s); timeout {:.1f} s\n",
                     r.wall_s, r.compile.compiled, r.compile_workers, s.compile_mode, r.compile.cache_hits,
                     r.compile.shared, r.worker_restarts, r.timeout_s);
  if (r.workers.size() > 1)
    for (const auto& w : r.workers)
      out << fmt::format("  {}: {} evaluated, {:.0f} ms evaluating ({:.0f} ms sampling), {:.0f} ms idle, "
                         "{} restart(s){}\n",
                         w.name, w.evaluations, w.evaluate_ms, w.sampling_ms, w.idle_ms, w.restarts,
                         w.lost ? ", lost" : "");
}

std::string shell_quoted(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void print_tune_summary(std::ostream& out, const TuneSummary& summary) {
  print_counts(out, summary);
  print_winner(out, summary);
  print_throughput(out, summary);
  const runner::TuneReport& r = summary.report;
  if (!r.prior_summary.empty()) out << r.prior_summary << '\n';
  out << report_hint(summary.db, r.kernel, r.problem_key) << '\n';
}

void print_measure_session(std::ostream& out, const std::string& kernel, const runner::MeasureSession& session) {
  out << fmt::format("{} ({}) on {}, L2 {}{}, compiler {}\n", kernel, session.problem_key, session.device.name,
                     session.l2_method, session.configs.size() > 1 ? ", interleaved" : "", session.compiler);
  for (const auto& c : session.configs) {
    const auto& ev = c.evaluation;
    out << fmt::format("  {}: ", c.config.key());
    if (!ev.stats) {
      out << fmt::format("{}: {}\n", status_name(ev.status), ev.error);
      continue;
    }
    const auto& s = ev.stats->summary;
    out << fmt::format("median {:.5f} ms [{:.5f}, {:.5f}] mean {:.5f} min {:.5f} n={} ({})", s.median, s.ci_low,
                       s.ci_high, s.mean, s.min, s.count, to_string(ev.stats->set.reason));
    if (c.loop_ms > 0) out << fmt::format("; back-to-back loop {:.5f} ms", c.loop_ms);
    out << '\n';
  }
}

std::string report_hint(const std::string& db, const std::string& kernel, const std::string& problem) {
  return fmt::format("report: cutune report --db {} --kernel {} --problem {} -o report.html", shell_quoted(db),
                     shell_quoted(kernel), shell_quoted(problem));
}

}  // namespace cutune::cli
