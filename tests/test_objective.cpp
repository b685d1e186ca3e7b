// Kernel Tuner's metrics and objectives: metric expressions over the parameters, time and
// earlier metrics; which objective a tuning ranks by and in which direction; what the
// strategies are told for a higher-is-better metric.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <string>

#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"
#include "cutune/search/objective.hpp"
#include "cutune/search/recorded_space.hpp"
#include "cutune/search/simulation.hpp"
#include "cutune/search/strategy.hpp"

namespace fs = std::filesystem;
using cutune::InputError;
using cutune::KernelProblem;
using cutune::search::Objective;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

using cutune::testing::TempDir;

// `general` and `metrics` are spliced in: General's fields after BenchmarkName, and the
// cutune section's Metrics list.
KernelProblem load_problem(const TempDir& dir, const std::string& general, const std::string& metrics) {
  dir.write("k.cu", "extern \"C\" __global__ void k(float* x, int n) {}\n");
  return KernelProblem::load(dir.write("k.json", R"({
  "General": {"BenchmarkName": "k")" + general + R"(},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": [32, 64, 128], "Default": 64},
      {"Name": "work", "Type": "int", "Values": [1, 2, 4], "Default": 1}
    ]
  },
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": ["n"],
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random", "Size": "n", "FillValue": 1.0},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": "n"}
    ]
  },
  "cutune": {"ProblemVariables": [{"Name": "n", "Default": 1000}], "Metrics": [)" + metrics + R"(]}
})"));
}

const std::string kGflops =
    R"({"Name": "GFLOP/s", "Expression": "work * n / 1e9 / time_s"}, {"Name": "flops_ms", "Expression": "work * n / time"},
       {"Name": "twice", "Expression": "flops_ms * 2"})";

}  // namespace

TEST_CASE("metrics see the tuning parameters, time in ms, time_s and the metrics before them", "[objective]") {
  TempDir dir;
  const KernelProblem p = load_problem(dir, "", kGflops);
  const auto inst = p.instantiate();
  const cutune::Config c = p.space().parse_assignments("work=4");
  const auto m = p.evaluate_metrics(inst, 2e-3, &c);  // 2 ms
  REQUIRE(m.size() == 3);
  CHECK(m[0].first == "GFLOP/s");
  CHECK_THAT(m[0].second, WithinRel(4.0 * 1000 / 1e9 / 2e-3));
  CHECK(m[1].first == "flops_ms");
  CHECK_THAT(m[1].second, WithinRel(4.0 * 1000 / 2.0));  // `time` is milliseconds, as in Kernel Tuner
  CHECK_THAT(m[2].second, WithinRel(4000.0));             // an earlier metric by name
  // Another parameter value gives another value at the same time.
  const cutune::Config c1 = p.space().parse_assignments("work=1");
  CHECK_THAT(p.evaluate_metrics(inst, 2e-3, &c1)[1].second, WithinRel(500.0));
}

TEST_CASE("a metric naming a later metric or an unknown name fails with the metric's name", "[objective]") {
  TempDir dir;
  const KernelProblem p =
      load_problem(dir, "", R"({"Name": "a", "Expression": "b * 2"}, {"Name": "b", "Expression": "time"})");
  const cutune::Config c = p.space().default_config();
  try {
    (void)p.evaluate_metrics(p.instantiate(), 1e-3, &c);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("cutune.Metrics a"));
  }
}

TEST_CASE("the objective: --objective, then General.Objective with its Minimize, then time", "[objective]") {
  TempDir dir;
  {
    const KernelProblem p = load_problem(dir, "", kGflops);
    Objective o = cutune::search::resolve_objective(p, "", std::nullopt);
    CHECK(o.kind == cutune::ObjectiveKind::Time);
    CHECK(o.name() == "time");
    CHECK_FALSE(o.higher_is_better);
    // Kernel Tuner's default direction for a name it knows; lower for others unless told.
    o = cutune::search::resolve_objective(p, "GFLOP/s", std::nullopt);
    CHECK(o.kind == cutune::ObjectiveKind::Metric);
    CHECK(o.metric == "GFLOP/s");
    CHECK(o.higher_is_better);
    o = cutune::search::resolve_objective(p, "flops_ms", std::nullopt);
    CHECK_FALSE(o.higher_is_better);
    o = cutune::search::resolve_objective(p, "flops_ms", true);
    CHECK(o.higher_is_better);
    o = cutune::search::resolve_objective(p, "GFLOP/s", false);
    CHECK_FALSE(o.higher_is_better);
    CHECK_THROWS_AS(cutune::search::resolve_objective(p, "GFLOPs", std::nullopt), InputError);
    CHECK_THROWS_AS(cutune::search::resolve_objective(p, "time", true), InputError);
    CHECK(cutune::search::resolve_objective(p, "energy", std::nullopt) == cutune::Objective::energy());
  }
  {
    // BAT's fields: "Objective": "flops_ms", "Minimize": false.
    const KernelProblem p = load_problem(dir, R"(, "Objective": "flops_ms", "Minimize": false)", kGflops);
    Objective o = cutune::search::resolve_objective(p, "", std::nullopt);
    CHECK(o == cutune::Objective::of_metric("flops_ms", true));
    CHECK(o.higher_is_better);
    o = cutune::search::resolve_objective(p, "", false);  // the flag wins over the file
    CHECK_FALSE(o.higher_is_better);
    o = cutune::search::resolve_objective(p, "time", std::nullopt);  // Minimize is about flops_ms, not time
    CHECK(o.is_time());
    CHECK_FALSE(o.higher_is_better);
  }
  {
    // BAT's GEMM file: "Objective": "GFLOPs", "Minimize": false, and no metric of that name.
    const KernelProblem p = load_problem(dir, R"(, "Objective": "GFLOPs", "Minimize": false)", kGflops);
    std::string warning;
    const Objective o = cutune::search::resolve_objective(p, "", std::nullopt, &warning);
    CHECK(o.is_time());
    CHECK_FALSE(o.higher_is_better);  // never the slowest
    CHECK_THAT(warning, Contains("General.Objective \"GFLOPs\""));
    CHECK_THAT(warning, Contains("tuning on time"));
  }
  {
    TempDir bad;
    CHECK_THROWS_AS(load_problem(bad, R"(, "Minimize": "no")", kGflops), InputError);
  }
}

