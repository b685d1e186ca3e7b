// The printers of `cutune tune` fed fixed summaries: the --report JSON's keys and values and
// the terminal text, in each shape a run's end can take (a winner against its default, a tie,
// a failed default, no winner at all).
#include <catch2/catch.hpp>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/model/status.hpp"
#include "printers/report_json_printer.hpp"
#include "printers/terminal_printer.hpp"
#include "printers/tune_summary.hpp"
#include "space_helpers.hpp"

using cutune::Configuration;
using cutune::cli::TuneSummary;
using json = nlohmann::ordered_json;

namespace {

cutune::Space fixture_space() {
  using cutune::testing::range_param;
  return cutune::Space({range_param("block_size_x", 4), range_param("tile", 3)}, {});
}

cutune::MeasuredStats thorough(double median, double low, double high) {
  cutune::MeasuredStats s;
  s.level = cutune::MeasurementLevel::Thorough;
  s.set.samples_ms = {median, low, high};
  s.set.clocks_mhz = {1980, 1980, 1975};
  s.set.reason = cutune::StopReason::converged;
  s.set.wall_ms = 12.5;
  s.summary.count = 3;
  s.summary.median = median;
  s.summary.mean = median;
  s.summary.min = low;
  s.summary.max = high;
  s.summary.ci_low = low;
  s.summary.ci_high = high;
  s.summary.ci_coverage = 0.75;
  s.summary.rel_ci_half_width = (high - low) / (2 * median);
  s.temperature_c = 51.0;
  return s;
}

enum class Shape { Winner, Tie, DefaultFailed, NoWinner };

/// A run's summary with every field set to a value of its own, shaped as `shape` says.
TuneSummary fixture(const cutune::Space& space, Shape shape) {
  TuneSummary s;
  s.command = "cutune tune vector_add --report r.json --seed 7";
  s.strategy = "genetic_algorithm";
  s.seed = 7;
  s.screening_samples_max = 10;
  s.compile_mode = "process";
  s.db = "/tmp/my runs/cutune.db";  // a space: the report hint quotes it
  s.process_before_tune_s = 0.125;
  s.process_at_report_s = 42.5;
  cutune::runner::TuneReport& r = s.report;
  r.device.name = "NVIDIA H100 80GB HBM3";
  r.device.cc_major = 9;
  r.device.sm_count = 132;
  r.device.memory_bytes = 85ull << 30;
  r.device.sm_clock_khz = 1980000;
  r.device.memory_clock_khz = 2619000;
  r.device.memory_bus_bits = 5120;
  r.device.l2_bytes = 50 << 20;
  r.device.driver_version = 12080;
  r.device.driver_release = "570.86";
  r.device.nvrtc_version = 12080;
  r.device.uuid = "GPU-0000";
  r.kernel = "vector_add";
  r.problem_key = "n=268435456";
  r.date = "2025-01-02T03:04:05Z";
  r.run_id = 17;
  r.space_valid = 12;
  r.configs_tried = 9;
  r.configs_resumed = 3;
  r.configs_resumed_other_gpus = shape == Shape::Winner ? 2 : 0;
  r.configs_failed = 2;
  r.failures_by_status = {{"compile", 1}, {"runtime", 1}};
  r.objective = shape == Shape::Winner ? cutune::Objective::of_metric("gbps", true) : cutune::Objective::time();
  r.default_config = Configuration::default_of(space);
  if (shape != Shape::NoWinner) {
    r.winner = Configuration(space, cutune::Config{{2, 1}});
    r.winner_ms = 0.0712;
    r.winner_objective_value = shape == Shape::Winner ? 3012.5 : 0.0712;
    r.winner_metrics = {{"gbps", 3012.5}, {"gflops", 1.25}};
  }
  r.default_evaluated = shape != Shape::NoWinner;
  r.default_ms = shape == Shape::Winner || shape == Shape::Tie ? 0.0950 : 0.0;
  r.copy_gbps = shape == Shape::NoWinner ? 0.0 : 3140.25;
  r.verification = "reference";
  if (shape == Shape::Winner) {
    cutune::search::PriorUse used;
    used.origin.kernel = cutune::search::KernelNames("vector_add", "vadd");
    used.origin.device = "NVIDIA A100-PCIE-40GB";
    used.origin.problem = "n=268435456";
    used.used = true;
    used.measurements = 12;
    used.proposable = 11;
    cutune::search::PriorUse unused;
    unused.origin.kernel = "vector_add";
    unused.origin.device = "NVIDIA H200";
    unused.reason = "another problem size";
    r.prior = {used, unused};
    r.prior_summary = "prior: 1 of 2 recordings used (12 measurements)";
    r.learnt_budget = 40;
  }
  if (shape == Shape::Winner || shape == Shape::Tie) {
    cutune::runner::TuneReport::Finalist w(*r.winner);
    w.tied = shape == Shape::Tie;
    w.screening_ms = 0.0715;
    w.stats = thorough(0.0712, 0.0710, 0.0714);
    w.objective_value = shape == Shape::Winner ? 3012.5 : 0.0712;
    cutune::runner::TuneReport::Finalist d(*r.default_config);
    d.is_default = true;
    d.tied = shape == Shape::Tie;
    d.screening_ms = 0.0951;
    d.stats = thorough(shape == Shape::Tie ? 0.0713 : 0.0950, 0.0709, 0.0952);
    d.objective_value = std::numeric_limits<double>::quiet_NaN();  // left out of the JSON
    r.finalists = {w, d};
    r.verdict = shape == Shape::Tie ? cutune::Verdict::Tie : cutune::Verdict::Separated;
  }
  r.l2_method = "rotate 4";
  r.screening_ms_per_config = 1.5;
  r.thorough_ms_per_config = 22.25;
  r.wall_s = 12.75;
  r.timed_ms_total = 3.5;
  r.compile.compiled = 8;
  r.compile.cache_hits = 3;
  r.compile.shared = 1;
  r.compile.compile_ms = 2400.5;
  r.compile_workers = 6;
  r.worker_restarts = shape == Shape::NoWinner ? 0 : 1;
  r.timeout_s = 5.0;
  r.startup_s = 0.75;
  r.gpu_setup_ms = R"({"driver":120.5,"context":80.25})";
  r.compile_ms_median = 290.5;
  r.compile_wait_ms = 100.5;
  r.evaluate_ms = 900.25;
  r.verify_ms = 50.5;
  r.sampling_ms = 600.75;
  r.store_ms = 12.5;
  r.search_ms = 4000.25;
  r.after_search_ms = 300.5;
  r.worker_load_ms = 40.5;
  r.worker_stage_ms = 800.25;
  r.worker_idle_ms = 70.5;
  cutune::runner::TuneReport::Worker g0{"GPU 0", "GPU-0000", 5, 500.5, 25.5, 300.5, 20.5, 400.5, 30.5, 1, false};
  cutune::runner::TuneReport::Worker g1{"GPU 1", "GPU-0001", 4, 399.75, 25.0, 300.25, 20.0, 399.75, 40.0, 0, true};
  r.workers = shape == Shape::Winner ? std::vector{g0, g1} : std::vector{g0};
  return s;
}

// ---- The code the printers replace (commands.cpp's tune_here), kept here to compare. ----

json old_workers_json(const std::vector<cutune::runner::TuneReport::Worker>& workers) {
  json out = json::array();
  for (const auto& w : workers)
    out.push_back({{"name", w.name},
                   {"evaluations", w.evaluations},
                   {"evaluate_ms", w.evaluate_ms},
                   {"verify_ms", w.verify_ms},
                   {"sampling_ms", w.sampling_ms},
                   {"load_ms", w.load_ms},
                   {"stage_ms", w.stage_ms},
                   {"idle_ms", w.idle_ms},
                   {"restarts", w.restarts},
                   {"lost", w.lost}});
  return out;
}

json old_prior_json(const std::vector<cutune::search::PriorUse>& uses) {
  json out = json::array();
  for (const auto& u : uses) out.push_back(cutune::cli::prior_use_json(u));
  return out;
}

json old_report_json(const TuneSummary& a) {
  const cutune::runner::TuneReport& r = a.report;
  using namespace cutune;
  const std::string default_key = r.default_config ? r.default_config->key() : std::string();
  const double age_at_tune_s = a.process_before_tune_s;
  json j{{"device", cutune::to_json(r.device)},
         {"date", r.date},
         {"command", a.command},
         {"kernel", r.kernel},
         {"problem", r.problem_key},
         {"strategy", a.strategy},
         {"seed", a.seed},
         {"run_id", r.run_id},
         {"verification", r.verification},
         {"prior", old_prior_json(r.prior)},
         {"l2", r.l2_method},
         {"screening_samples_max", a.screening_samples_max},
         {"space_valid", r.space_valid},
         {"configs_tried", r.configs_tried},
         {"configs_resumed", r.configs_resumed},
         {"configs_resumed_other_gpus", r.configs_resumed_other_gpus},
         {"configs_failed", r.configs_failed},
         {"winner", r.winner ? r.winner->to_json() : json(nullptr)},
         {"winner_key", r.winner ? r.winner->key() : std::string()},
         {"winner_ms", r.winner_ms},
         {"default", default_key},
         {"default_ms", r.default_ms},
         {"default_evaluated", r.default_evaluated},
         {"speedup_over_default", r.default_ms > 0 && r.winner_ms > 0 ? r.default_ms / r.winner_ms : 0.0},
         {"objective", r.objective.name()},
         {"objective_higher_is_better", r.objective.higher_is_better},
         {"winner_objective_value", r.winner_objective_value},
         {"verdict", verdict_name(r.verdict)},
         {"finalists", json::parse(r.finalists_json())},
         {"cost", {{"screening_ms_per_config", r.screening_ms_per_config},
                   {"thorough_ms_per_config", r.thorough_ms_per_config}}},
         {"copy_gbps", r.copy_gbps},
         {"wall_s", r.wall_s},
         {"timed_ms_total", r.timed_ms_total},
         {"compile_workers", r.compile_workers},
         {"learnt_budget", r.learnt_budget ? json(*r.learnt_budget) : json(nullptr)},
         {"workers", old_workers_json(r.workers)},
         {"compile_mode", a.compile_mode},
         {"compiled", r.compile.compiled},
         {"cache_hits", r.compile.cache_hits},
         {"shared_compiles", r.compile.shared},
         {"compile_ms_total", r.compile.compile_ms},
         {"gpu_worker_restarts", r.worker_restarts},
         {"timeout_s", r.timeout_s},
         {"compile_ms_median", r.compile_ms_median},
         {"time_breakdown", {{"startup_s", r.startup_s},
                             {"gpu_setup_ms", json::parse(r.gpu_setup_ms)},
                             {"compile_wait_ms", r.compile_wait_ms},
                             {"evaluate_ms", r.evaluate_ms},
                             {"verify_ms", r.verify_ms},
                             {"sampling_ms", r.sampling_ms},
                             {"store_ms", r.store_ms},
                             {"search_ms", r.search_ms},
                             {"worker_load_ms", r.worker_load_ms},
                             {"worker_stage_ms", r.worker_stage_ms},
                             {"worker_idle_ms", r.worker_idle_ms},
                             {"after_search_ms", r.after_search_ms},
                             {"process_before_tune_s", age_at_tune_s},
                             {"process_at_report_s", a.process_at_report_s}}}};
  json fails = json::object();
  for (const auto& [status, n] : r.failures_by_status) fails[status] = n;
  j["failures_by_status"] = fails;
  for (const auto& [name, v] : r.winner_metrics) j[name] = v;
  return j;
}

std::string old_terminal_text(const TuneSummary& a) {
  using namespace cutune;
  const runner::TuneReport& r = a.report;
  std::ostringstream out;
  out << fmt::format("\n{} on {} ({}), problem {}\n", r.kernel, r.device.name, r.device.arch(), r.problem_key);
  out << fmt::format("configurations: {} valid, {} evaluated now, {} resumed from {}{}, {} failed\n",
                     r.space_valid, r.configs_tried, r.configs_resumed, a.db,
                     r.configs_resumed_other_gpus
                         ? fmt::format(" ({} measured on other GPUs of the model)", r.configs_resumed_other_gpus)
                         : std::string(),
                     r.configs_failed);
  for (const auto& [status, n] : r.failures_by_status) out << fmt::format("  failed ({}): {}\n", status, n);
  const std::string default_key = r.default_config ? r.default_config->key() : std::string();
  if (!r.winner) {
    out << "no configuration ran successfully\n";
  } else {
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
    if (r.default_ms > 0)
      out << fmt::format("default: {} median {:.4f} ms -> speedup {:.3f}x\n", default_key, r.default_ms,
                         r.default_ms / r.winner_ms);
    else if (r.default_evaluated)
      out << fmt::format("default: {} failed\n", default_key);
    else
      out << fmt::format("default: {} not evaluated (the problem names no default: no speedup baseline)\n",
                         default_key);
  }
  if (r.copy_gbps > 0) out << fmt::format("device-to-device copy: {:.1f} GB/s (read + write)\n", r.copy_gbps);
  out << fmt::format("{:.2f} s wall: {} compiled by {} {} workers ({} from the cache, {} shared); {} GPU "
                     "worker restart(s); timeout {:.1f} s\n",
                     r.wall_s, r.compile.compiled, r.compile_workers, a.compile_mode, r.compile.cache_hits,
                     r.compile.shared, r.worker_restarts, r.timeout_s);
  if (r.workers.size() > 1)
    for (const auto& w : r.workers)
      out << fmt::format("  {}: {} evaluated, {:.0f} ms evaluating ({:.0f} ms sampling), {:.0f} ms idle, "
                         "{} restart(s){}\n",
                         w.name, w.evaluations, w.evaluate_ms, w.sampling_ms, w.idle_ms, w.restarts,
                         w.lost ? ", lost" : "");
  if (!r.prior_summary.empty()) out << r.prior_summary << '\n';
  out << cutune::cli::report_hint(a.db, r.kernel, r.problem_key) << '\n';
  return out.str();
}

}  // namespace

TEST_CASE("tune printers: the --report JSON and the text are the replaced code's, byte for byte", "[cli]") {
  const cutune::Space space = fixture_space();
  for (const Shape shape : {Shape::Winner, Shape::Tie, Shape::DefaultFailed, Shape::NoWinner}) {
    const TuneSummary s = fixture(space, shape);
    INFO("shape " << static_cast<int>(shape));
    CHECK(cutune::cli::tune_report_json(s).dump(2) == old_report_json(s).dump(2));
    std::ostringstream text;
    cutune::cli::print_tune_summary(text, s);
    CHECK(text.str() == old_terminal_text(s));
  }
}
