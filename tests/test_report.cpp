// cutune report: the page's structure (SVG, no script but the data, nothing fetched), the
// embedded JSON's values against what the DB holds, byte-identical pages for the same DB,
// and bad input (exit 2, nothing written). DBs come from `tune --simulate` and `import` of
// the recorded spaces, and from the store's API where a value must be chosen exactly.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "result_helpers.hpp"
#include "cli_runner.hpp"
#include "cutune/db/store.hpp"
#include "cutune/report/report.hpp"
#include "test_paths.hpp"

namespace {

using namespace cutune::testing::cli;
using json = nlohmann::json;
using Catch::Matchers::Contains;

std::string spaces() { return cutune::testing::material("data/spaces").string() + "/"; }

/// The JSON the page embeds.
json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"cutune-report-data\">";
  const auto a = page.find(open);
  REQUIRE(a != std::string::npos);
  const auto b = page.find("</script>", a);
  REQUIRE(b != std::string::npos);
  return json::parse(page.substr(a + open.size(), b - a - open.size()));
}

std::size_t occurrences(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

/// What every page must be: one document, balanced SVG, one script (the data, not code),
/// no address but the SVG namespace's, so it reads offline with JavaScript off.
void check_structure(const std::string& page) {
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  const std::size_t svgs = occurrences(page, "<svg ");
  CHECK(svgs >= 5);
  CHECK(occurrences(page, "</svg>") == svgs);
  CHECK(occurrences(page, "<script") == 1);
  CHECK(occurrences(page, "<script type=\"application/json\"") == 1);
  CHECK(occurrences(page, "http://") == svgs);  // xmlns="http://www.w3.org/2000/svg" only
  CHECK(occurrences(page, "http://www.w3.org/2000/svg") == svgs);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  // Every chart has a title, axis labels with units are in the text.
  CHECK(occurrences(page, "<title>") >= svgs);
}

struct Simulated {
  std::string best_key;
  double best_ms = 0;
};

/// `tune --simulate` into `db`; the best it printed.
Simulated simulate(const std::string& db, const std::string& seed, const std::string& budget) {
  const std::vector<std::string> args{"tune", "--simulate", spaces() + "convolution_A100.json.gz", "--budget", budget,
                                      "--seed", seed, "--db", db};
  const CliResult r = run_cli(args);
  INFO(describe(args, r));
  REQUIRE(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex(R"(\nbest: (\S+) ([0-9.]+)\n)")));
  // The run ends with the command that reports on it.
  CHECK_THAT(r.out, Contains("report: cutune report --db " + db +
                             " --kernel convolution_kernel --problem recorded:convolution_A100 -o report.html\n"));
  return {m[1].str(), std::stod(m[2].str())};
}

}  // namespace

