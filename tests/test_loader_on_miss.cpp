// Tuning on first use without a GPU: the option and environment values (bad ones are one line
// naming them), and the background tuning with a stand-in tuner (fake_cutune_tune): started
// detached under a claim, its winner noticed and then chosen by the ladder as exact; a crashing
// tuner changes nothing and releases its claim; another process's claim is waited on; an
// expired one is taken over.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "background_tuning.hpp"
#include "cutune/db/store.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "on_miss_settings.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;
using loader::OnMiss;
using loader::detail::BackgroundTuning;
using loader::detail::TuneEvent;

namespace {

/// Sets (or with nullptr unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

DeviceIdentity h200() {
  DeviceIdentity d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  return d;
}

/// A folder holding the DB (and the tuners' logs beside it); the settings of a fast watcher.
struct OnMissFixture {
  TempPath dir{"cutune-on-miss"};
  std::filesystem::path db;
  loader::detail::OnMissSettings settings;
  KernelProblem reduction = KernelProblem::load(testing::template_json("reduction"));
  OnMissFixture() {
    std::filesystem::create_directories(dir.path());
    db = dir.path() / "tuned.db";
    OnMiss o;
    o.mode = OnMiss::Mode::Tune;
    o.budget_s = 1;
    o.poll_s = 0.05;
    o.db = db;
    o.tuner = CUTUNE_FAKE_TUNE_PATH;
    settings = *loader::detail::resolve_on_miss(o, {}, false);
  }
  loader::detail::TuneJob job(const std::string& problem = "n=1048576") const {
    loader::detail::TuneJob j;
    j.kernel_file = reduction.json_file();
    j.problem = problem;
    j.key.kernel = reduction.name();
    j.key.problem_key = reduction.instantiate(problem).key();
    j.key.gpu_model = h200().model_key();
    j.key.objective = "time";
    return j;
  }
  db::TuningClaim key() const { return job().key; }
};

/// The events of one job, as the watcher thread tells them.
struct Events {
  std::mutex mutex;
  std::vector<TuneEvent> got;
  BackgroundTuning::Notify notify() {
    return [this](const TuneEvent& e) {
      std::lock_guard lock(mutex);
      got.push_back(e);
    };
  }
  std::vector<TuneEvent::Kind> kinds() {
    std::lock_guard lock(mutex);
    std::vector<TuneEvent::Kind> k;
    for (const auto& e : got) k.push_back(e.kind);
    return k;
  }
  std::string text(std::size_t i) {
    std::lock_guard lock(mutex);
    return i < got.size() ? got[i].text : "";
  }
};

using K = TuneEvent::Kind;

}  // namespace

TEST_CASE("on_miss: the environment and the option, and bad values named in one line", "[loader][on_miss]") {
  {
    ScopedEnv mode("CUTUNE_ON_MISS", nullptr), budget("CUTUNE_ON_MISS_BUDGET", nullptr);
    CHECK(loader::on_miss_from_environment().mode == OnMiss::Mode::Off);
    CHECK_FALSE(loader::detail::resolve_on_miss(std::nullopt, {}, false).has_value());
  }
  {
    ScopedEnv mode("CUTUNE_ON_MISS", "tune"), budget("CUTUNE_ON_MISS_BUDGET", "2.5"), db("CUTUNE_ON_MISS_DB", "/tmp/x.db");
    const OnMiss o = loader::on_miss_from_environment();
    CHECK(o.mode == OnMiss::Mode::Tune);
    CHECK(o.budget_s == 2.5);
    CHECK(o.db == "/tmp/x.db");
    // An explicit option wins over the environment.
    CHECK_FALSE(loader::detail::resolve_on_miss(OnMiss{}, {}, false).has_value());
  }
  {
    ScopedEnv mode("CUTUNE_ON_MISS", "off");
    CHECK(loader::on_miss_from_environment().mode == OnMiss::Mode::Off);
  }
  {
    ScopedEnv mode("CUTUNE_ON_MISS", "yes");
    CHECK_THROWS_WITH(loader::on_miss_from_environment(), "CUTUNE_ON_MISS: 'yes' is not one of off, tune");
    loader::LoaderOptions o;
    o.template_dir = testing::template_dir();
    CHECK_THROWS_AS(loader::Loader(o), InputError);  // the loader reads it when it is made
  }
  for (const char* bad : {"abc", "-3", "0", "inf", "10s", ""}) {
    ScopedEnv mode("CUTUNE_ON_MISS", "tune"), budget("CUTUNE_ON_MISS_BUDGET", bad);
    if (*bad == '\0') {
      CHECK(loader::on_miss_from_environment().budget_s == 10.0);  // empty: the default
      continue;
    }
    CHECK_THROWS_WITH(loader::on_miss_from_environment(),
                      fmt::format("CUTUNE_ON_MISS_BUDGET: '{}' is not a number of seconds > 0", bad));
  }
  OnMiss o;
  o.mode = OnMiss::Mode::Tune;
  o.tuner = CUTUNE_FAKE_TUNE_PATH;
  o.budget_s = -1;
  CHECK_THROWS_WITH(loader::detail::resolve_on_miss(o, {}, false),
                    "LoaderOptions::on_miss.budget_s: -1 is not a number of seconds > 0");
  o.budget_s = 1;
  o.poll_s = 0;
  CHECK_THROWS_WITH(loader::detail::resolve_on_miss(o, {}, false),
                    "LoaderOptions::on_miss.poll_s: 0 is not a number of seconds > 0");
  o.poll_s = 1;
  o.tuner = "/nonexistent/cutune";
  CHECK_THROWS_WITH(loader::detail::resolve_on_miss(o, {}, false),
                    "LoaderOptions::on_miss.tuner: /nonexistent/cutune: not an executable file");
  o.tuner.clear();
  {
    ScopedEnv bin("CUTUNE_BIN", "/nonexistent/cutune");
    CHECK_THROWS_WITH(loader::detail::resolve_on_miss(o, {}, false),
                      "CUTUNE_BIN: '/nonexistent/cutune' is not an executable file");
  }
  {
    ScopedEnv bin("CUTUNE_BIN", CUTUNE_FAKE_TUNE_PATH), path("PATH", "");
    CHECK(loader::detail::resolve_on_miss(o, {}, false)->tuner == CUTUNE_FAKE_TUNE_PATH);
  }
  // The DB: the option, else $CUTUNE_ON_MISS_DB, else the winners when they are a DB, else $CUTUNE_DB.
  {
    ScopedEnv a("CUTUNE_ON_MISS_DB", nullptr), b("CUTUNE_DB", "/tmp/tune.db"), bin("CUTUNE_BIN", CUTUNE_FAKE_TUNE_PATH);
    CHECK(loader::detail::resolve_on_miss(o, "/w/app.db", true)->db == "/w/app.db");
    CHECK(loader::detail::resolve_on_miss(o, "/w/app.wisdom.json", false)->db == "/tmp/tune.db");
    CHECK(loader::detail::resolve_on_miss(o, "/w/app.db", true)->log_dir == "/w/app.db.on-miss");
    o.db = "/mine.db";
    CHECK(loader::detail::resolve_on_miss(o, "/w/app.db", true)->db == "/mine.db");
  }
}

