// The runner: its CPU-side parts everywhere; the whole tuning loop on the GPU ([gpu]).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sstream>

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/nvml.hpp"
#include "cutune/measure/finalists.hpp"
#include "cutune/measure/gpu_helpers.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/pace.hpp"
#include "cutune/templates/catalog.hpp"
#include "nameless_default_problem.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;

TEST_CASE("content_hash is FNV-1a 64 and stable", "[runner]") {
  CHECK(runner::content_hash("") == "cbf29ce484222325");
  CHECK(runner::content_hash("a") == "af63dc4c8601ec8c");
  CHECK(runner::content_hash("kernel A") != runner::content_hash("kernel B"));
}

TEST_CASE("a tuning session builds its inputs once and refuses bad ones before any write", "[runner]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  testing::TempDir dir("cutune_session");
  const auto db = dir.path() / "sub" / "s.db";
  runner::TuneOptions o;
  o.db = db;
  o.problem = "n=1000";
  o.first = {"block_size_x=128", "elements_per_thread=2"};
  o.strategy = "random";
  o.seed = 7;
  {
    runner::TuningSession session(p, o);
    CHECK(session.instance().key() == "n=1000");
    CHECK(session.default_config() == Configuration::default_of(p.space()));
    REQUIRE(session.first().size() == 2);
    CHECK(session.first()[0] == Configuration::from_assignments(p.space(), "block_size_x=128"));
    CHECK(session.first()[1].key() == Configuration::from_assignments(p.space(), "elements_per_thread=2").key());
    CHECK(session.objective() == Objective::time());
    CHECK(session.objective_warning().empty());
    CHECK_FALSE(session.strategy().ask(1).empty());
    // A new DB is created only when asked for (tune() asks once it has found the GPU).
    CHECK_FALSE(std::filesystem::exists(db));
    CHECK(session.store().integrity_ok());
    CHECK(std::filesystem::exists(db));
  }
  auto refused = [&](runner::TuneOptions bad, const std::string& says) {
    bad.db = dir.path() / "never.db";
    INFO(says);
    CHECK_THROWS_WITH(runner::TuningSession(p, bad), Catch::Contains(says));
    CHECK_FALSE(std::filesystem::exists(bad.db));
  };
  runner::TuneOptions bad = o;
  bad.strategy = "nope";
  refused(bad, "nope");
  bad = o;
  bad.problem = "n=abc";
  refused(bad, "abc");
  bad = o;
  bad.first = {"block_size_x=100"};
  refused(bad, "--try block_size_x=100");
  bad = o;
  bad.first = {"block_size_x=1024,elements_per_thread=8"};
  refused(bad, "violates");
  bad = o;
  bad.objective = "GFLOPs";
  refused(bad, "--objective GFLOPs");
  bad = o;
  bad.objective_higher_is_better = true;
  refused(bad, "always lower-is-better");
  bad = o;
  bad.measure.verify = {"nonsense"};
  refused(bad, "nonsense");
  // An existing file that is not a cutune DB: refused, and left as it was.
  const auto garbage = dir.path() / "garbage.db";
  std::ofstream(garbage, std::ios::binary) << std::string(4096, 'x');
  bad = o;
  bad.db = garbage;
  CHECK_THROWS_AS(runner::TuningSession(p, bad), InputError);
  CHECK(std::filesystem::file_size(garbage) == 4096);
  // An existing DB is opened by the session itself, once.
  runner::TuningSession again(p, o);
  CHECK(again.store().path() == db);
}

