// The typed result through the store: what goes in comes back the same, whatever its
// provenance; rows in the JSON form cutune writes read back typed; and the text of the rows is
// the form it always was.
#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/result.hpp"
#include "result_helpers.hpp"
#include "sqlite_test_files.hpp"

namespace fs = std::filesystem;
using namespace cutune;
using cutune::testing::config_of;
using cutune::testing::raw_exec;
using cutune::testing::raw_text;

namespace {

db::RunSpec spec() {
  db::RunSpec s;
  s.device.name = "NVIDIA H200";
  s.device.cc_major = 9;
  s.device.sm_count = 132;
  s.device.uuid = "GPU-1";
  s.kernel = "k";
  s.source_hash = "h";
  s.problem_key = "n=1";
  s.problem_json = R"({"n":1})";
  s.tool_version = "0.1.0";
  s.strategy = "random";
  s.command = "cutune tune k";
  return s;
}

/// A space of every kind of value, with a restriction.
Space mixed_space() {
  return Space({Parameter{"block_size_x", {Value(64), Value(128)}, Value(64)},
                Parameter{"f", {Value(0.5), Value(2.45)}, Value(0.5)},
                Parameter{"alg", {Value("a"), Value("b")}, Value("a")},
                Parameter{"on", {Value(false), Value(true)}, Value(false)}},
               {"block_size_x == 128 or not on"});
}

ResultStats thorough_stats(double median_ms) {
  ResultStats s;
  s.level = MeasurementLevel::Thorough;
  s.summary.count = 5;
  s.summary.median = median_ms;
  s.summary.mean = 0.30000000000000004;
  s.summary.min = 0.1;
  s.summary.max = 0.9;
  s.summary.stddev = 0.07;
  s.summary.rel_stddev = s.summary.stddev / s.summary.mean;
  s.summary.ci_low = 0.2;
  s.summary.ci_high = 0.4;
  s.summary.ci_coverage = 0.9375;
  s.summary.rel_ci_half_width = 0.25;
  s.stop_reason = StopReason::converged;
  s.measure_ms = 12.5;
  s.l2 = L2Method{L2Method::Kind::Rotate, 3};
  s.timer = SampleTimer::Activity;
  s.timer_fallbacks = 1;
  s.sm_clock_mhz = 1980;
  s.sm_clock_min_mhz = 1755;
  s.discarded_ms = {0.7};
  s.back_offs = 2;
  s.block_timeouts = 1;
  s.nvml_sm_clock_mhz = 1980;
  s.temperature_c = 41;
  s.power_w = 312.5;
  s.energy_mj_per_launch = 0.125;
  return s;
}

Result measured(const Configuration& c) {
  Result r;
  r.config = c;
  r.median_ms = 1.0 / 3.0;
  r.samples_ms = {0.1, 1.0 / 3.0, 0.5};
  r.compile_ms = 812.0000000000001;
  r.verify_ms = 3.5;
  r.started_at = "2026-11-21T23:59:01.123Z";
  r.finished_at = "2026-11-21T23:59:02.456Z";
  KernelResources res;
  res.registers = 40;
  res.local_bytes = 16;
  res.static_shared_bytes = 4096;
  res.dynamic_shared_bytes = 512;
  res.const_bytes = 8;
  res.max_threads_per_block = 1024;
  res.block_threads = 256;
  res.active_blocks_per_sm = 6;
  res.occupancy = 0.75;
  r.origin = MeasuredOrigin{thorough_stats(r.median_ms), 0.75, res, {}};
  r.metrics = {{"GFLOP/s", 812.5}, {"GB/s", 31.25}};
  return r;
}

/// `r` as the store gives it back: read without a space, with its run and device.
Result as_read(Result r, const db::Run& run) {
  r.config = ResultConfig(r.config.key(), r.config.values());
  r.run_id = run.id();
  r.device_id = run.device_id();
  return r;
}

}  // namespace