TEST_CASE("on_miss: a detached stand-in tuner stores the winner, the ladder then answers exact", "[loader][on_miss]") {
  OnMissFixture f;
  ScopedEnv mode("CUTUNE_FAKE_TUNE_MODE", "store"), sleep("CUTUNE_FAKE_TUNE_SLEEP_S", "0.3");
  Events events;
  {
    BackgroundTuning bg(f.settings);
    bg.submit(f.job(), events.notify());
    REQUIRE(bg.wait_idle(30));
  }
  REQUIRE(events.kinds() == std::vector<K>{K::Started, K::Stored});
  CHECK_THAT(events.text(0), Catch::StartsWith("tuning in the background (pid ") && Catch::Contains("budget 1 s"));
  CHECK_THAT(events.text(1), Catch::StartsWith("tuned on first use (pid ") && Catch::Contains("exit code 0"));
  // Started as the loader says: the arguments, its own session, its output in the log beside the DB.
  const auto logs = f.dir.path() / "tuned.db.on-miss";
  REQUIRE(std::filesystem::is_directory(logs));
  const std::string log = read_file(std::filesystem::directory_iterator(logs)->path());
  CHECK_THAT(log, Catch::Contains(fmt::format("args: tune {} --problem n=1048576 --time-budget 1 --db {} --device 0",
                                              f.reduction.json_file().string(), f.db.string())));
  const auto pid_at = log.find("pid="), sid_at = log.find(" sid=");
  REQUIRE(pid_at != std::string::npos);
  REQUIRE(sid_at != std::string::npos);
  CHECK(log.substr(pid_at + 4, sid_at - pid_at - 4) == log.substr(sid_at + 5, log.find(' ', sid_at + 5) - sid_at - 5));
  CHECK(std::to_string(::getsid(0)) != log.substr(sid_at + 5, log.find(' ', sid_at + 5) - sid_at - 5));
  // The claim is released; the winner is there, and the ladder takes it.
  CHECK_FALSE(db::Store::open(f.db, false).tuning_claim(f.key()).has_value());
  loader::LoaderOptions o;
  o.winners = f.db;
  o.template_dir = testing::template_dir();
  o.use_cache = false;
  o.on_miss = OnMiss{};
  const loader::Selection s = loader::Loader(o).select("reduction", "n=1048576", h200());
  CHECK(s.rung == loader::Rung::Exact);
  CHECK(s.config_key != f.reduction.space().key(f.reduction.space().default_config()));
}