TEST_CASE("a tuning evaluates the default first when the problem names it or its output defines a correct one",
          "[runner]") {
  testing::TempDir dir("cutune_default_first");
  runner::TuneOptions o;
  o.db = dir.path() / "never.db";
  // A built-in template names its default.
  const KernelProblem named = KernelProblem::load(testing::template_json("vector_add"));
  CHECK(runner::TuningSession(named, o).default_first());
  // A Kernel Tuner script names none: its first listed values are no better a start than any,
  // unless no reference says what a correct output is, when the default's output does.
  std::ofstream(dir.path() / "k.cu") << testing::kNamelessKernelSource;
  std::ofstream(dir.path() / "k.json") << testing::nameless_default_problem();
  const KernelProblem nameless = KernelProblem::load(dir.path() / "k.json");
  REQUIRE_FALSE(nameless.space().default_named());
  CHECK(runner::evaluates_default_first(nameless));  // x has no reference
  CHECK_FALSE(runner::evaluates_default_first(nameless, {"none"}));
  o.measure.verify = {"none"};
  CHECK_FALSE(runner::TuningSession(nameless, o).default_first());
  CHECK(runner::TuningSession(named, o).default_first());
  CHECK_FALSE(std::filesystem::exists(o.db));
}

TEST_CASE("tune says there is no GPU instead of failing obscurely", "[runner]") {
  std::string why;
  if (cuda::device_count(&why) > 0) {
    WARN("a GPU is present: the no-GPU path is not exercised here");
    return;
  }
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-nogpu.db");
  runner::TuneOptions o;
  o.db = db.path();
  CHECK_THROWS_AS(runner::tune(p, o), cuda::NoDriver);
  CHECK_FALSE(std::filesystem::exists(db.path()));  // nothing written
}

// ---------------------------------------------------------------------------- GPU

namespace {

/// Three samples a configuration and no thorough stage (it has its own test below).
runner::TuneOptions quick_options(const std::filesystem::path& db, const std::string& problem) {
  runner::TuneOptions o;
  o.db = db;
  o.problem = problem;
  o.measure.screening.min_samples = o.measure.screening.max_samples = 3;
  o.measure.finalists = 0;
  return o;
}

runner::TuneReport tune_quietly(const KernelProblem& p, const std::filesystem::path& db,
                                const std::string& problem, const std::string& strategy = "brute_force",
                                std::optional<std::uint64_t> budget = std::nullopt) {
  runner::TuneOptions o = quick_options(db, problem);
  o.strategy = strategy;
  o.budget = budget;
  return runner::tune(p, o);
}

}  // namespace

TEST_CASE("vector_add: every configuration verifies at awkward sizes", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  auto n = GENERATE(as<std::string>{}, "n=1", "n=31", "n=1000", "n=1048583", "n=67108864");
  TempPath db("cutune-va.db");
  auto r = tune_quietly(p, db.path(), n);
  INFO(n);
  CHECK(r.configs_tried == p.space().count_valid());
  CHECK(r.configs_failed == 0);
  CHECK(r.winner.has_value());
  CHECK(r.winner_ms > 0);
  CHECK(r.default_ms >= r.winner_ms);
  CHECK(r.verification == "reference");
}

namespace {

struct SizeCase {
  std::string kernel;  ///< a T1 file stem in the template folders
  std::vector<std::string> problems;
};

// Sizes 1, 31, 1000, 2^20+7 and a large one per template (2D and 3D problems get odd
// shapes around them), each with a seeded sample of configurations verified element by
// element against the CPU reference.
const std::vector<SizeCase> kSizeCases = {
    {"reduction", {"n=1", "n=31", "n=1000", "n=1048583", "n=268435456"}},
    {"reduction_int32", {"n=1", "n=31", "n=1000", "n=1048583", "n=268435456"}},
    {"scan", {"n=1", "n=31,inclusive=1", "n=1000", "n=1048583,inclusive=1", "n=268435456"}},
    {"scan_int32", {"n=1,inclusive=1", "n=31", "n=1000,inclusive=1", "n=1048583", "n=268435456,inclusive=1"}},
    {"transpose", {"rows=1,cols=1", "rows=31,cols=17", "rows=1000,cols=1000", "rows=1031,cols=1017", "rows=16384,cols=16384"}},
    {"strided_access", {"n=1", "n=31", "n=1000", "n=1048583", "n=33554432"}},
    {"matmul", {"m=1,n=1,k=1", "m=31,n=17,k=5", "m=1000,n=1000,k=1000", "m=1031,n=1025,k=1027", "m=4096,n=4096,k=4096"}},
};

std::filesystem::path find_template(const std::string& stem) {
  return templates::resolve_template(stem, testing::template_dir());
}

}  // namespace