TEST_CASE("an objective's name is what the edges carry, and a metric keeps its name", "[objective]") {
  using cutune::Objective;
  CHECK(Objective::from_name("time") == Objective::time());
  CHECK(Objective::from_name("energy") == Objective::energy());
  CHECK(Objective::from_name("energy", true) == Objective::energy());  // never higher-is-better
  const Objective gflops = Objective::from_name("GFLOP/s", true);
  CHECK(gflops.kind == cutune::ObjectiveKind::Metric);
  CHECK(gflops.metric == "GFLOP/s");
  CHECK(gflops.higher_is_better);
  for (const Objective& o : {Objective::time(), Objective::energy(), gflops})
    CHECK(Objective::from_name(o.name(), o.higher_is_better) == o);
  CHECK(gflops.better(2.0, 1.0));
  CHECK(Objective::time().better(1.0, 2.0));
  CHECK_FALSE(Objective::time().better(1.0, 1.0));
}

TEST_CASE("a higher-is-better value is told to the strategies as its reciprocal", "[objective]") {
  const Objective higher = Objective::of_metric("GFLOP/s", true), lower = Objective::of_metric("flops_ms", false);
  auto cost = [](double v, const Objective& o) { return cutune::search::observation_for(v, o); };
  CHECK(cost(500.0, higher).valid);
  CHECK_THAT(cost(500.0, higher).objective, WithinRel(1.0 / 500));
  CHECK(cost(800.0, higher).objective < cost(500.0, higher).objective);  // more GFLOP/s: lower cost
  CHECK(cost(800.0, higher).objective > 0.0);                          // positive: log models stay on
  CHECK(cost(0.0, higher).valid == false);
  CHECK(cost(-1.0, higher).valid == false);
  CHECK(cutune::search::observation_for(std::nullopt, higher).valid == false);
  CHECK(cost(3.0, lower).objective == 3.0);
  CHECK(higher.better(2.0, 1.0));
  CHECK_FALSE(higher.better(1.0, 1.0));  // ties keep their order (stable sorts)
  CHECK(lower.better(1.0, 2.0));
  CHECK(cutune::search::kt_default_higher_is_better("GB/s") == true);
  CHECK(cutune::search::kt_default_higher_is_better("time") == false);
  CHECK_FALSE(cutune::search::kt_default_higher_is_better("GFLOPs").has_value());
}

TEST_CASE("every strategy, told reciprocals of a higher-is-better metric, finds its largest, not the fastest",
          "[objective]") {
  // x in 0..5: time 1 + x ms, work (x + 1)^2: GFLOP/s-like work / time grows with x although
  // the time does too. The best by the metric (x = 5) is the slowest configuration.
  using namespace cutune::search;
  const Objective higher = Objective::of_metric("GFLOP/s", true);
  std::vector<RecordedSpace::Entry> entries;
  for (std::uint32_t x = 0; x < 6; ++x) {
    const double time_ms = 1.0 + x, metric = (x + 1.0) * (x + 1.0) / time_ms;
    entries.push_back({cutune::Config{{x}}, RecordedResult{observation_for(metric, higher), 0.1}});
  }
  const RecordedSpace space("metric", {cutune::Parameter{"x", {0, 1, 2, 3, 4, 5}, 0}}, entries);
  for (const auto& name : strategy_names()) {
    INFO("strategy " << name);
    auto strategy = make_strategy(space.space(), StrategyOptions{name, 7, std::nullopt});
    SimulationOptions options;
    options.session.max_evaluations = 6;
    const auto result = simulate(space, *strategy, options);
    const TraceEntry* best = nullptr;
    for (const auto& e : result.trace)
      if (e.observation.valid && (!best || e.observation.objective < best->observation.objective)) best = &e;
    REQUIRE(best);
    // Whatever the strategy visited, the lowest cost is the largest metric among those visited.
    double largest = 0.0;
    for (const auto& e : result.trace) largest = std::max(largest, 1.0 / e.observation.objective);
    CHECK_THAT(1.0 / best->observation.objective, WithinRel(largest));
    if (result.trace.size() == 6) CHECK(best->config == cutune::Config{{5}});
  }
}

TEST_CASE("lower-is-better metric: the smallest wins, equal values keep the first", "[objective]") {
  const Objective lower = Objective::of_metric("cost", false), higher = Objective::of_metric("GFLOP/s", true);
  std::vector<std::pair<double, int>> v{{3.0, 0}, {1.0, 1}, {1.0, 2}, {7.0, 3}};
  auto ranked = [&](const Objective& o) {
    auto copy = v;
    std::stable_sort(copy.begin(), copy.end(), [&](const auto& a, const auto& b) { return o.better(a.first, b.first); });
    return copy;
  };
  CHECK(ranked(lower).front().second == 1);  // tie of 1 and 2: the first stored stays first
  CHECK(ranked(lower)[1].second == 2);
  CHECK(ranked(higher).front().second == 3);
  CHECK(ranked(higher).back().first == 1.0);
}
