// The printers of `cutune tune` fed fixed summaries: the --report JSON's keys and values and
// the terminal text, in each shape a run's end can take (a winner against its default, a tie,
// a failed default, no winner at all), against what the code they replaced wrote for the same
// summaries (tests/data/cli_printers).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/model/status.hpp"
#include "printers/query_printer.hpp"
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

/// A file of tests/data/cli_printers: what the code the printers replaced (tune_here's
/// formatting) wrote for the same summary.
std::string expected(const std::string& name) {
  std::ifstream in(std::string(CUTUNE_TEST_DATA_DIR) + "/cli_printers/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> keys(const json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}

}  // namespace

TEST_CASE("tune printers: the --report JSON and the text are the replaced code's, byte for byte", "[cli]") {
  const cutune::Space space = fixture_space();
  const std::vector<std::pair<Shape, std::string>> shapes{
      {Shape::Winner, "winner"}, {Shape::Tie, "tie"}, {Shape::DefaultFailed, "default_failed"},
      {Shape::NoWinner, "no_winner"}};
  for (const auto& [shape, name] : shapes) {
    const TuneSummary s = fixture(space, shape);
    INFO(name);
    CHECK(cutune::cli::tune_report_json(s).dump(2) + "\n" == expected("tune_report_" + name + ".json"));
    std::ostringstream text;
    cutune::cli::print_tune_summary(text, s);
    CHECK(text.str() == expected("tune_summary_" + name + ".txt"));
  }
}

TEST_CASE("tune printers: the --report JSON's keys, in order, and the values they take from the summary", "[cli]") {
  const cutune::Space space = fixture_space();
  const json j = cutune::cli::tune_report_json(fixture(space, Shape::Winner));
  // 48 keys, then the winner's metrics, one each; with cost's 2 and time_breakdown's 14, 64.
  const std::vector<std::string> top{
      "device", "date", "command", "kernel", "problem", "strategy", "seed", "run_id", "verification", "prior", "l2",
      "screening_samples_max", "space_valid", "configs_tried", "configs_resumed", "configs_resumed_other_gpus",
      "configs_failed", "winner", "winner_key", "winner_ms", "default", "default_ms", "default_evaluated",
      "speedup_over_default", "objective", "objective_higher_is_better", "winner_objective_value", "verdict",
      "finalists", "cost", "copy_gbps", "wall_s", "timed_ms_total", "compile_workers", "compiler", "compiler_reason", "learnt_budget", "workers",
      "compile_mode", "compiled", "cache_hits", "shared_compiles", "compile_ms_total", "gpu_worker_restarts",
      "timeout_s", "compile_ms_median", "time_breakdown", "failures_by_status", "gbps", "gflops"};
  CHECK(keys(j) == top);
  CHECK(keys(j["cost"]) == std::vector<std::string>{"screening_ms_per_config", "thorough_ms_per_config"});
  CHECK(keys(j["time_breakdown"]) ==
        std::vector<std::string>{"startup_s", "gpu_setup_ms", "compile_wait_ms", "evaluate_ms", "verify_ms",
                                 "sampling_ms", "store_ms", "search_ms", "worker_load_ms", "worker_stage_ms",
                                 "worker_idle_ms", "after_search_ms", "process_before_tune_s",
                                 "process_at_report_s"});
  // What the command line gave, not the runner's report.
  CHECK(j["command"] == "cutune tune vector_add --report r.json --seed 7");
  CHECK(j["strategy"] == "genetic_algorithm");
  CHECK(j["seed"] == 7);
  CHECK(j["screening_samples_max"] == 10);
  CHECK(j["compile_mode"] == "process");
  CHECK(j["time_breakdown"]["process_at_report_s"] == 42.5);
  // Computed from the report: the default's key, the speed-up, the failures by status.
  CHECK(j["default"] == "0,0");
  CHECK(j["speedup_over_default"].get<double>() == Approx(0.0950 / 0.0712));
  CHECK(j["failures_by_status"] == json{{"compile", 1}, {"runtime", 1}});
  CHECK(j["finalists"].size() == 2);
  CHECK_FALSE(j["finalists"][1].contains("objective_value"));  // NaN: not written
  const json none = cutune::cli::tune_report_json(fixture(space, Shape::NoWinner));
  CHECK(none["winner"].is_null());
  CHECK(none["winner_key"] == "");
  CHECK(none["speedup_over_default"] == 0.0);
  CHECK(none["learnt_budget"].is_null());
  CHECK(keys(none).size() == top.size() - 2);  // no metrics without a winner
}

TEST_CASE("query printer: the winner's resources beside its time, '-' where none were kept", "[cli][resources]") {
  cutune::db::Winner measured;
  measured.kernel = "reduction";
  measured.problem_key = "n=1024";
  measured.gpu_model = "NVIDIA H100 80GB HBM3/sm_90";
  measured.config = cutune::ResultConfig("128", {{"block_size_x", cutune::Value(128)}});
  measured.median_ms = 0.25;
  measured.default_ms = 0.5;
  cutune::KernelResources r;
  r.registers = 40;
  r.local_bytes = 16;
  r.static_shared_bytes = 4096;
  r.dynamic_shared_bytes = 512;
  r.block_threads = 128;
  r.active_blocks_per_sm = 12;
  r.occupancy = 0.75;
  measured.resources = r;
  cutune::db::Winner imported = measured;  // an import: no resources
  imported.problem_key = "n=2048";
  imported.resources.reset();

  std::ostringstream out;
  cutune::cli::print_winner_table(out, {measured, imported});
  std::vector<std::string> lines;
  std::istringstream text(out.str());
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  const auto words = [](const std::string& line) {
    std::vector<std::string> w;
    std::istringstream in(line);
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  const auto head = words(lines[0]);
  const auto row = words(lines[1]);
  const auto bare = words(lines[2]);
  // kernel, problem, GPU name (4 words), objective, median, then the resources.
  REQUIRE(head.size() >= 9);
  CHECK(std::vector<std::string>(head.begin() + 4, head.begin() + 9) ==
        std::vector<std::string>{"median_ms", "regs", "local_B", "smem_B", "occupancy"});
  REQUIRE(row.size() >= 12);
  CHECK(std::vector<std::string>(row.begin() + 7, row.begin() + 12) ==
        std::vector<std::string>{"0.2500", "40", "16", "4608", "75%"});
  REQUIRE(bare.size() >= 12);
  CHECK(std::vector<std::string>(bare.begin() + 8, bare.begin() + 12) ==
        std::vector<std::string>{"-", "-", "-", "-"});

  const json j = cutune::cli::winners_json({measured, imported});
  CHECK(j[0]["resources"]["registers"] == 40);
  CHECK(j[0]["resources"]["occupancy"] == 0.75);
  CHECK(j[1]["resources"].is_null());
}