TEST_CASE("every template verifies a seeded sample of configurations at awkward sizes", "[gpu]") {
  for (const auto& c : kSizeCases) {
    KernelProblem p = KernelProblem::load(find_template(c.kernel));
    for (const auto& problem : c.problems) {
      TempPath db("cutune-sizes.db");
      const std::uint64_t budget = 12;
      auto r = tune_quietly(p, db.path(), problem, "random", budget);
      INFO(c.kernel << " " << problem);
      CHECK(r.configs_tried == std::min<std::uint64_t>(budget, p.space().count_valid()));
      CHECK(r.configs_failed == 0);
      for (const auto& [status, n] : r.failures_by_status) UNSCOPED_INFO(status << ": " << n);
      CHECK(r.winner.has_value());
    }
  }
}

TEST_CASE("a second session on the same DB resumes: nothing is re-run", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-resume.db");
  auto first = tune_quietly(p, db.path(), "n=100000", "random", 10);
  CHECK(first.configs_tried == 10);
  auto second = tune_quietly(p, db.path(), "n=100000");
  CHECK(second.configs_resumed == 10);
  CHECK(second.configs_tried == p.space().count_valid() - 10);
  auto third = tune_quietly(p, db.path(), "n=100000");
  CHECK(third.configs_tried == 0);
  CHECK(third.configs_resumed == p.space().count_valid());
  REQUIRE(third.winner);
  CHECK(third.winner == second.winner);
  auto store = db::Store::open(db.path(), false);
  auto winners = store.winners({"vector_add", "", "n=100000", ""});
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].config.key() == third.winner->key());
  CHECK(winners[0].config.to_json() == third.winner->to_json());
  CHECK(winners[0].config.configuration_in(p.space()) == *third.winner);
  CHECK(store.integrity_ok());
}

TEST_CASE("a second GPU of the model reuses what the first stored, and --reuse gpu measures its own", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-reuse-model.db");
  const auto first = tune_quietly(p, db.path(), "n=100000", "random", 10);
  REQUIRE(first.configs_tried == 10);
  // The GPU that measured them becomes another physical GPU of the same model, as in a DB
  // carried from another machine or merged from shards that ran elsewhere.
  {
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open(db.path().string().c_str(), &h) == SQLITE_OK);
    // ... and its run was interrupted there.
    const int rc = sqlite3_exec(h, "UPDATE devices SET uuid = 'GPU-another-of-the-model'; UPDATE runs SET finished_at = NULL",
                                nullptr, nullptr, nullptr);
    sqlite3_close(h);
    REQUIRE(rc == SQLITE_OK);
  }
  const std::uint64_t valid = p.space().count_valid();
  {
    // Its measurements are reused, so its unfinished run is named, with where it ran.
    runner::TuneOptions o = quick_options(db.path(), "n=100000");
    o.strategy = "random";
    o.budget = 2;
    std::ostringstream log;
    o.log = &log;
    const auto r = runner::tune(p, o);
    INFO(log.str());
    CHECK(r.configs_tried == 2);
    CHECK(log.str().find("10 of the stored measurements were made on 1 other GPU of the model") != std::string::npos);
    CHECK(log.str().find(", on another GPU of the model) has not finished") != std::string::npos);
  }
  const auto second = tune_quietly(p, db.path(), "n=100000");
  CHECK(second.configs_resumed == 12);
  CHECK(second.configs_resumed_other_gpus == 10);
  CHECK(second.configs_tried == valid - 12);
  // This GPU's own only: the other GPU's 10 are measured here too, nothing else again.
  runner::TuneOptions o = quick_options(db.path(), "n=100000");
  o.reuse = runner::TuneOptions::Reuse::Gpu;
  const auto third = runner::tune(p, o);
  CHECK(third.configs_tried == 10);
  CHECK(third.configs_resumed == valid - 10);
  CHECK(third.configs_resumed_other_gpus == 0);
  auto store = db::Store::open(db.path(), false);
  const auto targets = store.measurement_targets({"vector_add", "", "n=100000", ""});
  REQUIRE(targets.size() == 2);  // the two GPUs, each with its own rows
  CHECK(targets[0].count + targets[1].count == valid + 10);
  CHECK(store.integrity_ok());
}

