// The tuning loop over several GPU workers (EvaluationLanes), end to end through
// runner::tune, against the fake GPU worker (fake_gpu_worker.cpp): real NVRTC compiles,
// evaluations answered by the fake, every result in a real store. With 1, 2, 4 and 8
// workers every configuration is evaluated exactly once and every worker takes a share; a
// worker that dies or hangs mid-run loses nothing; without a reference output every
// worker checks against the answer the first configuration defined.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/runner.hpp"
#include "space_helpers.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;

namespace {

/// Points the tuner's GPU workers at the fake for one test (and back).
struct FakeGpus {
  explicit FakeGpus(const std::filesystem::path& log, std::map<std::string, std::string> more = {}) {
    vars_ = {{"CUTUNE_WORKER", FAKE_GPU_WORKER_PATH}, {"FAKE_GPU_WORKER_LOG", log.string()},
             {"FAKE_GPU_WORKER_SLEEP_MS", "5"}};
    for (auto& [k, v] : more) vars_[k] = v;
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~FakeGpus() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }
  std::map<std::string, std::string> vars_;
};

/// Every evaluation the fake workers started: config key -> how many times.
std::map<std::string, int> started(const std::filesystem::path& log) {
  std::map<std::string, int> out;
  std::ifstream in(log);
  for (std::string pid, key; in >> pid >> key;) ++out[key];
  return out;
}

/// One cubin cache for the whole file: the space compiles once.
const std::filesystem::path& cubin_cache() {
  static TempPath dir("cutune-lanes-cubins");
  return dir.path();
}

runner::TuneOptions options_for(const std::filesystem::path& db, std::size_t gpus) {
  runner::TuneOptions o;
  o.db = db;
  o.strategy = "brute_force";
  for (std::size_t i = 0; i < gpus; ++i) o.devices.push_back(static_cast<int>(i));
  o.measure.finalists = 2;
  o.compile.workers = 2;
  o.compile.mode = runner::CompilePoolOptions::Mode::Thread;  // CUTUNE_WORKER names the fake GPU worker
  o.compile.cache_dir = cubin_cache();
  return o;
}

/// The stored measurements by key (one target in the DB), each key once.
std::map<std::string, db::Measurement> stored(const std::filesystem::path& path, std::int64_t) {
  db::Store store = db::Store::open(path, false);
  const auto targets = store.measurement_targets({});
  REQUIRE(targets.size() == 1);
  const auto& t = targets.front();
  std::map<std::string, db::Measurement> out;
  for (auto& m : store.measurements(t.kernel_id, t.problem_id, t.device_id)) {
    INFO(m.config.key());
    CHECK(out.count(m.config.key()) == 0);
    out.emplace(m.config.key(), std::move(m));
  }
  return out;
}



}  // namespace

TEST_CASE("lanes: 1, 2, 4 and 8 GPU workers evaluate every configuration exactly once", "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  for (std::size_t n : {1, 2, 4, 8}) {
    DYNAMIC_SECTION(n << " workers") {
      TempPath db("cutune-lanes.db"), log("cutune-lanes.log");
      FakeGpus fake(log.path());
      const runner::TuneReport r = runner::tune(p, options_for(db.path(), n));
      const auto runs = started(log.path());
      const std::uint64_t valid = p.space().count_valid();
      CHECK(r.configs_tried == valid);
      CHECK(runs.size() == valid);
      for (const auto& [key, times] : runs) {
        INFO(key);
        CHECK(times == 1);
      }
      CHECK(stored(db.path(), r.run_id).size() == valid);
      REQUIRE(r.workers.size() == n);
      std::uint64_t sum = 0;
      for (const auto& w : r.workers) {
        INFO(w.name);
        CHECK(w.evaluations > 0);  // every GPU worker takes a share
        CHECK_FALSE(w.lost);
        sum += w.evaluations;
      }
      CHECK(sum == valid);
      CHECK(r.winner.has_value());
      CHECK(r.worker_restarts == 0);
    }
  }
}

TEST_CASE("lanes: each configuration's resources are stored with its measurement and shown with the winner",
          "[runner][lanes][resources]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-lanes-resources.db"), log("cutune-lanes-resources.log");
  FakeGpus fake(log.path());
  const runner::TuneReport r = runner::tune(p, options_for(db.path(), 2));
  const auto rows = stored(db.path(), r.run_id);
  REQUIRE(rows.size() == p.space().count_valid());
  for (const auto& [key, m] : rows) {
    INFO(key);
    REQUIRE(m.measured() != nullptr);
    REQUIRE(m.measured()->resources.has_value());
    // The fake worker's registers are 16 + the key's length: this row holds its own.
    CHECK(m.measured()->resources->registers == 16 + static_cast<int>(key.size()));
    CHECK(m.measured()->resources->shared_bytes() == 1024);
    CHECK(m.measured()->resources->occupancy == 0.5);
  }
  db::Store store = db::Store::open(db.path(), false);
  const auto winners = store.winners({});
  REQUIRE(winners.size() == 1);
  REQUIRE(winners.front().resources.has_value());
  CHECK(winners.front().resources->registers == 16 + static_cast<int>(winners.front().config.key().size()));
}