TEST_CASE("on_miss: a crashing tuner stores nothing, is reported and releases its claim", "[loader][on_miss]") {
  OnMissFixture f;
  ScopedEnv mode("CUTUNE_FAKE_TUNE_MODE", "crash"), sleep("CUTUNE_FAKE_TUNE_SLEEP_S", "0.1");
  Events events;
  BackgroundTuning bg(f.settings);
  bg.submit(f.job(), events.notify());
  REQUIRE(bg.wait_idle(30));
  REQUIRE(events.kinds() == std::vector<K>{K::Started, K::Failed});
  CHECK_THAT(events.text(1), Catch::Contains("stored no winner") && Catch::Contains("killed by signal 6") &&
                                 Catch::Contains("log "));
  const db::Store s = db::Store::open(f.db, false);
  CHECK_FALSE(s.tuning_claim(f.key()).has_value());
  CHECK(s.winners().empty());
  // A tuner that ends without a winner is a failure too.
  ScopedEnv nothing("CUTUNE_FAKE_TUNE_MODE", "nothing");
  Events again;
  bg.submit(f.job("n=2048"), again.notify());
  REQUIRE(bg.wait_idle(30));
  REQUIRE(again.kinds() == std::vector<K>{K::Started, K::Failed});
  CHECK_THAT(again.text(1), Catch::Contains("exit code 0"));
}

TEST_CASE("on_miss: another process's claim is waited on, an expired one taken over", "[loader][on_miss]") {
  OnMissFixture f;
  ScopedEnv mode("CUTUNE_FAKE_TUNE_MODE", "store"), sleep("CUTUNE_FAKE_TUNE_SLEEP_S", "0");
  db::TuningClaim other = f.key();
  other.holder_pid = 1;
  other.holder_host = "another-node";
  {
    db::Store s = db::Store::open(f.db, true);
    REQUIRE(s.claim_tuning(other, 60).held_by(other));
  }
  Events events;
  BackgroundTuning bg(f.settings);
  bg.submit(f.job(), events.notify());
  CHECK_FALSE(bg.wait_idle(0.5));  // it waits for the other's winner
  REQUIRE(events.kinds() == std::vector<K>{K::Waiting});
  CHECK_THAT(events.text(0), Catch::Contains("another process tunes it (pid 1 on another-node"));
  // The other process's tuner stores the winner (here: the stand-in run by hand).
  const std::string run = fmt::format("CUTUNE_FAKE_TUNE_MODE=store '{}' tune '{}' --problem n=1048576 --time-budget 1 "
                                      "--db '{}' --device 0 > /dev/null",
                                      CUTUNE_FAKE_TUNE_PATH, f.reduction.json_file().string(), f.db.string());
  REQUIRE(std::system(run.c_str()) == 0);
  REQUIRE(bg.wait_idle(30));
  REQUIRE(events.kinds() == std::vector<K>{K::Waiting, K::Stored});
  CHECK_THAT(events.text(1), Catch::Contains("by another process"));
  CHECK_FALSE(std::filesystem::exists(f.dir.path() / "tuned.db.on-miss"));  // no tuner of ours ran

  // A claim whose holder died (expired) is taken over, and the tuning made here.
  {
    db::Store s = db::Store::open(f.db, true);
    db::TuningClaim dead = f.job("n=4096").key;
    dead.holder_pid = 1;
    dead.holder_host = "another-node";
    REQUIRE(s.claim_tuning(dead, -1).held_by(dead));
  }
  Events taken;
  bg.submit(f.job("n=4096"), taken.notify());
  REQUIRE(bg.wait_idle(30));
  CHECK(taken.kinds() == std::vector<K>{K::Started, K::Stored});
}

TEST_CASE("on_miss: the next start reads what was tuned on first use from its DB beside the winners' source",
          "[loader][on_miss]") {
  OnMissFixture f;
  ScopedEnv mode("CUTUNE_FAKE_TUNE_MODE", "store"), sleep("CUTUNE_FAKE_TUNE_SLEEP_S", "0");
  const std::string run = fmt::format("'{}' tune '{}' --problem n=1048576 --time-budget 1 --db '{}' --device 0 > /dev/null",
                                      CUTUNE_FAKE_TUNE_PATH, f.reduction.json_file().string(), f.db.string());
  REQUIRE(std::system(run.c_str()) == 0);
  loader::LoaderOptions o;
  o.template_dir = testing::template_dir();
  o.use_cache = false;
  OnMiss om;
  om.mode = OnMiss::Mode::Tune;
  om.db = f.db;
  om.tuner = CUTUNE_FAKE_TUNE_PATH;
  o.on_miss = om;
  loader::Loader l(o);  // no winners source: the on-miss DB alone
  const loader::Selection s = l.select("reduction", "n=1048576", h200());
  CHECK(s.rung == loader::Rung::Exact);
  CHECK(s.source == "db:" + f.db.string());
  // Another shape borrows it as the nearest problem, as from any other source.
  CHECK(l.select("reduction", "n=2097152", h200()).rung == loader::Rung::NearestProblem);
  CHECK(l.wait_for_background(0.1));  // select() starts nothing
  // With on_miss off the loader does not read that DB.
  o.on_miss = OnMiss{};
  CHECK(loader::Loader(o).select("reduction", "n=1048576", h200()).rung == loader::Rung::TemplateDefault);
  // A DB that is not a cutune DB is refused when the loader is made, naming it.
  const auto junk = f.dir.path() / "junk.db";
  std::ofstream(junk) << "not a database at all, but long enough to be read";
  om.db = junk;
  o.on_miss = om;
  CHECK_THROWS_AS(loader::Loader(o), InputError);
}