TEST_CASE("a time budget alone: the strategy learns its budget from the first results' pace", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("reduction"));
  TempPath db("cutune-paced.db");
  runner::TuneOptions o = quick_options(db.path(), "n=1000000");
  o.time_budget_s = 6.0;
  std::ostringstream log;
  o.log = &log;
  const auto r = runner::tune(p, o);
  INFO(log.str());
  CHECK(r.configs_tried > search::kPaceResults);
  REQUIRE(r.learnt_budget);
  CHECK(*r.learnt_budget >= 1);
  CHECK(*r.learnt_budget <= p.space().count_valid());
  CHECK(log.str().find("at the pace of the first 8 results") != std::string::npos);
  CHECK(log.str().find(fmt::format("plans for {} evaluations", *r.learnt_budget)) != std::string::npos);
  // Given an evaluation budget, it plans with that.
  TempPath db2("cutune-unpaced.db");
  o.db = db2.path();
  o.budget = 12;
  std::ostringstream log2;
  o.log = &log2;
  const auto r2 = runner::tune(p, o);
  CHECK_FALSE(r2.learnt_budget);
  CHECK(log2.str().find("at the pace of") == std::string::npos);
}

TEST_CASE("failures are data: compile, resources, wrong results, illegal addresses and hangs", "[gpu]") {
  // Fault injection: every failure is stored with its status, the GPU worker is
  // restarted after a sticky error or a hang, and the configurations after them still run.
  KernelProblem p = KernelProblem::load(testing::test_data_dir() / "faulty/faulty.json");
  TempPath db("cutune-faulty.db");
  runner::TuneOptions o;
  o.db = db.path();
  o.problem = "n=100000";
  o.measure.screening.min_samples = o.measure.screening.max_samples = 3;
  o.measure.finalists = 0;
  o.timeout_floor_s = 1.0;  // the hanging configurations cost a second each
  auto r = runner::tune(p, o);
  CHECK(r.configs_tried == 12);
  std::map<std::string, std::string> status;
  for (const auto& [name, n] : r.failures_by_status) status[name] = std::to_string(n);
  CHECK(status["compile"] == "2");      // mode 1 at both block sizes
  CHECK(status["correctness"] == "2");  // mode 2 at both block sizes
  CHECK(status["runtime"] == "3");      // mode 3 at 256 threads > __launch_bounds__(64); mode 4 twice
  CHECK(status["timeout"] == "2");      // mode 5 at both block sizes
  CHECK(r.configs_failed == 9);
  CHECK(r.worker_restarts == 4);        // two illegal addresses, two hangs
  std::map<std::string, db::Measurement> by_key;
  {
    // The ids of what tune() stored (upserts of existing rows return their ids).
    auto rw = db::Store::open(db.path(), true);
    std::ifstream json_in(p.json_file(), std::ios::binary);
    const std::string json_text((std::istreambuf_iterator<char>(json_in)), std::istreambuf_iterator<char>());
    const auto kernel_id = rw.upsert_kernel("faulty", runner::content_hash(p.source() + '\0' + json_text));
    const auto problem_id = rw.upsert_problem(kernel_id, r.problem_key, "");
    for (auto& m : rw.measurements(kernel_id, problem_id, rw.upsert_device(r.device))) by_key[m.config.key()] = m;
  }
  auto store = db::Store::open(db.path(), false);
  REQUIRE(by_key.size() == 12);
  CHECK(by_key["64,4"].status == Status::Runtime);
  CHECK_THAT(by_key["64,4"].error, Catch::Matchers::Contains("illegal", Catch::CaseSensitive::No));
  CHECK(by_key["64,5"].status == Status::Timeout);
  // Measured after the worker was lost twice: the restarted worker works.
  CHECK(by_key["256,0"].status == Status::Ok);
  CHECK(by_key["256,0"].median_ms > 0);
  auto winners = store.winners({"faulty", "", "", ""});
  REQUIRE(winners.size() == 1);
  CHECK((winners[0].config.key() == "64,0" || winners[0].config.key() == "256,0" || winners[0].config.key() == "64,3"));
  CHECK(store.integrity_ok());
}