TEST_CASE("a result goes through the store unchanged, whatever its provenance", "[db]") {
  testing::TempDb file("cutune-test-result-rows");
  db::Store store = db::Store::open(file.path(), true);
  db::Run run = store.begin_run(spec());
  const Space space = mixed_space();

  std::vector<Result> written;
  written.push_back(measured(Configuration::from_key(space, "128,2.45,b,True")));

  Result imported;
  imported.config = config_of("64,0.5,a,False", R"({"block_size_x":64,"f":0.5,"alg":"a","on":false})");
  imported.median_ms = 2.5;
  imported.samples_ms = {2.0, 2.5, 3.0};
  imported.compile_ms = 100;
  imported.started_at = imported.finished_at = "2023-12-22T09:54:05.502Z";
  ImportedOrigin io;
  io.mean_ms = 2.5;
  io.ci_low_ms = 2.0;
  io.ci_high_ms = 3.0;
  io.file_fields = nlohmann::ordered_json::parse(R"({"benchmark_time":7.5,"timestamp":"2023-12-22 09:54:05.502007+00:00",
                                                     "GFLOP/s":1.5,"observer":{"regs":[32,null]}})");
  imported.origin = io;
  written.push_back(imported);

  Result simulated;
  simulated.config = Configuration::from_key(space, "64,2.45,a,False");
  simulated.median_ms = 0.5;
  simulated.compile_ms = 250;
  simulated.verify_ms = 2;
  simulated.origin = SimulatedOrigin{1.25, 0.5};
  written.push_back(simulated);

  Result failed;
  failed.config = Configuration::from_key(space, "64,0.5,b,False");
  failed.status = Status::Runtime;
  failed.error = "launch failed: too many resources requested";
  failed.compile_ms = 90;
  failed.origin = MeasuredOrigin{std::nullopt, 0.5, std::nullopt, {}};
  written.push_back(failed);

  // Refused by a resource restriction: no statistics, no load time, what it would cost kept
  // (the occupancy unknown: not asked of a launch refused before it).
  Result refused;
  refused.config = Configuration::from_key(space, "128,0.5,a,True");
  refused.status = Status::Constraints;
  refused.error = "registers=72 violates the resource restriction \"registers <= 64\"";
  KernelResources many;
  many.registers = 72;
  many.block_threads = 128;
  refused.origin = MeasuredOrigin{std::nullopt, std::nullopt, many, {}};
  written.push_back(refused);

  for (const Result& r : written) REQUIRE(run.add(r));
  const auto back = store.measurements(run.kernel_id(), run.problem_id(), run.device_id());
  REQUIRE(back.size() == written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    INFO(provenance_name(written[i].provenance()) << " " << written[i].config.key());
    CHECK(back[i] == as_read(written[i], run));
    CHECK(back[i].provenance() == written[i].provenance());
  }
  REQUIRE(back[0].measured()->resources);
  CHECK(back[0].measured()->resources->shared_bytes() == 4608);
  CHECK_FALSE(back[3].measured()->resources);
  CHECK_FALSE(back[4].stats());
  REQUIRE(back[4].measured()->resources);
  CHECK(back[4].measured()->resources->registers == 72);
  CHECK_FALSE(back[4].measured()->resources->occupancy);
  CHECK(back[0].energy_mj_per_launch() == 0.125);
  CHECK(back[0].objective_value(Objective::energy()) == 0.125);
  CHECK(back[0].objective_value(Objective::of_metric("GB/s", true)) == 31.25);
  CHECK(back[0].interval_ms() == std::pair{0.2, 0.4});
  CHECK(back[1].interval_ms() == std::pair{2.0, 3.0});
  CHECK_FALSE(back[1].energy_mj_per_launch());
  CHECK_FALSE(back[3].objective_value(Objective::time()));

  // Read back, the configuration is the space's again, checked (DB values are never code).
  const Configuration c = back[0].config.configuration_in(space);
  CHECK(c == *written[0].config.configuration());
}

TEST_CASE("observers' values go through the store with their result, in their order", "[db]") {
  testing::TempDb file("cutune-test-observed-rows");
  db::Store store = db::Store::open(file.path(), true);
  db::Run run = store.begin_run(spec());
  const Space space = mixed_space();
  Result r = measured(Configuration::from_key(space, "128,2.45,b,True"));
  std::get<MeasuredOrigin>(r.origin).observed = {{"error_rmse", 0.125}, {"num_regs", 40.0}, {"accuracy", -1.5}};
  // A kernel that wrote NaN has a NaN error: JSON has none, the row keeps it all the same.
  Result odd = measured(Configuration::from_key(space, "64,2.45,a,False"));
  std::get<MeasuredOrigin>(odd.origin).observed = {{"error", std::numeric_limits<double>::quiet_NaN()},
                                                    {"peak", -std::numeric_limits<double>::infinity()}};
  REQUIRE(run.add(r));
  REQUIRE(run.add(odd));
  const auto back = store.measurements(run.kernel_id(), run.problem_id(), run.device_id());
  REQUIRE(back.size() == 2);
  CHECK(back[0] == as_read(r, run));
  const MeasuredOrigin* m = back[1].measured();
  REQUIRE(m);
  CHECK(m->stats);  // the observed values are not taken for statistics
  CHECK(m->resources == std::get<MeasuredOrigin>(odd.origin).resources);
  REQUIRE(m->observed.size() == 2);
  CHECK(m->observed[0].first == "error");
  CHECK(std::isnan(m->observed[0].second));
  CHECK(m->observed[1] == std::pair<std::string, double>{"peak", -std::numeric_limits<double>::infinity()});
}

