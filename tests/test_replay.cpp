// `tune --simulate` is the tuning loop (runner::tune) on a ReplayPipeline; `cutune score`
// keeps its own event simulation (search::simulate) because it runs thousands of sessions.
// Both must make the same run: for one recording, strategy and seed, the same proposals in the
// same order with the same results, costs and simulated times, in series and with compile
// workers ahead of one or two lanes, with and without a time budget.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "cutune/formats/recorded_cache.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/simulation.hpp"
#include "test_paths.hpp"

using namespace cutune;

namespace {

struct Run {
  std::string strategy;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> budget;
  std::optional<double> time_budget_s;
  std::size_t compile_workers = 0, lanes = 1;
  std::string describe() const {
    return fmt::format("{} seed {} budget {} time {} compile workers {} lanes {}", strategy, seed,
                       budget ? std::to_string(*budget) : "-", time_budget_s ? std::to_string(*time_budget_s) : "-",
                       compile_workers, lanes);
  }
};

/// The score's fast path, set up as the loop runs (loop_first, the pace of a time budget alone).
search::SimulationResult scored(const search::RecordedSpace& recorded, const Run& run) {
  search::StrategyOptions so{run.strategy, run.seed, run.budget};
  so.budget_learnt = run.time_budget_s && !run.budget;
  auto strategy = search::make_strategy(recorded.space(), so);
  search::SimulationOptions o;
  o.session.max_evaluations = run.budget;
  o.session.max_time_s = run.time_budget_s;
  o.budget_from_pace = so.budget_learnt;
  o.compile_workers = run.compile_workers;
  o.workers = run.lanes;
  o.first = search::loop_first(recorded);
  return search::simulate(recorded, *strategy, o);
}

/// The tuning loop on the recording, stored in memory.
runner::TuneReport tuned(const search::RecordedSpace& recorded, const replay::RecordingOrigin& origin,
                         const Run& run) {
  runner::TuneOptions o;
  o.strategy = run.strategy;
  o.seed = run.seed;
  o.budget = run.budget;
  o.time_budget_s = run.time_budget_s;
  o.compile.workers = run.compile_workers;
  o.devices = std::vector<int>(run.lanes, 0);
  o.reuse = runner::TuneOptions::Reuse::Gpu;
  o.db = ":memory:";
  return runner::tune(runner::TuningSession(recorded, origin, o));
}

void check_same_run(const std::filesystem::path& file, const std::vector<Run>& runs) {
  replay::RecordingOrigin origin;
  const search::RecordedSpace recorded = replay::load_recorded_space(file, &origin);
  for (const Run& run : runs) {
    INFO(file.filename().string() << ": " << run.describe());
    const search::SimulationResult expected = scored(recorded, run);
    const runner::TuneReport report = tuned(recorded, origin, run);
    REQUIRE(report.trace.size() == expected.trace.size());
    for (std::size_t i = 0; i < report.trace.size(); ++i) {
      INFO("evaluation " << i + 1);
      const auto& a = report.trace[i];
      const auto& b = expected.trace[i];
      CHECK(recorded.space().key(a.config) == recorded.space().key(b.config));
      CHECK(a.observation.valid == b.observation.valid);
      CHECK(a.observation.objective == b.observation.objective);
      CHECK(a.cost_s == b.cost_s);
      CHECK(a.elapsed_s == b.elapsed_s);
      CHECK(a.stored == b.stored);
    }
    CHECK(report.revisits == expected.revisits);
    CHECK(report.end == expected.end);
    CHECK(report.learnt_budget == expected.learnt_budget);
    CHECK(report.configs_tried == expected.trace.size());
  }
}

std::filesystem::path results_space(const std::string& name) {
  return testing::test_data_dir().parent_path().parent_path() / "results" / "spaces" / name;
}

}  // namespace

TEST_CASE("replay: tune --simulate makes the run cutune score simulates, proposal for proposal", "[replay]") {
  std::vector<Run> runs;
  for (const std::string strategy : {"random", "greedy_ils", "simulated_annealing", search::kDefaultStrategy})
    for (std::uint64_t seed : {7}) {
      runs.push_back({strategy, seed, 60, std::nullopt, 0, 1});
      runs.push_back({strategy, seed, 60, std::nullopt, 12, 1});
      runs.push_back({strategy, seed, 60, std::nullopt, 4, 2});
      runs.push_back({strategy, seed, 60, std::nullopt, 0, 3});
      // A time budget alone: the strategy learns its budget from the first results' pace.
      runs.push_back({strategy, seed, std::nullopt, 20.0, 0, 1});
      runs.push_back({strategy, seed, std::nullopt, 5.0, 12, 1});
      runs.push_back({strategy, seed, 40, 8.0, 3, 2});
    }
  check_same_run(results_space("matmul_2048_nvidia_h100_80gb_hbm3.json.gz"), runs);
}

TEST_CASE("replay: a recording without costs runs alike in both", "[replay][material]") {
  check_same_run(testing::material("formats/kernel_tuner/examples/strategies/test_cache_time_energy.json"),
                 {{"random", 2, 6, std::nullopt, 0, 1},
                  {"bayes_opt", 3, std::nullopt, 7.0, 0, 1},
                  {"greedy_ils", 1, 9, std::nullopt, 4, 1}});
}

TEST_CASE("replay: a recording with a named default runs alike in both", "[replay]") {
  check_same_run(results_space("kt_pnpoly/kt_pnpoly_nvidia_h200.json.gz"),
                 {{"random", 1, 30, std::nullopt, 0, 1}, {"greedy_ils", 5, std::nullopt, 3.0, 12, 2}});
}