TEST_CASE("the thorough stage re-measures the finalists and declares the winner or a tie", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-finalists.db");
  runner::TuneOptions o;
  o.db = db.path();
  o.problem = "n=16777216";
  o.measure.thorough.time_cap_s = 0.3;
  auto r = runner::tune(p, o);
  REQUIRE_FALSE(r.finalists.empty());
  CHECK(r.finalists.size() <= 4);  // top 3 and the default
  CHECK((r.verdict == Verdict::Separated || r.verdict == Verdict::Tie));
  CHECK(r.winner == r.finalists.front().config);
  CHECK(r.winner_ms == r.finalists.front().stats.summary.median);
  CHECK(std::count_if(r.finalists.begin(), r.finalists.end(), [](const auto& f) { return f.is_default; }) == 1);
  for (const auto& f : r.finalists) {
    INFO(f.config.key());
    CHECK(f.stats.level == MeasurementLevel::Thorough);
    CHECK(f.stats.summary.count >= o.measure.thorough.min_samples);
    CHECK(f.stats.summary.ci_low <= f.stats.summary.median);
    CHECK(f.stats.summary.median <= f.stats.summary.ci_high);
    CHECK(f.stats.set.clocks_mhz.size() == f.stats.set.samples_ms.size());
  }
  for (std::size_t i = 1; i < r.finalists.size(); ++i)
    CHECK(r.finalists[i - 1].stats.summary.median <= r.finalists[i].stats.summary.median);
  CHECK(r.screening_ms_per_config > 0);
  CHECK(r.thorough_ms_per_config > 0);
  auto store = db::Store::open(db.path(), false);
  auto w = store.winners({"vector_add", "", "n=16777216", ""});
  REQUIRE(w.size() == 1);
  CHECK(w[0].verdict == r.verdict);
  CHECK(w[0].config.key() == r.winner->key());
  CHECK(w[0].finalists.size() == r.finalists.size());
  // Every screened measurement carries its statistics.
  for (const auto& m : store.measurements(1, 1, 1)) {
    if (m.status != Status::Ok) continue;
    REQUIRE(m.stats());
    CHECK(m.stats()->level == MeasurementLevel::Screening);
    CHECK(m.stats()->summary.count == m.samples_ms.size());
    CHECK(m.stats()->sm_clock_mhz.has_value());
  }
}