TEST_CASE("a winner and its finalists go through the store unchanged", "[db]") {
  testing::TempDb file("cutune-test-result-rows");
  db::Store store = db::Store::open(file.path(), true);
  db::Run run = store.begin_run(spec());
  const Space space = mixed_space();

  TunedWinner w;
  w.config = Configuration::from_key(space, "128,2.45,b,True");
  w.median_ms = 1.0 / 3.0;
  w.default_ms = 0.7;
  w.objective = Objective::of_metric("GFLOP/s", true);
  w.objective_value = 812.5;
  w.verdict = Verdict::Tie;
  for (const char* key : {"128,2.45,b,True", "64,0.5,a,False"}) {
    Finalist f;
    f.config = Configuration::from_key(space, key);
    f.is_default = key[0] == '6';
    f.tied = true;
    f.screening_ms = 0.35;
    f.stats = thorough_stats(f.is_default ? 0.36 : 1.0 / 3.0);
    f.samples_ms = {0.3, 0.4};
    if (!f.is_default) f.objective_value = 812.5;
    w.finalists.push_back(f);
  }
  run.set_winner(w);

  const auto back = store.winners();
  REQUIRE(back.size() == 1);
  TunedWinner expected = w;
  expected.config = ResultConfig(w.config.key(), w.config.values());
  for (auto& f : expected.finalists) f.config = ResultConfig(f.config.key(), f.config.values());
  CHECK(static_cast<const TunedWinner&>(back[0]) == expected);
  CHECK(back[0].run_id == run.id());
  CHECK(back[0].finalists[1].is_default);
  CHECK_FALSE(back[0].finalists[1].objective_value);
}

