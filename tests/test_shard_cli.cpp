// Multi-job tuning on the command line, without a GPU (tune --simulate): shards, merge,
// several processes writing one DB, and a second run on a DB that already holds results.
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "cli_runner.hpp"
#include "cutune/db/store.hpp"
#include "test_paths.hpp"

using namespace cutune::testing::cli;

namespace {

fs::path recorded_space() { return cutune::testing::material("data/spaces/convolution_A100.json.gz"); }

/// config_key -> median_ms of every measurement.
std::map<std::string, double> measurements(const std::string& db) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, "SELECT config_key, median_ms FROM measurements", -1, &st, nullptr) == SQLITE_OK);
  std::map<std::string, double> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    CHECK(out.emplace(key, sqlite3_column_double(st, 1)).second);  // never twice
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

cutune::db::Winner the_winner(const std::string& db) {
  const auto w = cutune::db::Store::open(db, false).winners();
  REQUIRE(w.size() == 1);
  return w[0];
}

std::vector<std::string> simulate(const std::string& db, const std::vector<std::string>& more) {
  std::vector<std::string> args{"tune", "--simulate", recorded_space().string(), "--db", db};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("cli: brute-force shards are disjoint, cover the space, and merged equal one unsharded run", "[cli][material]") {
  CliTempDir dir;
  const std::string full = dir / "full.db", all = dir / "all.db";
  const CliResult whole = run_cli(simulate(full, {"--strategy", "brute_force"}));
  INFO(whole.err);
  REQUIRE(whole.status == 0);
  const auto expected = measurements(full);
  REQUIRE(expected.size() == 4362);  // the recording's every configuration

  constexpr int kShards = 3;
  std::vector<std::string> merge_args{"merge"};
  std::set<std::string> seen;
  for (int i = 0; i < kShards; ++i) {
    const std::string db = dir / ("shard" + std::to_string(i) + ".db");
    const CliResult r = run_cli(simulate(db, {"--strategy", "brute_force", "--shard", std::to_string(i) + "/3"}));
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto keys = measurements(db);
    CHECK(keys.size() == 4362 / kShards);
    for (const auto& [key, median] : keys) CHECK(seen.insert(key).second);  // disjoint
    merge_args.push_back(db);
  }
  CHECK(seen.size() == expected.size());  // together the whole space
  merge_args.insert(merge_args.end(), {"-o", all});
  const CliResult m = run_cli(merge_args);
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(measurements(all) == expected);  // the same keys with the same medians
  const auto w_full = the_winner(full), w_all = the_winner(all);
  CHECK(w_all.config.key() == w_full.config.key());
  CHECK(w_all.median_ms == w_full.median_ms);
  CHECK(cutune::db::Store::open(all, false).integrity_ok());

  // Idempotent: the same inputs again, and the output into itself, change no byte of a row.
  const std::string before = slurp(all);
  const auto rows = measurements(all);
  REQUIRE(run_cli(merge_args).status == 0);
  const CliResult self = run_cli({"merge", all, "-o", all});
  REQUIRE(self.status == 0);
  CHECK_THAT(self.out, Contains("0 measurements added") && Contains("0 winners written"));
  CHECK(measurements(all) == rows);
  CHECK(cutune::db::Store::open(all, false).runs(1, 1, 1).size() == kShards);
}

TEST_CASE("cli: --shard is refused for other strategies and malformed shards, before any DB exists", "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "s.db";
  expect_bad_input(simulate(db, {"--strategy", "greedy_ils", "--shard", "0/2"}), {"--shard 0/2", "greedy_ils"});
  expect_bad_input(simulate(db, {"--strategy", "brute_force", "--shard", "2/2"}), {"--shard 2/2"});
  expect_bad_input(simulate(db, {"--strategy", "brute_force", "--shard", "0/0"}), {"--shard 0/0"});
  expect_bad_input(simulate(db, {"--strategy", "random", "--shard", "1-of-4"}), {"--shard 1-of-4"});
  CHECK_FALSE(fs::exists(db));
  // A GPU tune refuses it the same way, before looking for a GPU.
  expect_bad_input({"tune", "vector_add", "--strategy", "bayes_opt", "--shard", "0/2", "--db", db},
                   {"--shard 0/2", "bayes_opt"});
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("cli: --reuse takes model or gpu, and anything else is refused before looking for a GPU", "[cli]") {
  CliTempDir dir;
  const std::string db = dir / "r.db";
  expect_bad_input({"tune", "vector_add", "--reuse", "node", "--db", db}, {"--reuse node", "model or gpu"});
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("cli: merge refuses a file that is not a cutune DB, or is newer, and touches no output", "[cli][material]") {
  CliTempDir dir;
  const std::string good = dir / "good.db", out = dir / "out.db", junk = dir / "junk.db", newer = dir / "newer.db";
  REQUIRE(run_cli(simulate(good, {"--strategy", "random", "--budget", "5"})).status == 0);
  dir.write("junk.db", "this is not a database\n");
  fs::copy_file(good, newer);
  {
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open(newer.c_str(), &h) == SQLITE_OK);
    REQUIRE(sqlite3_exec(h, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(h);
  }
  expect_bad_input({"merge", good, junk, "-o", out}, {junk});
  expect_bad_input({"merge", good, newer, "-o", out}, {newer, "newer"});
  CHECK_FALSE(fs::exists(out));
  // An existing output is left byte for byte; so is an output that is not ours.
  REQUIRE(run_cli({"merge", good, "-o", out}).status == 0);
  const std::string bytes = slurp(out);
  expect_bad_input({"merge", good, junk, "-o", out}, {junk});
  CHECK(slurp(out) == bytes);
  const std::string junk_bytes = slurp(junk);
  expect_bad_input({"merge", good, "-o", junk}, {junk});
  CHECK(slurp(junk) == junk_bytes);
}

TEST_CASE("cli: 8 tune processes writing one DB at once lose no row and keep it intact", "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "same.db";
  constexpr int kWriters = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kWriters; ++i) {
    std::vector<std::string> args{CUTUNE_CLI_PATH, "tune", "--simulate", recorded_space().string(), "--strategy",
                                  "brute_force", "--shard", std::to_string(i) + "/8", "--db", db};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = dir / ("writer" + std::to_string(i) + ".log");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    pids.push_back(pid);
  }
  for (int i = 0; i < kWriters; ++i) {
    int status = 0;
    REQUIRE(waitpid(pids[static_cast<std::size_t>(i)], &status, 0) == pids[static_cast<std::size_t>(i)]);
    INFO("writer " << i << ": " << slurp(dir / ("writer" + std::to_string(i) + ".log")));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(measurements(db).size() == 4362);
  auto store = cutune::db::Store::open(db, false);
  CHECK(store.integrity_ok());
  const auto runs = store.runs(1, 1, 1);
  CHECK(runs.size() == kWriters);
  for (const auto& r : runs) CHECK_FALSE(r.finished_at.empty());
}

TEST_CASE("cli: a second run reuses stored measurements and evaluates its own budget while --resume finishes one",
          "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "twice.db";
  const CliResult first = run_cli(simulate(db, {"--strategy", "random", "--seed", "1", "--budget", "150"}));
  REQUIRE(first.status == 0);
  CHECK_THAT(first.out, !Contains("stored"));
  CHECK(measurements(db).size() == 150);

  const CliResult second = run_cli(simulate(db, {"--strategy", "random", "--seed", "2", "--budget", "150"}));
  INFO(second.out << second.err);
  REQUIRE(second.status == 0);
  CHECK_THAT(second.out, StartsWith("reusing 150 stored measurements; budget 150 new evaluations\n"));
  const auto after = measurements(db);
  CHECK(after.size() == 300);  // 150 new, none measured twice
  // The winner is the best over both runs' measurements.
  double best = 1e300;
  for (const auto& [key, median] : after)
    if (median > 0) best = std::min(best, median);  // a failure is stored with median 0
  CHECK(the_winner(db).median_ms == best);

  // --resume: the stored measurements fill the budget, so nothing new is evaluated.
  const CliResult resumed =
      run_cli(simulate(db, {"--strategy", "random", "--seed", "2", "--budget", "150", "--resume"}));
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.out, StartsWith("resuming: 300 of 150 already stored\n"));
  CHECK_THAT(resumed.out, Contains("300 evaluations (300 resumed"));
  CHECK(measurements(db).size() == 300);
  // A resumed run with room left finishes the budget: 300 stored of 310.
  const CliResult finish =
      run_cli(simulate(db, {"--strategy", "random", "--seed", "3", "--budget", "310", "--resume"}));
  REQUIRE(finish.status == 0);
  CHECK(measurements(db).size() == 310);
}
