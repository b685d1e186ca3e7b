// Scoring by the methodology of Willemsen, van Nieuwpoort and van Werkhoven,
// checked against values computed by hand, and recorded spaces read from Kernel Tuner files.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/search/scoring.hpp"
#include "cutune/search/scoring_table.hpp"
#include "cutune/search/simulation.hpp"

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
  return std::filesystem::path(CUTUNE_SHARED_DIR) / "data" / "spaces" / name;
}

struct Cli {
  int status = -1;
  std::string out, err;
};

// cutune with `args` (a shell-quoted string), stdout and stderr captured.
Cli run_cutune(const std::string& args, const std::filesystem::path& dir) {
  const auto out = dir / "stdout", err = dir / "stderr";
  const int rc = std::system(fmt::format("'{}' {} >'{}' 2>'{}'", CUTUNE_CLI_PATH, args, out.string(), err.string()).c_str());
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
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

TEST_CASE("scoring: a space with nothing to score is an InputError", "[scoring]") {
  CHECK_THROWS_AS(SpaceScoring(line_space({2, 2, 2}, {1, 1, 1})), InputError);
  CHECK_THROWS_AS(SpaceScoring(line_space({1, 2}, {0, 0})), InputError);
}

TEST_CASE("scoring: recorded spaces from Kernel Tuner's files", "[scoring]") {
  const auto cache = shared_space("convolution_A100.json.gz");
  const auto t4 = shared_space("convolution_A100_T4.json.gz");
  if (!std::filesystem::exists(cache) || !std::filesystem::exists(t4)) {
    WARN("SKIPPED: ../shared/data/spaces is not beside the checkout");
    return;
  }
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

TEST_CASE("scoring: random search scores about 0, the comparison table", "[scoring]") {
  const auto path = shared_space("dedispersion_A100.json.gz");
  if (!std::filesystem::exists(path)) {
    WARN("SKIPPED: ../shared/data/spaces is not beside the checkout");
    return;
  }
  std::vector<RecordedSpace> spaces;
  spaces.push_back(replay::load_recorded_space(path));
  ComparisonOptions o;
  o.strategies = {"random", "brute_force"};
  o.repeats = 30;
  o.scoring.points = 200;
  const ScoreTable t = compare_strategies(spaces, o);
  REQUIRE(t.rows.size() == 2);
  double random_score = NAN;
  for (const auto& r : t.rows)
    if (r.strategy == "random") random_score = r.overall;
  // The calculated baseline is random search's expected best: the median of 30 random runs
  // lands near it (P is relative to the gap between baseline and optimum).
  CHECK(std::abs(random_score) < 0.3);
  CHECK(format_score_table(t).find("random") != std::string::npos);
  o.strategies = {"no_such"};
  CHECK_THROWS_AS(compare_strategies(spaces, o), InputError);
}

TEST_CASE("scoring: cutune tune --simulate and cutune score on the command line", "[scoring]") {
  const auto cache = std::filesystem::path(CUTUNE_SHARED_DIR) / "formats" / "kernel_tuner" / "examples" /
                     "strategies" / "test_cache_time_energy.json";
  if (!std::filesystem::exists(cache)) {
    WARN("SKIPPED: ../shared/formats is not beside the checkout");
    return;
  }
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
  // With 4 evaluators: the table says so, the JSON too; sequential traces are refused.
  Cli g = run_cutune(fmt::format("score --spaces '{}' --strategies random,bayes_opt --repeats 3 --workers 4 --json '{}'",
                                 cache.string(), (dir / "w.json").string()), dir);
  INFO(g.out << g.err);
  CHECK(g.status == 0);
  CHECK(g.out.find("4 evaluators at once") != std::string::npos);
  {
    std::ifstream in(dir / "w.json");
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str().find("\"workers\": 4") != std::string::npos);
  }
  Cli h = run_cutune(fmt::format("score --spaces '{}' --workers 4 --traces '{}'", cache.string(),
                                 (dir / "kt.json").string()), dir);
  CHECK(h.status == 2);
  CHECK(h.err.find("sequential") != std::string::npos);
  std::filesystem::remove_all(dir);
}