TEST_CASE("rows in the JSON form cutune writes read back typed, and are written in that form", "[db]") {
  testing::TempDb file("cutune-test-result-rows");
  db::Store store = db::Store::open(file.path(), true);
  db::Run run = store.begin_run(spec());
  const auto id = run.kernel_id();
  // Rows as tune, import and tune --simulate have written them (stats_json, config_json and
  // finalists_json byte for byte).
  const std::string measured_stats =
      R"({"level":"screening","samples":3,"mean_ms":0.5,"min_ms":0.25,"max_ms":1.0,"stddev_ms":0.125,)"
      R"("ci_low_ms":0.25,"ci_high_ms":1.0,"ci_coverage":0.75,"rel_ci_half_width":0.75,"stop_reason":"time cap",)"
      R"("measure_ms":4.0,"l2":"flush","timer":"events","sm_clock_mhz":1980.0,"sm_clock_min_mhz":1965.0,)"
      R"("discarded_ms":[],"back_offs":0,"temperature_c":40.0,"power_w":300.5,"energy_mj_per_launch":0.25,)"
      R"("load_ms":1.5})";
  const std::string imported_stats =
      R"({"mean_ms":4.0,"ci_low_ms":1.9,"ci_high_ms":3.1,"imported":true,"kt":{"benchmark_time":20.5,)"
      R"("timestamp":"2023-12-22 09:54:05.502007+00:00","regs":32}})";
  const std::string simulated_stats = R"({"simulated_cost_s":1.5,"simulated_benchmark_s":2})";
  const std::string finalists =
      R"([{"config_key":"128","config":{"block_size_x":128},"is_default":false,"tied_with_winner":true,)"
      R"("screening_median_ms":0.5,"median_ms":0.5,"objective_value":0.5,"stats":)" +
      measured_stats.substr(0, measured_stats.size() - std::string(R"(,"load_ms":1.5})").size()) +
      R"(},"samples_ms":[0.25,0.5,1.0]}])";
  const auto row = [&](const std::string& key, const std::string& config, const std::string& stats) {
    return "INSERT INTO measurements (run_id, kernel_id, problem_id, device_id, config_key, config_json, status, "
           "error, median_ms, samples_ms, compile_ms, verify_ms, started_at, finished_at, stats_json, metrics_json) "
           "VALUES (1, " + std::to_string(id) + ", 1, 1, '" + key + "', '" + config + "', 'ok', '', 0.5, "
           "'[0.25,0.5,1.0]', 10.0, 2.0, 'a', 'b', '" + stats + R"(', '{"GFLOP/s":2.5}');)";
  };
  raw_exec(file.path(),
           row("128", R"({"block_size_x":128,"alg":"b","f":2.45,"on":true})", measured_stats) +
               row("256", R"({"block_size_x":256})", imported_stats) +
               row("512", R"({"block_size_x":512})", simulated_stats) +
               "INSERT INTO winners (kernel_id, problem_id, gpu_model, objective, device_id, run_id, config_key, "
               "config_json, median_ms, default_ms, objective_value, verdict, finalists_json, updated_at, "
               "higher_is_better) VALUES (1, 1, 'NVIDIA H200/sm_90', 'time', 1, 1, '128', '{\"block_size_x\":128}', "
               "0.5, 0.7, 0.5, 'tie', '" + finalists + "', 'c', 0)");

  const auto rows = store.measurements(1, 1, 1);
  REQUIRE(rows.size() == 3);
  const Result& m = rows[0];
  CHECK(m.provenance() == Provenance::Measured);
  REQUIRE(m.stats());
  CHECK(m.stats()->summary.count == 3);
  CHECK(m.stats()->summary.median == 0.5);
  CHECK(m.stats()->stop_reason == StopReason::time_cap);
  CHECK(m.stats()->sm_clock_min_mhz == 1965.0);
  CHECK(m.measured()->load_ms == 1.5);
  CHECK_FALSE(m.measured()->resources);  // a row stored before resources were kept
  CHECK(m.energy_mj_per_launch() == 0.25);
  CHECK(m.objective_value(Objective::of_metric("GFLOP/s", true)) == 2.5);
  const ParameterValues values = m.config.values();
  REQUIRE(values.size() == 4);
  CHECK((values[1].first == "alg" && values[1].second.as_string() == "b"));
  CHECK((values[2].second.is_float() && values[2].second.as_float() == 2.45));
  CHECK((values[3].second.is_bool() && values[3].second.as_bool()));
  const Result& i = rows[1];
  CHECK(i.provenance() == Provenance::Imported);
  CHECK(i.mean_ms() == 4.0);
  CHECK(i.interval_ms() == std::pair{1.9, 3.1});
  CHECK(i.imported()->file_fields["regs"] == 32);
  const Result& s = rows[2];
  CHECK(s.provenance() == Provenance::Simulated);
  CHECK(s.simulated()->cost_s == 1.5);
  CHECK(s.simulated()->benchmark_s == 2.0);
  const auto w = store.winners();
  REQUIRE(w.size() == 1);
  REQUIRE(w[0].finalists.size() == 1);
  CHECK(w[0].finalists[0].config == config_of("128", R"({"block_size_x":128})"));
  CHECK(w[0].finalists[0].tied);
  CHECK(w[0].finalists[0].stats.summary.ci_high == 1.0);
  CHECK(w[0].finalists[0].samples_ms == std::vector<double>{0.25, 0.5, 1.0});
  CHECK_FALSE(w[0].resources);  // its measurement's row keeps none: query shows "-"

  // Written again (another target), each row has the same text as before.
  db::RunSpec other = spec();
  other.problem_key = "n=2";
  db::Run again = store.begin_run(other);
  for (const Result& r : rows) REQUIRE(again.add(r));
  again.set_winner(w[0]);
  const auto text = [&](const char* column, const char* key) {
    return raw_text(file.path(), std::string("SELECT ") + column + " FROM measurements WHERE problem_id = " +
                                     std::to_string(again.problem_id()) + " AND config_key = '" + key + "'");
  };
  CHECK(text("stats_json", "128") == measured_stats);
  CHECK(text("config_json", "128") == R"({"block_size_x":128,"alg":"b","f":2.45,"on":true})");
  CHECK(text("stats_json", "256") == imported_stats);
  CHECK(text("stats_json", "512") == simulated_stats);
  CHECK(raw_text(file.path(), "SELECT finalists_json FROM winners WHERE problem_id = " +
                                   std::to_string(again.problem_id())) == finalists);
}

TEST_CASE("a configuration read back becomes the space's only when the space declares it", "[db]") {
  const Space space = mixed_space();
  const auto check = [&](const std::string& json) {
    return config_of("", json).configuration_in(space);
  };
  CHECK(check(R"({"block_size_x":128,"f":2.45,"alg":"b","on":true})").key() == "128,2.45,b,True");
  CHECK_THROWS_WITH(check(R"({"block_size_x":"128","f":2.45,"alg":"b","on":true})"),
                    Catch::Contains("block_size_x") && Catch::Contains("\"128\""));
  CHECK_THROWS_WITH(check(R"({"block_size_x":64,"f":2.45,"alg":"b","on":1})"), Catch::Contains("on"));
  CHECK_THROWS_WITH(check(R"({"block_size_x":64,"f":2.45,"alg":"b"})"), Catch::Contains("on is missing"));
  CHECK_THROWS_WITH(check(R"({"block_size_x":64,"f":2.45,"alg":"b","on":false,"x":1})"),
                    Catch::Contains("'x' is not declared"));
  CHECK_THROWS_WITH(check(R"({"block_size_x":64,"f":2.45,"alg":"b","on":true})"), Catch::Contains("violates"));
  CHECK_THROWS_AS(check(R"({"block_size_x":64,"f":[1],"alg":"b","on":false})"), InputError);
}