TEST_CASE("cold samples: an L2 flush and rotated argument sets both defeat the L2", "[gpu]") {
  // 24 MiB of vector_add data fits in the L2 of an H100 (50 MB) or H200 (60 MB): warm, it
  // is served from L2; flushed or rotated, from DRAM, which is at least 1.3x slower.
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  auto measure = [&](bool cold, bool rotate) {
    worker::MeasureOptions o;
    o.cold_l2 = cold;
    o.rotate_when_fits = rotate;
    o.thorough.time_cap_s = 0.3;
    auto r = runner::measure_configs(p, "n=2097152", {""}, 0, o);
    REQUIRE(r.configs.size() == 1);
    REQUIRE(r.configs[0].evaluation.stats);
    return std::pair{r.configs[0].evaluation.median_ms(), r.l2_method};
  };
  const auto [warm, warm_method] = measure(false, false);
  const auto [flushed, flush_method] = measure(true, false);
  const auto [rotated, rotate_method] = measure(true, true);
  CHECK(warm_method == "warm");
  CHECK(flush_method == "flush");
  CHECK(rotate_method.rfind("rotate ", 0) == 0);
  INFO("warm " << warm << " ms, flushed " << flushed << " ms, rotated " << rotated << " ms");
  CHECK(flushed > 1.3 * warm);
  CHECK(rotated > 1.3 * warm);
}

TEST_CASE("activity timing: the work's own GPU time, without the event pair's offset", "[gpu]") {
  // A small vector_add (~5 us): the event pair around one launch adds ~1 us more than
  // CUPTI's kernel timestamps (H100: results/nvidia-h100-80gb-hbm3/measurement.json, fidelity).
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  auto measure = [&](const char* timer) {
    worker::MeasureOptions o;
    o.sampler.timer = *parse_sample_timer(timer);
    o.thorough.time_cap_s = 0.3;
    auto r = runner::measure_configs(p, "n=2**20", {""}, 0, o);
    REQUIRE(r.configs.size() == 1);
    REQUIRE(r.configs[0].evaluation.stats);
    const auto& st = *r.configs[0].evaluation.stats;
    CHECK(timer_name(st.set.timer) == std::string(timer));
    CHECK(st.set.timer_fallbacks == 0);
    CHECK(nlohmann::json::parse(db::stats_json(st))["timer"] == timer);
    return std::pair{r.configs[0].evaluation.median_ms(), r.timer_floor_ms};
  };
  const auto [activity, floor_a] = measure("activity");
  const auto [events, floor] = measure("events");
  INFO("activity " << activity << " ms, events " << events << " ms, event pair around no work " << floor << " ms");
  CHECK(activity > 0.0005);
  CHECK(activity < events);
  CHECK(events - activity < 0.005);  // the offset is about a microsecond, not more
  // The event pair around no work: positive (two timestamps are never written at once), and
  // below a launch that does work.
  CHECK(floor > 0.0);
  CHECK(floor < events);
  CHECK(floor_a > 0.0);
}

TEST_CASE("the clock probe reads the SM clock NVML reports", "[gpu]") {
  cuda::Context ctx(0);
  measure::GpuHelpers helpers;
  cuda::NvmlDevice nvml(cuda::identify(0).uuid);
  const double rated = cuda::identify(0).sm_clock_khz / 1000.0;
  double probed = 0;
  std::optional<double> reported;
  for (int i = 0; i < 20; ++i) {  // a few probes: the clock ramps up from idle
    helpers.probe_clock(nullptr, 100000);  // 100 us
    ctx.synchronize();
    probed = helpers.probed_clock_mhz();
    reported = nvml.sm_clock_mhz();
  }
  INFO("probe " << probed << " MHz, NVML " << (reported ? *reported : -1) << " MHz, rated " << rated << " MHz");
  CHECK(probed > 200);
  CHECK(probed < 1.1 * rated);
  if (reported) CHECK(std::abs(probed - *reported) < 0.15 * *reported);
  // The blocking kernel holds the stream until released, then lets it go.
  helpers.block();
  helpers.release();
  ctx.synchronize();
  CHECK_FALSE(helpers.block_timed_out());
}