TEST_CASE("report: a simulated run's page, its data and its bytes", "[report][material]") {
  CliTempDir dir;
  const std::string db = dir / "sim.db";
  const Simulated best = simulate(db, "3", "60");
  const CliResult r = run_cli({"report", "--db", db, "-o", dir / "a.html"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, StartsWith("report: " + (dir / "a.html")));
  const std::string page = slurp(dir / "a.html");
  check_structure(page);
  for (const char* id : {"best-time", "best-evaluations", "time-breakdown", "distribution", "statuses"})
    CHECK(page.find(std::string("<figure id=\"") + id + "\"") != std::string::npos);
  CHECK_THAT(page, Contains("time since the run&#39;s start (s)"));
  CHECK_THAT(page, Contains("best median so far (ms)"));

  const json d = page_data(page);
  REQUIRE(d["targets"].size() == 1);
  const json& t = d["targets"][0];
  CHECK(t["kernel"] == "convolution_kernel");
  CHECK(t["problem"] == "recorded:convolution_A100");
  CHECK(t["configurations"] == 60);
  std::size_t total = 0;
  for (const auto& [status, n] : t["status_counts"].items()) total += n.get<std::size_t>();
  CHECK(total == 60);
  // The best-so-far curve ends at the best the run printed, on the simulated clock.
  const json& run = t["best_so_far"]["runs"][0];
  CHECK(run["clock"] == "simulated");
  CHECK(run["points"].back()[2].get<double>() == Approx(best.best_ms).epsilon(1e-4));
  CHECK(t["top"][0]["key"] == best.best_key);
  CHECK(t["top"][0]["verdict"] == "winner, screening");
  CHECK(t["default_ms"].is_null());  // nothing measured the default in a simulation
  // The random-search expectation: the scoring's B(t) over the 60 stored configurations;
  // one draw expects the median of the valid ones, many the optimum.
  const json& rs = t["random_search"];
  CHECK(rs["stored_configurations"] == 60);
  CHECK(rs["optimum_ms"].get<double>() == Approx(best.best_ms).epsilon(1e-4));
  CHECK(rs["by_evaluations"].size() == 60);
  CHECK(rs["by_evaluations"].back()[1].get<double>() <= rs["by_evaluations"][0][1].get<double>());
  // Time: every simulated second is one of the recording's compile, verification and
  // benchmark times; nothing is left unsplit.
  const json& br = t["time_breakdown_s"][0];
  CHECK(br["compile"].get<double>() > 0);
  CHECK(br["timed samples"].get<double>() > 0);
  CHECK(br["recorded cost (simulated, not split)"] == 0.0);
  CHECK(br["compile"].get<double>() + br["verification"].get<double>() + br["timed samples"].get<double>() ==
        Approx(br["wall_s"].get<double>()));
  CHECK(d["across_gpus"].empty());

  SECTION("the same DB gives the same bytes") {
    REQUIRE(run_cli({"report", "--db", db, "-o", dir / "b.html"}).status == 0);
    CHECK(slurp(dir / "b.html") == page);
  }
  SECTION("--run keeps one run's measurements") {
    simulate(db, "4", "30");  // a second run on the same target: up to 30 new configurations
    REQUIRE(run_cli({"report", "--db", db, "--run", "1", "-o", dir / "one.html"}).status == 0);
    const json one = page_data(slurp(dir / "one.html"));
    CHECK(one["targets"][0]["configurations"] == 60);
    CHECK(one["targets"][0]["runs"].size() == 1);
    REQUIRE(run_cli({"report", "--db", db, "-o", dir / "both.html"}).status == 0);
    const json both = page_data(slurp(dir / "both.html"));
    CHECK(both["targets"][0]["runs"].size() == 2);
    CHECK(both["targets"][0]["configurations"].get<int>() > 60);
    expect_bad_input({"report", "--db", db, "--run", "99", "-o", dir / "none.html"}, {"--run 99"});
    CHECK_FALSE(fs::exists(dir / "none.html"));
  }
}

TEST_CASE("report: imported Kernel Tuner caches of two GPUs give the across-GPU matrix", "[report][material]") {
  CliTempDir dir;
  const std::string db = dir / "kt.db";
  for (const char* f : {"convolution_A100.json.gz", "convolution_A4000.json.gz"})
    REQUIRE(run_cli({"import", spaces() + f, "--db", db}).status == 0);
  REQUIRE(run_cli({"report", "--db", db, "-o", dir / "r.html"}).status == 0);
  const std::string page = slurp(dir / "r.html");
  check_structure(page);
  CHECK(page.find("<figure id=\"across-1\"") != std::string::npos);
  CHECK(page.find("<figure id=\"sensitivity-block_size_x\"") != std::string::npos);
  const json d = page_data(page);
  REQUIRE(d["targets"].size() == 2);
  const json& a100 = d["targets"][0];
  CHECK(a100["gpu_model"] == "NVIDIA A100-PCIE-40GB/sm_00");
  CHECK(a100["configurations"] == 4362);
  CHECK(a100["status_counts"]["ok"] == 4362 - 161);
  // Kernel Tuner's own timestamps make the clock; its benchmark and framework times the breakdown.
  CHECK(a100["runs"][0]["clock"] == "timestamps");
  CHECK(a100["time_breakdown_s"][0]["timed samples"].get<double>() > 0);
  CHECK(a100["time_breakdown_s"][0]["compile"].get<double>() > 0);
  CHECK(a100["top"][0]["key"] == "32,4,1,3,1,0,1,1,15,15");
  CHECK(a100["top"][0]["median_ms"].get<double>() == Approx(0.5499).epsilon(1e-3));
  // Golden: each GPU's winner on the other, relative to the other's best (from the caches).
  REQUIRE(d["across_gpus"].size() == 1);
  const json& g = d["across_gpus"][0];
  REQUIRE(g["gpu_models"] == json({"NVIDIA A100-PCIE-40GB/sm_00", "NVIDIA RTX A4000/sm_00"}));
  CHECK(g["rows"][0]["relative"][0] == 1.0);
  CHECK(g["rows"][1]["relative"][1] == 1.0);
  CHECK(g["rows"][0]["relative"][1].get<double>() == Approx(0.630).epsilon(2e-3));
  CHECK(g["rows"][1]["relative"][0].get<double>() == Approx(0.672).epsilon(2e-3));
  // Every parameter that varies gets a panel; the spread orders them.
  const json& sens = a100["sensitivity"];
  REQUIRE(sens.size() == 7);
  for (std::size_t i = 1; i < sens.size(); ++i)
    CHECK(sens[i - 1]["spread"].get<double>() >= sens[i]["spread"].get<double>());

  SECTION("--compare against itself: everything the same") {
    REQUIRE(run_cli({"report", "--db", db, "--compare", db, "-o", dir / "c.html"}).status == 0);
    const json c = page_data(slurp(dir / "c.html"));
    REQUIRE(c["compare"]["targets"].size() == 2);
    for (const auto& row : c["compare"]["targets"]) {
      CHECK(row["verdict"] == "same");
      CHECK(row["configurations"]["faster_here"] == 0);
      CHECK(row["configurations"]["slower_here"] == 0);
      CHECK(row["configurations"]["same"] == 4362 - 161);
    }
  }
  SECTION("filters narrow to one target") {
    REQUIRE(run_cli({"report", "--db", db, "--gpu", "a4000", "-o", dir / "f.html"}).status == 0);
    const json f = page_data(slurp(dir / "f.html"));
    REQUIRE(f["targets"].size() == 1);
    CHECK(f["targets"][0]["gpu_model"] == "NVIDIA RTX A4000/sm_00");
    // The matrix still uses everything the DB holds.
    CHECK(f["across_gpus"].size() == 1);
  }
}

TEST_CASE("report: bad input is one line, exit 2, nothing written", "[report][material]") {
  CliTempDir dir;
  const std::string db = dir / "sim.db";
  simulate(db, "1", "10");
  // The files of the DB's write-ahead log that opening it may leave are the store's matter.
  auto files = [&] {
    auto names = dir.listing();
    std::erase_if(names, [](const std::string& n) { return n.ends_with("-wal") || n.ends_with("-shm"); });
    return names;
  };
  const auto before = files();
  expect_bad_input({"report", "--db", dir / "missing.db", "-o", dir / "x.html"}, {"missing.db"});
  expect_bad_input({"report", "--db", std::string(CUTUNE_TEST_DATA_DIR) + "/not_cutune.sqlite", "-o", dir / "x.html"},
                   {"not_cutune.sqlite", "not a cutune database"});
  expect_bad_input({"report", "--db", db, "--kernel", "nope", "-o", dir / "x.html"}, {"--kernel nope"});
  expect_bad_input({"report", "--db", db, "--gpu", "H100", "-o", dir / "x.html"}, {"--gpu H100"});
  expect_bad_input({"report", "--db", db, "-o", dir / "no/such/dir/x.html"}, {"no/such/dir"});
  expect_bad_input({"report", "--db", db, "-o", dir.path().string()}, {"is a directory"});
  expect_bad_input({"report", "--db", db, "--compare", dir / "other.db", "-o", dir / "x.html"}, {"other.db"});
  expect_bad_input({"report", "--db", db}, {"--output"});
  expect_bad_input({"report", "--db", db, "-o", db}, {"is the DB"});
  CHECK(files() == before);
}

namespace {

using namespace cutune::db;

cutune::DeviceIdentity gpu() {
  cutune::DeviceIdentity d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 85'000'000'000ULL;
  d.uuid = "GPU-1";
  return d;
}

RunSpec spec() {
  RunSpec s;
  s.device = gpu();
  s.kernel = "vector_add";
  s.source_hash = "abc";
  s.problem_key = "n=1024";
  s.problem_json = "{\"n\":1024}";
  s.tool_version = "0.1.0";
  s.strategy = "brute_force";
  s.command = "cutune tune vector_add";
  return s;
}

/// A measurement as a real tune stores it: samples' statistics with the interval and the
/// sampling's wall time, the module load, energy when given; finished `end_s` after 00:00:00.
Measurement measured(int block, double median_ms, double half_width_ms, double end_s,
                     std::optional<double> energy_mj = std::nullopt) {
  Measurement m;
  m.config = cutune::testing::config_of(std::to_string(block), "{\"block_size_x\":" + std::to_string(block) + "}");
  m.median_ms = median_ms;
  m.samples_ms = {median_ms, median_ms, median_ms};
  m.compile_ms = 200;
  m.verify_ms = 10;
  cutune::ResultStats stats;
  stats.summary.ci_low = median_ms - half_width_ms;
  stats.summary.ci_high = median_ms + half_width_ms;
  stats.measure_ms = 30.0;
  stats.energy_mj_per_launch = energy_mj;
  m.origin = cutune::MeasuredOrigin{stats, 5.0, std::nullopt, {}};
  m.started_at = "2026-01-01T00:00:00.000Z";
  m.finished_at = fmt::format("2026-01-01T00:00:{:06.3f}Z", end_s);
  return m;
}

class TempDbs {
 public:
  CliTempDir dir;
  std::string path(const std::string& name) const { return dir / name; }
};

}  // namespace

TEST_CASE("report: energy's Pareto front, the breakdown of a tuned run, --compare's threshold", "[report]") {
  TempDbs t;
  {
    Store s = Store::open(t.path("a.db"), true);
    Run run = s.begin_run(spec());
    // (time, energy): 64 and 128 and 512 are on the front; 256 is beaten by 128 on both.
    Measurement fastest = measured(64, 1.0, 0.005, 1.0, 5.0);
    cutune::KernelResources used;
    used.registers = 32;
    used.local_bytes = 8;
    used.static_shared_bytes = 1024;
    used.block_threads = 64;
    used.active_blocks_per_sm = 32;
    used.occupancy = 1.0;
    std::get<cutune::MeasuredOrigin>(fastest.origin).resources = used;
    run.add(fastest);
    run.add(measured(128, 2.0, 0.005, 2.0, 3.0));
    run.add(measured(256, 3.0, 0.005, 3.0, 4.0));
    run.add(measured(512, 4.0, 0.005, 4.0, 1.0));
    WinnerChoice w;
    w.config = cutune::testing::config_of("64", "{\"block_size_x\":64}");
    w.median_ms = 1.0;
    w.default_ms = 3.0;
    w.objective = cutune::Objective::time();
    w.verdict = cutune::Verdict::Separated;
    for (const char* key : {"64", "128"}) {
      cutune::Finalist f;
      f.config = cutune::testing::config_of(key, "{}");
      w.finalists.push_back(f);
    }
    run.set_winner(w);
  }
  {
    Store s = Store::open(t.path("b.db"), true);
    Run run = s.begin_run(spec());
    run.add(measured(64, 1.2, 0.005, 1.0));     // apart and 20% slower: a change
    run.add(measured(128, 2.04, 0.005, 2.0));   // apart but 2%: the same at a 5% threshold
    run.add(measured(256, 3.3, 0.35, 3.0));     // 10% but the intervals overlap: the same
    run.add(measured(512, 3.0, 0.005, 4.0));    // apart and 25% faster there
  }
  const Store a = Store::open(t.path("a.db"), false);
  const Store b = Store::open(t.path("b.db"), false);
  cutune::report::ReportOptions o;
  o.compare = &b;
  o.compare_label = "b.db";
  o.db_label = "a.db";
  const std::string page = cutune::report::render_report(a, o);
  check_structure(page);
  CHECK(page.find("<figure id=\"energy\"") != std::string::npos);
  const json d = page_data(page);
  const json& tg = d["targets"][0];

  std::vector<std::string> front;
  for (const auto& p : tg["energy"]["pareto_front"]) front.push_back(p["key"]);
  CHECK(front == std::vector<std::string>{"64", "128", "512"});

  // Four configurations of 200 ms compile, 5 ms load, 10 ms verification, 30 ms sampling;
  // the run's clock: its start (now, when stored: later than the stamps) is not used, the
  // first measurement's end less its cost is.
  const json& br = tg["time_breakdown_s"][0];
  CHECK(br["compile"].get<double>() == Approx(0.8));
  CHECK(br["module load"].get<double>() == Approx(0.02));
  CHECK(br["verification"].get<double>() == Approx(0.04));
  CHECK(br["timed samples"].get<double>() == Approx(0.12));
  CHECK(tg["runs"][0]["clock"] == "timestamps");
  // Wall time: from 1 s - 0.245 s to 4 s; what the GPU side did not use is idle.
  CHECK(br["wall_s"].get<double>() == Approx(3.245));
  CHECK(br["idle / overhead"].get<double>() == Approx(3.245 - 0.18));

  // The top table: the winner's verdict, the finalist, the interval, speedup over the default.
  CHECK(tg["top"][0]["verdict"] == "winner, separated");
  CHECK(tg["top"][1]["verdict"] == "finalist");
  CHECK(tg["top"][2]["verdict"] == "screening");
  CHECK(tg["top"][0]["speedup_over_default"].get<double>() == Approx(3.0));
  CHECK(tg["top"][1]["ci_ms"][0].get<double>() == Approx(1.995));
  // Beside the time, what each costs the GPU; none kept for the others (older rows): "-".
  CHECK(tg["top"][0]["resources"]["registers"] == 32);
  CHECK(tg["top"][0]["resources"]["occupancy"] == 1.0);
  CHECK(tg["top"][1]["resources"].is_null());
  CHECK(page.find("<td>32</td><td>8</td><td>1024</td><td>100%</td>") != std::string::npos);
  CHECK(page.find("<td>-</td><td>-</td><td>-</td><td>-</td>") != std::string::npos);

  const json& c = d["compare"]["targets"][0];
  CHECK(c["here"]["key"] == "64");
  CHECK(c["there"]["key"] == "64");
  CHECK(c["verdict"] == "faster here");
  CHECK(c["ratio_there_over_here"].get<double>() == Approx(1.2));
  CHECK(c["configurations"]["faster_here"] == 1);
  CHECK(c["configurations"]["slower_here"] == 1);
  CHECK(c["configurations"]["same"] == 2);

  SECTION("a threshold above 25% calls every difference the same") {
    o.change_threshold = 0.3;
    const json d2 = page_data(cutune::report::render_report(a, o));
    CHECK(d2["compare"]["targets"][0]["verdict"] == "same");
    CHECK(d2["compare"]["targets"][0]["configurations"]["same"] == 4);
  }
}

TEST_CASE("report: names from the DB are text, never markup, in the page and in its data", "[report]") {
  TempDbs t;
  {
    Store s = Store::open(t.path("a.db"), true);
    RunSpec odd = spec();
    odd.kernel = "k</script><!--<b>";
    odd.command = "cutune tune 'a&b' \"</script>\"";
    Run run = s.begin_run(odd);
    run.add(measured(64, 1.0, 0.005, 1.0));
    run.add(measured(128, 2.0, 0.005, 2.0));
  }
  const Store a = Store::open(t.path("a.db"), false);
  const std::string page = cutune::report::render_report(a, {});
  check_structure(page);
  CHECK(occurrences(page, "</script>") == 1);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("k&lt;/script&gt;&lt;!--&lt;b&gt;") != std::string::npos);
  const json d = page_data(page);
  CHECK(d["targets"][0]["kernel"] == "k</script><!--<b>");
  CHECK(d["targets"][0]["runs"][0]["command"] == "cutune tune 'a&b' \"</script>\"");
}
