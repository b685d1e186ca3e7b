// Scoring by the methodology of Willemsen, van Nieuwpoort and van Werkhoven,
// checked against values computed by hand, and recorded spaces read from Kernel Tuner files.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/search/scoring.hpp"
#include "cutune/search/scoring_table.hpp"
#include "cutune/search/simulation.hpp"
#include "test_paths.hpp"

using namespace cutune;
using namespace cutune::search;

namespace {

Config cfg(std::uint32_t i) { return Config{{i}}; }

RecordedSpace line_space(const std::vector<double>& objective, const std::vector<double>& cost) {
  std::vector<RecordedSpace::Entry> e;
  ValueList values;
  for (std::uint32_t x = 0; x < objective.size(); ++x) {
    values.emplace_back(static_cast<int>(x));
    e.push_back({cfg(x), RecordedResult{Observation{true, objective[x]}, cost[x]}});
  }
  return RecordedSpace("line", {Parameter{"x", values, 0}}, e);
}

std::filesystem::path shared_space(const char* name) {
  return cutune::testing::material(std::string("data/spaces/") + name);
}

struct Cli {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// cutune with `args` (a shell-quoted string), stdout and stderr captured.
Cli run_cutune(const std::string& args, const std::filesystem::path& dir) {
  const auto out = dir / "stdout", err = dir / "stderr";
  const int rc = std::system(fmt::format("'{}' {} >'{}' 2>'{}'", CUTUNE_CLI_PATH, args, out.string(), err.string()).c_str());
  return Cli{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
}

}  // namespace

TEST_CASE("scoring: F(p), T(p), B(t), S(t), P(t) on a 5-configuration space by hand", "[scoring]") {
  // Objectives x0..x4 = 5, 4, 3, 2, 1 ms; costs 0.25, 0.5, 0.5, 0.5, 0.25 s.
  //   v = [1 2 3 4 5], N = 5, f* = 1, m = 3, w = [5 4 3 2 1]; median cost 0.5, tau = 2/5 = 0.4.
  //   F(0.5):  target 1 + 2 x 0.5 = 2, i = 3 (w[3] = 2): ceil(3 / 3) = 1.
  //   F(0.96): target 1.08, i = 4 (w[4] = 1 = f*, so i steps back to 3): ceil(3 / 3) = 1.
  //   Window of fewer than 2 evaluations: widened to F 0..2, so t from 0 to 2 x 0.5 = 1 s;
  //   5 points: t = 0, 0.25, 0.5, 0.75, 1.
  //   B: t / tau = 0, 0.625, 1.25, 1.875, 2.5 -> M = 1, 1, 1, 2, 2 (2.5 rounds half to even)
  //      M = 1: round(1 x 6 / 2) = 3 -> w[3] = 2; M = 2: round(2 x 6 / 3) = 4 -> w[4] = 1.
  //      B = [2 2 2 1 1].
  //   Runs (elapsed time: best so far): A: x1 0.5 s, x3 1.0 s, x4 1.25 s; B: x4 0.25 s;
  //      C: x0 0.25 s, x2 0.75 s. Best so far (nothing yet = the worst, 5):
  //      A [5 5 4 4 2], B [5 1 1 1 1], C [5 5 5 3 3] -> S = median = [5 5 4 3 2].
  //   P = (S - B) / (f* - B): [-3 -3 -2], then B = f* and S != f*: 0, 0. Score -8/5 = -1.6.
  RecordedSpace space = line_space({5, 4, 3, 2, 1}, {0.25, 0.5, 0.5, 0.5, 0.25});
  ScoringOptions o;
  o.points = 5;
  o.curve = CurveMethod::Median;
  SpaceScoring s(space, o);
  CHECK(s.size() == 5);
  CHECK(s.optimum() == 1.0);
  CHECK(s.median() == 3.0);
  CHECK(s.median_cost_s() == 0.5);
  CHECK(s.mean_cost_s() == Approx(0.4));
  CHECK(s.fevals_to(0.5) == 1);
  CHECK(s.fevals_to(0.96) == 1);
  REQUIRE(s.times().size() == 5);
  CHECK(s.window_start_s() == 0.0);
  CHECK(s.window_end_s() == Approx(1.0));
  std::vector<double> b;
  for (double t : s.times()) b.push_back(s.baseline(t));
  CHECK(b == std::vector<double>{2, 2, 2, 1, 1});
  const std::vector<std::vector<TraceEntry>> runs{replay_trace(space, {cfg(1), cfg(3), cfg(4)}, "A"),
                                                  replay_trace(space, {cfg(4)}, "B"),
                                                  replay_trace(space, {cfg(0), cfg(2)}, "C")};
  const auto curve = s.strategy_curve(runs);
  CHECK(curve == std::vector<double>{5, 5, 4, 3, 2});
  const auto p = s.performance(curve);
  CHECK(p == std::vector<double>{-3, -3, -2, 0, 0});
  CHECK(s.score(runs) == Approx(-1.6));
  // An even number of repeats takes the mean of the two middle ones (numpy.median).
  const auto two = s.strategy_curve({runs[0], runs[1]});
  CHECK(two == std::vector<double>{5, 3, 2.5, 2.5, 1.5});

  // The reference's estimator on the same runs. Points (time, rank of the best so far in v)
  // within the window plus a margin of 0.1 + 0.25 x 3 runs / 6 evaluations = 0.225 (up to
  // 1.225 s; A's 1.25 s is out): (0.25, 0) and (0.25, 4) -> 2 with weight 2, (0.5, 3),
  // (0.75, 2), (1.0, 1). Non-increasing fit: 2 < 3 pools to 7/3 at 0.25 and 0.5; then 2, 1.
  // At t = 0 .. 1: 7/3, 7/3, 7/3, 2, 1 -> ranks 2 2 2 2 1 -> S = v[rank] = [3 3 3 3 2]. The
  // runs end (last valid) at 1.25, 0.25, 0.75: median 0.75, next 1.25 is past the window.
  o.curve = CurveMethod::Isotonic;
  SpaceScoring iso(space, o);
  CHECK(iso.strategy_curve(runs) == std::vector<double>{3, 3, 3, 3, 2});

  // Runs that found nothing valid (every evaluation failed): the worst valid value throughout,
  // by either estimator, so such a strategy scores below random search instead of stopping the
  // table. P = (5 - B) / (1 - B) = [-3 -3 -3], then 0 where B = f*: -9/5.
  TraceEntry failed;
  failed.config = cfg(0);
  failed.observation.valid = false;
  failed.cost_s = failed.elapsed_s = 0.25;
  const std::vector<std::vector<TraceEntry>> none{{failed}, {failed}};
  CHECK(iso.strategy_curve(none) == std::vector<double>(5, 5.0));
  CHECK(s.strategy_curve(none) == std::vector<double>(5, 5.0));
  CHECK(iso.score(none) == Approx(-9.0 / 5));
}

TEST_CASE("scoring: F(p) and B(t) on 9 configurations by hand", "[scoring]") {
  // v = 1..9, m = 5, w = 9..1, every cost 1 s (median 1, tau 1).
  //   F(0.5):  target 3, i = 6: ceil(6 / 4) = 2.   F(0.75): target 2, i = 7: ceil(7 / 3) = 3.
  //   F(0.96): target 1.16, i = 8 is f*, steps back to 7: 3. T(p) = F(p) x 1 s.
  //   B(1): M = 1, round(10 / 2) = 5 -> w[5] = 4.   B(2): round(20 / 3) = 7 -> w[7] = 2.
  //   B(2.5): M = round(2.5) = 2 (half to even) -> 2.   B(3): round(30 / 4 = 7.5) = 8 -> 1.
  RecordedSpace space = line_space({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 1.0));
  SpaceScoring s(space);
  CHECK(s.fevals_to(0.5) == 2);
  CHECK(s.fevals_to(0.75) == 3);
  CHECK(s.fevals_to(0.96) == 3);
  CHECK(s.time_to(0.96) == 3.0);
  CHECK(s.times().size() == 1000);
  // 2 .. 3 s is a window of one evaluation: widened to 1 .. 4 s.
  CHECK(s.window_start_s() == 1.0);
  CHECK(s.window_end_s() == 4.0);
  CHECK(s.baseline(1.0) == 4.0);
  CHECK(s.baseline(2.0) == 2.0);
  CHECK(s.baseline(2.5) == 2.0);
  CHECK(s.baseline(3.0) == 1.0);
  CHECK(s.baseline(0.1) == 4.0);  // M is at least 1
}

TEST_CASE("scoring: the sampling error of a score, from disjoint subsets of its runs", "[scoring]") {
  // The 9-configuration line, every cost 1 s: a run that evaluates the optimum first, and one
  // that evaluates from the worst up.
  const RecordedSpace space = line_space({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 1.0));
  const SpaceScoring s(space);
  std::vector<Config> best_first, worst_first;
  for (std::uint32_t i = 0; i < 9; ++i) best_first.push_back(cfg(8 - i)), worst_first.push_back(cfg(i));
  const auto good = replay_trace(space, best_first, "good"), bad = replay_trace(space, worst_first, "bad");
  // Fewer than two subsets of kErrorSubsetRuns: not estimated.
  CHECK(std::isnan(sampling_error(s, std::vector<std::vector<TraceEntry>>(2 * kErrorSubsetRuns - 1, good))));
  // Runs all alike: no spread.
  CHECK(sampling_error(s, std::vector<std::vector<TraceEntry>>(2 * kErrorSubsetRuns, good)) == 0.0);
  // Two subsets, one of good runs and one of bad, in that order: the standard deviation of their
  // two scores is |a - b| / sqrt(2), scaled by sqrt(5 / 10).
  std::vector<std::vector<TraceEntry>> runs(kErrorSubsetRuns, good);
  runs.insert(runs.end(), kErrorSubsetRuns, bad);
  const double a = s.score(std::vector<std::vector<TraceEntry>>(kErrorSubsetRuns, good));
  const double b = s.score(std::vector<std::vector<TraceEntry>>(kErrorSubsetRuns, bad));
  REQUIRE(a > b);
  CHECK(sampling_error(s, runs) == Approx((a - b) / std::sqrt(2.0) * std::sqrt(0.5)));
  // A trailing partial subset is left out.
  runs.push_back(bad);
  CHECK(sampling_error(s, runs) == Approx((a - b) / std::sqrt(2.0) * std::sqrt(5.0 / 11.0)));
}

TEST_CASE("scoring: a space with nothing to score is an InputError", "[scoring]") {
  CHECK_THROWS_AS(SpaceScoring(line_space({2, 2, 2}, {1, 1, 1})), InputError);
  CHECK_THROWS_AS(SpaceScoring(line_space({1}, {0})), InputError);
}

TEST_CASE("scoring: a space without recorded costs is scored in evaluations", "[scoring]") {
  // The 9 configurations of the case above without costs: every evaluation costs 1, so the
  // window and the baseline are those of the 1 s costs, counted in evaluations.
  const RecordedSpace space = line_space({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 0.0));
  CHECK(space.cost_unit() == CostUnit::Evaluations);
  for (const auto& e : space.entries()) CHECK(e.result.cost_s == 1.0);
  SpaceScoring s(space);
  CHECK(s.unit() == CostUnit::Evaluations);
  CHECK(s.median_cost_s() == 1.0);
  CHECK(s.mean_cost_s() == 1.0);
  CHECK(s.time_to(0.96) == static_cast<double>(s.fevals_to(0.96)));  // T(p) = F(p) evaluations
  CHECK(s.window_start_s() == 1.0);
  CHECK(s.window_end_s() == 4.0);
  CHECK(s.baseline(2.0) == 2.0);  // M(t) = t
  CHECK(s.expected_evaluations() == 4);
  // A simulated run's budget is then an evaluation count: 4 evaluations, whatever they are
  // (asked one at a time: a batch asked before the budget ran out is evaluated in full).
  auto strategy = make_strategy(space.space(), StrategyOptions{"random", 3, std::nullopt});
  SimulationOptions sim;
  sim.batch = 1;
  sim.session.max_time_s = s.window_end_s();
  const auto run = simulate(space, *strategy, sim);
  CHECK(run.trace.size() == 4);
  CHECK(run.trace.back().elapsed_s == 4.0);
  // Costs of NaN count as absent too.
  CHECK(line_space({2, 1}, {std::nan(""), 0.0}).cost_unit() == CostUnit::Evaluations);
}

TEST_CASE("scoring: mixed recorded and absent costs", "[scoring]") {
  // Most valid configurations have a cost: seconds, the gaps get their kind's median (valid
  // 2 s: the median of 1, 2, 3); a space where most have none is scored in evaluations.
  const RecordedSpace some = line_space({5, 4, 3, 2, 1}, {1, 0, 2, 3, 0});
  CHECK(some.cost_unit() == CostUnit::Seconds);
  CHECK(some.imputed_costs() == 2);
  CHECK(some.entries()[1].result.cost_s == 2.0);
  CHECK(some.entries()[4].result.cost_s == 2.0);
  CHECK(some.entries()[0].result.cost_s == 1.0);  // recorded costs stay
  const RecordedSpace few = line_space({5, 4, 3, 2, 1}, {1, 0, 0, 3, 0});
  CHECK(few.cost_unit() == CostUnit::Evaluations);
  for (const auto& e : few.entries()) CHECK(e.result.cost_s == 1.0);
  // A failure without a cost gets the failures' median, or all entries' when no failure has one.
  std::vector<RecordedSpace::Entry> e;
  for (std::uint32_t x = 0; x < 4; ++x)
    e.push_back({cfg(x), RecordedResult{Observation{x < 3, 4.0 - x}, x < 3 ? 1.0 + x : 0.0}});
  const RecordedSpace failing("f", {Parameter{"x", {0, 1, 2, 3}, 0}}, e);
  CHECK(failing.cost_unit() == CostUnit::Seconds);
  CHECK(failing.entries()[3].result.cost_s == 2.0);
}

TEST_CASE("scoring: the failure-aware baseline by hand", "[scoring]") {
  // 4 valid (objective 1..4: w = [4 3 2 1]) and 4 failed configurations, every cost 1 s
  // (tau = 1, M = t). E[X] = N - (N_all - M) / (M + 1) + P0 (F - M) / (M + 1):
  //   M = 1: P0 = 4/8, 4 - 7/2 + 0.5 x 3/2 = 1.25 -> w[1] = 3 (methodology: round(5/2) = 2 -> 2)
  //   M = 2: P0 = 4/8 x 3/7 = 3/14, 4 - 2 + 3/14 x 2/3 = 2.14 -> w[2] = 2 (methodology: 1)
  //   M = 4: P0 = 1/70, 4 - 4/5 + 0 = 3.2 -> w[3] = 1.
  // (M = 1 by enumeration: the draw is a failure (X = 0) half the time, else X = 1..4: 10/8.)
  std::vector<RecordedSpace::Entry> e;
  ValueList values;
  for (std::uint32_t x = 0; x < 8; ++x) {
    values.emplace_back(static_cast<int>(x));
    e.push_back({cfg(x), RecordedResult{Observation{x % 2 == 0, 4.0 - x / 2}, 1.0}});
  }
  const RecordedSpace space("half", {Parameter{"x", values, 0}}, e);
  SpaceScoring s(space);
  CHECK(s.configurations() == 8);
  CHECK(s.size() == 4);
  CHECK(s.baseline_failure_aware(1.0) == 3.0);
  CHECK(s.baseline(1.0) == 2.0);
  CHECK(s.baseline_failure_aware(2.0) == 2.0);
  CHECK(s.baseline(2.0) == 1.0);
  CHECK(s.baseline_failure_aware(4.0) == 1.0);
  CHECK(s.baseline_failure_aware(100.0) == 1.0);  // M is at most N_all
  // Without failures it is the methodology's baseline.
  const SpaceScoring clean(line_space({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 1.0)));
  for (double t : {0.1, 1.0, 2.0, 2.5, 3.0, 4.0, 7.0, 20.0}) CHECK(clean.baseline_failure_aware(t) == clean.baseline(t));
}

TEST_CASE("scoring: random search scores about 0 on the failure-aware baseline with 25% failures", "[scoring]") {
  // 3000 valid configurations (objective 1..3000 in a shuffled order) and 1000 failures, every
  // cost 1 s. The methodology's baseline draws only valid ones, so sampled random search,
  // a quarter of whose draws fail, falls short of it; the failure-aware one is its expectation.
  std::vector<RecordedSpace::Entry> e;
  ValueList values;
  std::vector<double> objective(3000);
  for (std::size_t i = 0; i < objective.size(); ++i) objective[i] = static_cast<double>((i * 1117) % 3000 + 1);
  std::size_t next = 0;
  for (std::uint32_t x = 0; x < 4000; ++x) {
    values.emplace_back(static_cast<int>(x));
    const bool valid = x % 4 != 1;
    e.push_back({cfg(x), RecordedResult{Observation{valid, valid ? objective[next++] : 0.0}, 1.0}});
  }
  std::vector<RecordedSpace> spaces;
  spaces.emplace_back("failing", std::vector<Parameter>{Parameter{"x", values, 0}}, e);
  ComparisonOptions o;
  o.strategies = {"random"};
  o.repeats = 300;  // at 150 the repeats' own scatter is about 0.04 (0.002 here at 300)
  o.scoring.points = 200;
  o.default_first = false;  // random search's own score, not the loop's default evaluation before it
  const ScoreTable t = compare_strategies(spaces, o);
  REQUIRE(t.rows.size() == 1);
  INFO("methodology " << t.rows[0].overall << ", failure-aware " << t.rows[0].overall_failure_aware);
  CHECK(std::abs(t.rows[0].overall_failure_aware) < 0.05);
  CHECK(t.rows[0].overall < -0.2);  // -0.34
  CHECK(t.rows[0].per_space_failure_aware[0] == t.rows[0].overall_failure_aware);
  CHECK(format_score_table(t).find("failure-aware") != std::string::npos);
}

TEST_CASE("scoring: recorded spaces from Kernel Tuner's files", "[scoring][material]") {
  const auto cache = shared_space("convolution_A100.json.gz");
  const auto t4 = shared_space("convolution_A100_T4.json.gz");
  const RecordedSpace a = replay::load_recorded_space(cache);
  const RecordedSpace b = replay::load_recorded_space(t4);
  CHECK(a.name() == "convolution_A100");
  CHECK(a.entries().size() == 4362);
  CHECK(a.space().count_valid() == 4362);  // valid = recorded
  std::size_t failed = 0;
  for (const auto& e : a.entries()) failed += e.result.observation.valid ? 0 : 1;
  CHECK(failed == 161);
  // The first entry: time 3.8753279224038124 ms, compile 918.599 + benchmark 126.383 +
  // verification 0 ms.
  CHECK(a.entries()[0].result.observation.objective == Approx(3.8753279224038124));
  CHECK(a.entries()[0].result.cost_s == Approx((918.5990339610726 + 126.3829180970788) / 1e3));
  // The same space in T4 form: the same statistics; costs within 5% (T4 has no benchmark
  // time, the sum of the runtimes stands in for it).
  SpaceScoring sa(a), sb(b);
  CHECK(sb.size() == sa.size());
  CHECK(sb.optimum() == Approx(sa.optimum()));
  CHECK(sb.window_end_s() == Approx(sa.window_end_s()).epsilon(0.05));

  const auto bad = std::filesystem::path(CUTUNE_TEST_DATA_DIR) / "faulty" / "faulty.cu";
  CHECK_THROWS_AS(replay::load_recorded_space(bad), InputError);
}

TEST_CASE("scoring: cutune's runs start with the default configuration, as its tuning loop does", "[scoring]") {
  // 9 configurations, objective 9..1 in the listing order, every cost 1 s; the default is the
  // last listed, the optimum. Brute force walks the listing: alone it reaches the optimum last;
  // after the loop's default evaluation it has it from the first second.
  std::vector<RecordedSpace::Entry> e;
  ValueList values;
  for (std::uint32_t x = 0; x < 9; ++x) {
    values.emplace_back(static_cast<int>(x));
    e.push_back({cfg(x), RecordedResult{Observation{true, 9.0 - x}, 1.0}});
  }
  std::vector<RecordedSpace> spaces;
  spaces.emplace_back("default_last", std::vector<Parameter>{Parameter{"x", values, 8}}, e);
  spaces[0].set_default_named(true);  // as a cache's cutune_default names it
  CHECK(loop_first(spaces[0]) == std::vector<Config>{cfg(8)});
  ComparisonOptions o;
  o.strategies = {"brute_force"};
  o.repeats = 1;
  o.scoring.points = 50;
  CHECK(ComparisonOptions{}.default_first);
  const double with_default = compare_strategies(spaces, o).rows.at(0).overall;
  o.default_first = false;
  const double alone = compare_strategies(spaces, o).rows.at(0).overall;
  CHECK(with_default == Approx(1.0));
  CHECK(alone < 0.0);
}

TEST_CASE("scoring: a cache's cutune_default is the default a replay evaluates first", "[scoring]") {
  // What cutune writes for a tuning that evaluates the default first: the space's default beside
  // the lists (here the last listed value); nothing otherwise.
  const Space space({Parameter{"x", {1, 2, 3}, 3}}, {});
  DeviceIdentity d;
  d.name = "NVIDIA Test GPU";
  db::kt::KtCacheHeader h = db::kt::cache_header("k", space, {8}, d);
  CHECK_FALSE(h.extra.contains(db::kt::kDefaultField));
  db::kt::set_default_field(h, space);
  REQUIRE(h.extra.contains(db::kt::kDefaultField));
  CHECK(h.extra.at(db::kt::kDefaultField) == nlohmann::ordered_json{{"x", 3}});

  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_scoring_default_{}", ::getpid());
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& default_field) {
    const auto path = dir / name;
    std::ofstream(path) << R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["x"], )"
                        << R"("tune_params": {"x": [1, 2, 3]}, "objective": ["time"], )" << default_field << R"("cache": {)"
                        << R"("1": {"x": 1, "time": 3.0, "times": [3.0], "compile_time": 10, "verification_time": 0, "benchmark_time": 5},)"
                        << R"("2": {"x": 2, "time": 2.0, "times": [2.0], "compile_time": 10, "verification_time": 0, "benchmark_time": 5},)"
                        << R"("3": {"x": 3, "time": 1.0, "times": [1.0], "compile_time": 10, "verification_time": 0, "benchmark_time": 5}}})";
    return path;
  };
  const RecordedSpace with = replay::load_recorded_space(write("with.json", R"("cutune_default": {"x": 3}, )"));
  CHECK(loop_first(with) == std::vector<Config>{cfg(2)});
  // Without the field (every Kernel Tuner cache): nothing before the strategy's proposals.
  const RecordedSpace without = replay::load_recorded_space(write("without.json", ""));
  CHECK(loop_first(without).empty());
  CHECK(without.space().default_config() == cfg(0));
  // A default that is not one of the values, or names no value for a parameter: one line
  // naming the file and the field.
  for (const char* bad : {R"("cutune_default": {"x": 7}, )", R"("cutune_default": {"y": 1}, )",
                          R"("cutune_default": [3], )"}) {
    try {
      (void)replay::load_recorded_space(write("bad.json", bad));
      FAIL("accepted " << bad);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("bad: cutune_default"));
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("scoring: N evaluators divide the window and multiply the baseline's evaluations", "[scoring]") {
  // The 9 configurations above: with 2 evaluators random search makes by t what one makes by
  // 2t, so B_2(t) = B_1(2t) and the window 1 .. 4 s becomes 0.5 .. 2 s.
  RecordedSpace space = line_space({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 1.0));
  ScoringOptions o;
  o.workers = 2;
  SpaceScoring two(space, o), one(space);
  CHECK(two.workers() == 2);
  CHECK(two.window_start_s() == 0.5);
  CHECK(two.window_end_s() == 2.0);
  for (double t : {0.5, 1.0, 1.25, 1.5, 2.0}) CHECK(two.baseline(t) == one.baseline(2 * t));
  CHECK(two.expected_evaluations() == one.expected_evaluations());
  o.workers = 0;
  CHECK_THROWS_AS(SpaceScoring(space, o), InputError);
}

TEST_CASE("scoring: random search scores about 0, the comparison table", "[scoring][material]") {
  const auto path = shared_space("dedispersion_A100.json.gz");
  std::vector<RecordedSpace> spaces;
  spaces.push_back(replay::load_recorded_space(path));
  ComparisonOptions o;
  o.strategies = {"random", "brute_force"};
  o.repeats = 30;
  o.scoring.points = 200;
  o.default_first = false;  // the strategies alone: random search's own score
  const ScoreTable t = compare_strategies(spaces, o);
  REQUIRE(t.rows.size() == 2);
  double random_score = NAN;
  for (const auto& r : t.rows)
    if (r.strategy == "random") random_score = r.overall;
  // The calculated baseline is random search's expected best: the median of 30 random runs
  // lands near it (P is relative to the gap between baseline and optimum).
  CHECK(std::abs(random_score) < 0.3);
  // Every row has its standard errors: random's spread across runs is not 0, brute force
  // runs alike every time.
  for (const auto& r : t.rows) {
    REQUIRE(r.per_space_error.size() == 1);
    if (r.strategy == "random") CHECK(r.per_space_error[0] > 0.0);
    if (r.strategy == "brute_force") CHECK(r.per_space_error[0] == 0.0);
    CHECK(r.overall_error == Approx(r.per_space_error[0]));
  }
  CHECK(format_score_table(t).find("random") != std::string::npos);
  o.strategies = {"no_such"};
  CHECK_THROWS_AS(compare_strategies(spaces, o), InputError);
}

TEST_CASE("scoring: cutune tune --simulate and cutune score on the command line", "[scoring][material]") {
  const auto cache = cutune::testing::material("formats/kernel_tuner/examples/strategies/test_cache_time_energy.json");
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_scoring_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "sim.db").string(), trace_file = (dir / "trace.json").string();
  // 15 recorded configurations: a budget of 4, then resumed to 6 from the DB.
  Cli a = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 2 --budget 4 --db '{}' --trace '{}'",
                                 cache.string(), db, trace_file), dir);
  INFO(a.out << a.err);
  REQUIRE(a.status == 0);
  CHECK(a.out.find("4 evaluations (0 resumed") != std::string::npos);
  CHECK(std::filesystem::file_size(trace_file) > 0);
  Cli b = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 2 --budget 6 --resume --db '{}'",
                                 cache.string(), db), dir);
  INFO(b.out << b.err);
  CHECK(b.status == 0);
  CHECK(b.out.find("6 evaluations (4 resumed") != std::string::npos);
  // --try as a tuning takes it: first here (the cache names no default); one not recorded is
  // refused before the DB is touched.
  Cli tried = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 2 --budget 2 --try block_size_x=256",
                                     cache.string()), dir);
  INFO(tried.out << tried.err);
  REQUIRE(tried.status == 0);
  CHECK(tried.out.rfind("[1] 256,1080 ", 0) == 0);
  const auto db_size = std::filesystem::file_size(db);
  Cli untried = run_cutune(fmt::format("tune --simulate '{}' --budget 2 --try block_size_x=100 --db '{}'",
                                       cache.string(), db), dir);
  CHECK(untried.status == 2);
  CHECK_THAT(untried.err, Catch::Contains("--try block_size_x=100"));
  CHECK(std::filesystem::file_size(db) == db_size);
  // As the tuning loop runs: 4 compiles at once ahead of the GPU, the same 6 evaluations in
  // less simulated time than in series (this cache's configurations cost 0.56 s of compile and
  // 0.1 s of benchmark each).
  Cli p = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 2 --budget 6", cache.string()), dir);
  Cli q = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 2 --budget 6 --compile-workers 4",
                                 cache.string()), dir);
  INFO(p.out << q.out << q.err);
  REQUIRE(p.status == 0);
  REQUIRE(q.status == 0);
  CHECK(q.out.find("as the tuning loop runs: 4 compile workers ahead of the GPU") != std::string::npos);
  auto simulated_s = [](const std::string& out) {
    const auto at = out.find(" revisits, ");
    return at == std::string::npos ? 0.0 : std::stod(out.substr(at + 11));
  };
  CHECK(simulated_s(q.out) > 0.0);
  CHECK(simulated_s(q.out) < 0.5 * simulated_s(p.out));
  // A time budget alone: the strategy plans for the evaluations the first 8 results' pace
  // gives (2 x 7 s / 0.691 s, at most the 15 recorded); given --budget it plans with that.
  Cli t = run_cutune(fmt::format("tune --simulate '{}' --seed 2 --time-budget 7", cache.string()), dir);
  Cli u = run_cutune(fmt::format("tune --simulate '{}' --seed 2 --time-budget 7 --budget 9", cache.string()), dir);
  INFO(t.out << t.err << u.out << u.err);
  REQUIRE(t.status == 0);
  REQUIRE(u.status == 0);
  CHECK(t.out.find("--time-budget 7.0 s at the pace of the first 8 results (0.691 s per evaluation): "
                   "bandit_portfolio planned for 15 evaluations") != std::string::npos);
  CHECK(u.out.find("at the pace of") == std::string::npos);
  // In series, what was asked and not started when the budget was spent is dropped: the run
  // ends with the evaluation that crossed 7 s (each costs at most 0.8 s here), where the rest
  // of a batch of 8 used to run on to 10.4 s.
  CHECK(simulated_s(t.out) >= 7.0);
  CHECK(simulated_s(t.out) < 7.8);
  Cli v = run_cutune(fmt::format("score --spaces '{}' --strategies bayes_opt --repeats 2 --budget-from-pace --json '{}'",
                                 cache.string(), (dir / "paced.json").string()), dir);
  INFO(v.out << v.err);
  REQUIRE(v.status == 0);
  CHECK(v.out.find("evaluation budgets learnt from the pace of the first results") != std::string::npos);
  {
    std::ifstream in(dir / "paced.json");
    CHECK(nlohmann::json::parse(in)["budget_from_pace"] == true);
  }
  Cli r = run_cutune(fmt::format("tune --simulate '{}' --lookahead 3 --db '{}'", cache.string(), (dir / "l.db").string()), dir);
  CHECK(r.status == 2);
  CHECK(r.err.find("--compile-workers") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "l.db"));
  // Bad input: one line naming what is wrong, exit 2.
  Cli c = run_cutune("tune --simulate /no/such/cache.json", dir);
  CHECK(c.status == 2);
  CHECK(c.err.find("/no/such/cache.json") != std::string::npos);
  Cli d = run_cutune("tune", dir);
  CHECK(d.status == 2);
  CHECK(d.err.find("KERNEL") != std::string::npos);
  // score with another tool's runs; a key that is not recorded is bad input.
  {
    std::ofstream t(dir / "kt.json");
    t << R"({"traces": [{"space": "test_cache_time_energy", "strategy": "kt:x", "runs": [["128,1080", "256,1080"]]}]})";
  }
  Cli e = run_cutune(fmt::format("score --spaces '{}' --strategies random,greedy_ils --repeats 3 --traces '{}' --json '{}'",
                                 cache.string(), (dir / "kt.json").string(), (dir / "s.json").string()), dir);
  INFO(e.out << e.err);
  CHECK(e.status == 0);
  CHECK(e.out.find("kt:x") != std::string::npos);
  CHECK(e.out.find("greedy_ils") != std::string::npos);
  {
    std::ofstream t(dir / "bad.json");
    t << R"({"traces": [{"space": "test_cache_time_energy", "strategy": "kt:x", "runs": [["129,1080"]]}]})";
  }
  Cli f = run_cutune(fmt::format("score --spaces '{}' --traces '{}'", cache.string(), (dir / "bad.json").string()), dir);
  CHECK(f.status == 2);
  CHECK(f.err.find("runs[0]") != std::string::npos);
  // random and bayes_opt, 3 runs, with the options given, the JSON to `json`: it must succeed.
  auto score = [&](const std::string& options, const std::string& json) {
    Cli r = run_cutune(fmt::format("score --spaces '{}' --strategies random,bayes_opt --repeats 3 {} --json '{}'",
                                   cache.string(), options, (dir / json).string()), dir);
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    return r;
  };
  // With 4 evaluators: the table says so, the JSON too; sequential traces are refused.
  Cli g = score("--workers 4", "w.json");
  CHECK(g.out.find("4 evaluators at once") != std::string::npos);
  CHECK(slurp(dir / "w.json").find("\"workers\": 4") != std::string::npos);
  // Asked one at a time (as Kernel Tuner's sequential runner): the JSON records the batch.
  Cli one = score("--batch 1", "b.json");
  CHECK(one.out.find("proposals asked 1 at a time") != std::string::npos);
  CHECK(slurp(dir / "b.json").find("\"batch\": 1,") != std::string::npos);
  // As cutune's tuning loop runs (4 compile workers ahead of the GPU): said, recorded, and the
  // strategies' planning budget is at least the one in series (compiles overlap).
  Cli pipe = score("--batch 1 --compile-workers 4", "c.json");
  CHECK(pipe.out.find("4 compile workers ahead of the evaluators, lookahead by the loop's rule") != std::string::npos);
  {
    const auto serial = nlohmann::json::parse(slurp(dir / "b.json")), pipelined = nlohmann::json::parse(slurp(dir / "c.json"));
    CHECK(serial["compile_workers"] == 0);
    CHECK(pipelined["compile_workers"] == 4);
    CHECK(pipelined["spaces"][0]["evaluation_budget"].get<int>() >= serial["spaces"][0]["evaluation_budget"].get<int>());
    CHECK(pipelined["spaces"][0]["time_budget_s"] == serial["spaces"][0]["time_budget_s"]);  // the same window
  }
  Cli h = run_cutune(fmt::format("score --spaces '{}' --workers 4 --traces '{}'", cache.string(),
                                 (dir / "kt.json").string()), dir);
  CHECK(h.status == 2);
  CHECK(h.err.find("sequential") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("scoring: cutune score and tune --simulate on a cache with times only", "[scoring]") {
  // A Kernel Tuner cache as a script without cost fields leaves it: one "time" per
  // configuration, no compile/verification/benchmark time; one configuration failed.
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_scoring_evals_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto cache = dir / "times_only.json";
  {
    std::ofstream f(cache);
    f << R"({"device_name": "NVIDIA A100-PCIE-40GB", "kernel_name": "k", "problem_size": 1024,
"tune_params_keys": ["bx", "u"], "tune_params": {"bx": [32, 64, 128, 256], "u": [1, 2, 4]}, "objective": "time",
"cache": {)";
    bool first = true;
    for (int bx : {32, 64, 128, 256})
      for (int u : {1, 2, 4}) {
        f << (first ? "" : ",") << fmt::format("\n\"{},{}\": {{\"bx\": {}, \"u\": {}, ", bx, u, bx, u);
        if (bx == 256 && u == 4) f << R"("__error__": "RuntimeFailedConfig"})";
        else f << fmt::format(R"("time": {}, "times": [{}]}})", 1.0 + std::abs(bx - 128) / 32.0 + u * 0.1,
                              1.0 + std::abs(bx - 128) / 32.0 + u * 0.1);
        first = false;
      }
    f << "\n}}\n";
  }
  const RecordedSpace space = replay::load_recorded_space(cache);
  CHECK(space.cost_unit() == CostUnit::Evaluations);
  {
    std::ofstream t(dir / "kt.json");  // another tool's run on it
    t << R"({"traces": [{"space": "times_only", "strategy": "kt:x", "runs": [["32,1", "128,1", "256,4"]]}]})";
  }
  Cli a = run_cutune(fmt::format("score --spaces '{}' --strategies random,greedy_ils --repeats 5 --traces '{}' --json '{}'",
                                 cache.string(), (dir / "kt.json").string(), (dir / "s.json").string()),
                     dir);
  INFO(a.out << a.err);
  REQUIRE(a.status == 0);
  CHECK(a.out.find("scored in evaluations") != std::string::npos);
  CHECK(a.out.find("kt:x") != std::string::npos);
  std::ifstream in(dir / "s.json");
  const auto j = nlohmann::json::parse(in);
  const auto& sp = j["spaces"][0];
  CHECK(sp["cost_unit"] == "evaluations");
  CHECK(sp["median_cost_s"] == 1.0);
  // The time budget is an evaluation count: the window's end in evaluations.
  const double budget = sp["time_budget_s"].get<double>();
  CHECK(budget == std::round(budget));
  CHECK(budget >= 2);
  CHECK(j["strategies"][0].contains("score_failure_aware"));
  CHECK(j["strategies"][0]["per_space_failure_aware"].contains("times_only"));
  Cli b = run_cutune(fmt::format("tune --simulate '{}' --strategy random --seed 1 --time-budget 5", cache.string()), dir);
  INFO(b.out << b.err);
  CHECK(b.status == 0);
  CHECK(b.out.find("counted in evaluations") != std::string::npos);
  CHECK(b.out.find("evaluations simulated") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("scoring: KTT's results as a recorded space, on the command line too", "[scoring]") {
  const auto file = std::filesystem::path(CUTUNE_TEST_DATA_DIR) / "ktt" / "vector_add_results.json";
  replay::RecordingOrigin origin;
  const RecordedSpace space = replay::load_recorded_space(file, &origin);
  CHECK(space.name() == "vector_add_results");
  CHECK(origin.kernel_name == "vectorAddition_kernel");
  CHECK(origin.device_name == "NVIDIA RTX 500 Ada Generation Laptop GPU");
  REQUIRE(space.entries().size() == 8);
  CHECK(space.space().parameters()[0].values == ValueList{32, 64, 128, 256});
  std::size_t failed = 0;
  for (const auto& e : space.entries()) failed += e.result.observation.valid ? 0 : 1;
  CHECK(failed == 2);
  // The costs are KTT's overheads (seconds): 32,1 took 9.265 ms to compile, 10.291 ms to
  // validate and 51.339 ms to move data and run.
  CHECK(space.cost_unit() == CostUnit::Seconds);
  CHECK(space.entries()[0].result.cost_s == Approx((9265.11 + 10290.98 + 51218.207 + 120.5) / 1e6));
  const SpaceScoring s(space);
  CHECK(s.optimum() == Approx(0.06475));
  CHECK(s.configurations() == 8);
  CHECK(s.size() == 6);

  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_scoring_ktt_{}", ::getpid());
  std::filesystem::create_directories(dir);
  Cli a = run_cutune(fmt::format("score --spaces '{}' --strategies random,greedy_ils --repeats 5 --json '{}'",
                                 file.string(), (dir / "s.json").string()),
                     dir);
  INFO(a.out << a.err);
  CHECK(a.status == 0);
  CHECK(a.out.find("vector_add_results") != std::string::npos);
  // import shares the reader: the problem size is the one thing KTT's file does not name.
  const std::string db = (dir / "ktt.db").string();
  Cli b = run_cutune(fmt::format("import '{}' --db '{}'", file.string(), db), dir);
  CHECK(b.status == 2);
  CHECK(b.err.find("problem size") != std::string::npos);
  Cli c = run_cutune(fmt::format("import '{}' --db '{}' --problem n=32768", file.string(), db), dir);
  INFO(c.out << c.err);
  CHECK(c.status == 0);
  CHECK(c.out.find("8 configurations, 8 stored now (2 failed)") != std::string::npos);
  // A broken file: one line naming the file and the field, exit 2, for score and import.
  const auto broken = std::filesystem::path(CUTUNE_TEST_DATA_DIR) / "ktt" / "broken_results.json";
  for (const std::string& cmd : {fmt::format("score --spaces '{}'", broken.string()),
                                fmt::format("import '{}' --db '{}' --problem n=1", broken.string(), db)}) {
    Cli d = run_cutune(cmd, dir);
    INFO(cmd << ": " << d.err);
    CHECK(d.status == 2);
    CHECK(d.err.find(broken.string()) != std::string::npos);
    CHECK(d.err.find("Results[2].TotalDuration") != std::string::npos);
    CHECK(std::count(d.err.begin(), d.err.end(), '\n') == 1);
  }
  std::filesystem::remove_all(dir);
}