TEST_CASE("lanes: a GPU worker that dies mid-run loses nothing", "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-lanes-die.db"), log("cutune-lanes-die.log");
  // Every worker process dies on its 8th evaluation: the one it held fails as a runtime
  // failure, the one queued behind it goes to its restarted successor.
  FakeGpus fake(log.path(), {{"FAKE_GPU_WORKER_DIE_AFTER", "7"}});
  const runner::TuneReport r = runner::tune(p, options_for(db.path(), 4));
  const auto rows = stored(db.path(), r.run_id);
  CHECK(rows.size() == p.space().count_valid());
  CHECK(r.configs_tried == p.space().count_valid());
  CHECK(r.worker_restarts > 0);
  std::size_t died = 0;
  for (const auto& [key, m] : rows)
    if (m.status == Status::Runtime) {
      CHECK(m.error.find("GPU worker died") != std::string::npos);
      ++died;
    }
  CHECK(died == r.worker_restarts);
  CHECK(r.winner.has_value());
}

TEST_CASE("lanes: a GPU worker that hangs is killed and its configuration recorded as a timeout", "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  // A configuration in the middle of the space hangs; the others go on on the other workers.
  const std::vector<std::string> keys = testing::valid_keys(p.space());
  const std::string hanging = keys.at(keys.size() / 2);
  TempPath db("cutune-lanes-hang.db"), log("cutune-lanes-hang.log");
  FakeGpus fake(log.path(), {{"FAKE_GPU_WORKER_SCRIPT", hanging + "=hang"}});
  runner::TuneOptions o = options_for(db.path(), 4);
  o.timeout_floor_s = 1.0;
  const runner::TuneReport r = runner::tune(p, o);
  const auto rows = stored(db.path(), r.run_id);
  CHECK(rows.size() == keys.size());
  REQUIRE(rows.count(hanging) == 1);
  CHECK(rows.at(hanging).status == Status::Timeout);
  CHECK(r.worker_restarts == 1);
  for (const auto& [key, times] : started(log.path())) {
    INFO(key);
    CHECK(times == 1);
  }
}

TEST_CASE("lanes: without a reference output every worker checks against the first configuration's",
          "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-lanes-default.db"), log("cutune-lanes-default.log");
  FakeGpus fake(log.path());
  runner::TuneOptions o = options_for(db.path(), 3);
  o.measure.verify = {"default"};
  const runner::TuneReport r = runner::tune(p, o);
  const auto runs = started(log.path());
  const std::string default_key = r.default_config->key();
  // Evaluated once as the first configuration, then once more by each of the two other
  // workers before anything else (the fake, like the real stage, defines its expected output
  // from the first configuration that succeeds on it).
  CHECK(runs.at(default_key) == 3);
  CHECK(stored(db.path(), r.run_id).size() == p.space().count_valid());
  CHECK(r.configs_tried == p.space().count_valid());
}

TEST_CASE("lanes: GPUs of two models are refused before anything is stored", "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-lanes-models.db"), log("cutune-lanes-models.log");
  FakeGpus fake(log.path(), {{"FAKE_GPU_WORKER_DEVICE", "Fake A,Fake B"}});
  try {
    (void)runner::tune(p, options_for(db.path(), 2));
    FAIL("two GPU models were tuned together");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "GPU 1 is a Fake B/sm_90 but GPU 0 is a Fake A/sm_90: tune each GPU model in a run "
                                   "of its own");
  }
  CHECK_FALSE(std::filesystem::exists(db.path()));
  CHECK(started(log.path()).empty());
}

TEST_CASE("lanes: a GPU named twice gets two workers", "[runner][lanes]") {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath db("cutune-lanes-twice.db"), log("cutune-lanes-twice.log");
  FakeGpus fake(log.path());
  runner::TuneOptions o = options_for(db.path(), 1);
  o.devices = {0, 0};
  const runner::TuneReport r = runner::tune(p, o);
  REQUIRE(r.workers.size() == 2);
  CHECK(r.workers[0].evaluations > 0);
  CHECK(r.workers[1].evaluations > 0);
  CHECK(r.configs_tried == p.space().count_valid());
}