TEST_CASE("energy as the objective: ranked by energy per launch, a winner of its own", "[gpu]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-energy.db");
  runner::TuneOptions o;
  o.db = db.path();
  o.problem = "n=16777216";
  o.strategy = "random";
  o.budget = 6;
  o.measure.thorough.time_cap_s = 0.2;
  o.objective = "energy";
  auto e = runner::tune(p, o);
  if (!cuda::NvmlDevice(cuda::identify(0).uuid).available()) {
    WARN("no NVML: energy cannot be measured here");
    return;
  }
  REQUIRE(e.winner);
  CHECK(e.objective == Objective::energy());
  CHECK(e.verdict == Verdict::Screening);
  CHECK(e.winner_objective_value > 0);
  for (std::size_t i = 1; i < e.finalists.size(); ++i)
    CHECK(e.finalists[i - 1].stats.energy_mj_per_launch.value_or(1e300) <=
          e.finalists[i].stats.energy_mj_per_launch.value_or(1e300));
  o.objective = "time";
  o.resume = true;  // the same 6 configurations ranked for time: the stored ones fill the budget
  auto t = runner::tune(p, o);  // resumes every configuration, then re-measures for time
  CHECK(t.configs_tried == 0);
  auto store = db::Store::open(db.path(), false);
  auto w = store.winners({"vector_add", "", "", ""});
  REQUIRE(w.size() == 2);  // one per objective; the time tuning did not replace the energy winner
  CHECK(w[0].objective == Objective::energy());
  CHECK(w[0].config.key() == e.winner->key());
  CHECK(w[0].objective_value == e.winner_objective_value);
  CHECK(w[1].objective == Objective::time());
  REQUIRE(t.winner);
  CHECK(w[1].config.key() == t.winner->key());
}

TEST_CASE("finalists ranked by a metric: the largest wins though slower, overlapping intervals tie",
          "[runner][objective]") {
  // Three finalists: (median, interval) in ms and the work each does per launch. GFLOP/s =
  // work / time: the slowest (index 2) does the most work and has the highest metric.
  auto summary = [](double median, double lo, double hi) {
    Summary s;
    s.count = 20;
    s.median = median;
    s.ci_low = lo;
    s.ci_high = hi;
    return s;
  };
  const std::vector<Summary> times{summary(1.0, 0.99, 1.01), summary(1.5, 1.49, 1.51),
                                            summary(2.0, 1.99, 2.01)};
  const std::vector<double> work{1.0, 2.0, 6.0};
  std::vector<Summary> costs;
  for (std::size_t i = 0; i < times.size(); ++i)
    costs.push_back(runner::metric_cost_summary(times[i], [&](double ms) { return work[i] / ms; }, true));
  // The cost interval is the metric's, from both ends of the time interval, negated.
  CHECK(costs[2].median == Approx(-3.0));
  CHECK(costs[2].ci_low == Approx(-6.0 / 1.99));
  CHECK(costs[2].ci_high == Approx(-6.0 / 2.01));
  measure::Verdict v = measure::declare_winner(costs, 0);
  CHECK(v.winner == 2);
  CHECK(v.ranking == std::vector<std::size_t>{2, 1, 0});
  CHECK(v.separated);
  // Lower is better on the same metric: the smallest (index 0, 1.0 against 1.33 and 3.0).
  costs.clear();
  for (std::size_t i = 0; i < times.size(); ++i)
    costs.push_back(runner::metric_cost_summary(times[i], [&](double ms) { return work[i] / ms; }, false));
  CHECK(measure::declare_winner(costs).winner == 0);
  // Equal metrics with overlapping intervals: a tie; a metric that does not evaluate ranks last.
  costs = {runner::metric_cost_summary(times[0], [](double ms) { return 1.0 / ms; }, true),
           runner::metric_cost_summary(summary(1.0, 0.98, 1.02), [](double ms) { return 1.0 / ms; }, true),
           runner::metric_cost_summary(times[2], [](double) { return std::nan(""); }, true)};
  v = measure::declare_winner(costs);
  CHECK_FALSE(v.separated);
  CHECK(v.tied.size() == 2);
  CHECK(v.ranking.back() == 2);
}
