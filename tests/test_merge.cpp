// Store::merge_from: identities matched, no measurement twice (the first stored wins), runs
// copied with their measurements, winners recomputed from the merged measurements, and
// merging again (or a DB into itself) changing no row.
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "cutune/db/store.hpp"
#include "result_helpers.hpp"

namespace fs = std::filesystem;
using namespace cutune::db;
using cutune::DeviceIdentity;
using cutune::Objective;
using cutune::Status;
using cutune::Verdict;

namespace {

class TempDb {
 public:
  TempDb() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("cutune-test-merge-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".db");
  }
  ~TempDb() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix, ec);
  }
  TempDb(const TempDb&) = delete;
  TempDb& operator=(const TempDb&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Every row of every table, in id order, as text: equal dumps are equal DBs.
std::string dump(const fs::path& p) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(p.string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::string out;
  for (const char* table : {"devices", "kernels", "problems", "runs", "measurements", "winners"}) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, (std::string("SELECT * FROM ") + table + " ORDER BY id").c_str(), -1, &st,
                               nullptr) == SQLITE_OK);
    out += std::string("[") + table + "]\n";
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* t = sqlite3_column_text(st, c);
        out += (t ? reinterpret_cast<const char*>(t) : "NULL") + std::string("|");
      }
      out += '\n';
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

DeviceIdentity gpu(const std::string& uuid) {
  DeviceIdentity d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 85'000'000'000ULL;
  d.uuid = uuid;
  return d;
}

RunSpec spec(const DeviceIdentity& d, const std::string& command) {
  RunSpec s;
  s.device = d;
  s.kernel = "vector_add";
  s.source_hash = "abc";
  s.problem_key = "n=1024";
  s.problem_json = "{\"n\":1024}";
  s.tool_version = "0.1.0";
  s.strategy = "brute_force";
  s.command = command;
  return s;
}

Measurement ok(const std::string& key, double median_ms) {
  Measurement m;
  m.config = cutune::testing::config_of(key, "{\"block_size_x\":" + key + "}");
  m.median_ms = median_ms;
  m.samples_ms = {median_ms, median_ms};
  m.started_at = m.finished_at = "2026-01-01T00:00:00.000Z";
  return m;
}

WinnerChoice screening(const std::string& key, double median_ms) {
  WinnerChoice w;
  w.config = cutune::testing::config_of(key, "{\"block_size_x\":" + key + "}");
  w.median_ms = median_ms;
  w.objective = Objective::time();
  return w;
}

std::int64_t count(const fs::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(p.string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const auto v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

}  // namespace

TEST_CASE("merge: shards combine into one DB whose winner is the best of all, and merging again changes nothing",
          "[db]") {
  TempDb a, b, all;
  {
    auto s = Store::open(a.path(), true);
    auto run = s.begin_run(spec(gpu("GPU-1"), "tune --shard 0/2"));
    run.add(ok("64", 2.0));
    run.add(ok("256", 1.5));
    run.add(ok("1024", 9.0));
    run.set_winner(screening("256", 1.5));
    run.end();
  }
  {
    auto s = Store::open(b.path(), true);
    // Another GPU of the same model, and a run that did not finish.
    auto run = s.begin_run(spec(gpu("GPU-2"), "tune --shard 1/2"));
    run.add(ok("128", 1.25));
    run.add(ok("64", 7.0));  // also measured in a: a's (stored first) is kept
    Measurement failed = ok("512", 0.0);
    failed.status = Status::Runtime;
    failed.error = "illegal address";
    run.add(failed);
    run.set_winner(screening("128", 1.25));
  }
  Store::MergeStats first, second;
  {
    auto out = Store::open(all.path(), true);
    auto in_a = Store::open(a.path(), false), in_b = Store::open(b.path(), false);
    first = out.merge_from(in_a);
    const auto from_b = out.merge_from(in_b);
    CHECK(first.runs_added == 1);
    CHECK(from_b.runs_added == 1);
    CHECK(first.measurements_added + from_b.measurements_added == 6);
    CHECK(from_b.measurements_present == 0);  // another device: the same key is another measurement
  }
  CHECK(count(all.path(), "SELECT COUNT(*) FROM devices") == 2);
  CHECK(count(all.path(), "SELECT COUNT(*) FROM kernels") == 1);
  CHECK(count(all.path(), "SELECT COUNT(*) FROM problems") == 1);
  CHECK(count(all.path(), "SELECT COUNT(*) FROM runs WHERE finished_at IS NULL") == 1);
  // Each measurement keeps its run.
  CHECK(count(all.path(), "SELECT COUNT(*) FROM measurements m JOIN runs r ON r.id = m.run_id "
                          "WHERE r.command = 'tune --shard 1/2'") == 3);
  {
    auto out = Store::open(all.path(), false);
    const auto w = out.winners();
    REQUIRE(w.size() == 1);  // one GPU model
    CHECK(w[0].config.key() == "128");
    CHECK(w[0].median_ms == 1.25);
    CHECK(w[0].verdict == Verdict::Screening);
  }

  const std::string before = dump(all.path());
  {
    auto out = Store::open(all.path(), true);
    auto in_a = Store::open(a.path(), false), in_b = Store::open(b.path(), false);
    second = out.merge_from(in_a);
    CHECK(second.measurements_added == 0);
    CHECK(second.runs_added == 0);
    CHECK(second.winners_written == 0);
    CHECK(out.merge_from(in_b).measurements_present == 3);
    auto self = Store::open(all.path(), false);
    const auto into_itself = out.merge_from(self);
    CHECK(into_itself.measurements_added == 0);
    CHECK(into_itself.winners_written == 0);
    CHECK(out.merge_from(out).measurements_added == 0);  // the very same connection
  }
  CHECK(dump(all.path()) == before);

}

TEST_CASE("merge: a re-measured winner stands when the merged best was among its finalists, else the best wins",
          "[db]") {
  TempDb a, b, c, all;
  const auto thorough = [](const std::string& key, std::vector<cutune::Finalist> finalists) {
    WinnerChoice w = screening(key, 1.0);
    w.verdict = Verdict::Separated;
    w.finalists = std::move(finalists);
    return w;
  };
  const auto finalist = [](const std::string& key, double screening_ms) {
    cutune::Finalist f;
    f.config = cutune::testing::config_of(key, "{\"block_size_x\":" + key + "}");
    f.screening_ms = screening_ms;
    return f;
  };
  {
    auto s = Store::open(a.path(), true);
    auto run = s.begin_run(spec(gpu("GPU-1"), "tune a"));
    run.add(ok("64", 1.1));
    run.add(ok("128", 1.2));
    // The thorough re-measurement ranked 128 first although 64 screened faster.
    run.set_winner(thorough("128", {finalist("128", 1.2), finalist("64", 1.1)}));
    run.end();
  }
  {
    auto s = Store::open(b.path(), true);
    auto run = s.begin_run(spec(gpu("GPU-1"), "tune b"));
    run.add(ok("256", 1.15));  // slower than 64: a's verdict still covers the best
    run.set_winner(screening("256", 1.15));
    run.end();
  }
  {
    auto s = Store::open(c.path(), true);
    auto run = s.begin_run(spec(gpu("GPU-1"), "tune c"));
    run.add(ok("512", 0.9));  // faster than anything a re-measured
    run.set_winner(screening("512", 0.9));
    run.end();
  }
  auto out = Store::open(all.path(), true);
  out.merge_from(Store::open(a.path(), false));
  out.merge_from(Store::open(b.path(), false));
  auto w = out.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].config.key() == "128");
  CHECK(w[0].verdict == Verdict::Separated);
  out.merge_from(Store::open(c.path(), false));
  w = out.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].config.key() == "512");
  CHECK(w[0].median_ms == 0.9);
  CHECK(w[0].verdict == Verdict::Screening);
  CHECK(w[0].finalists.empty());
  CHECK(out.integrity_ok());
}

TEST_CASE("merge: devices without a uuid match by their identity fields", "[db]") {
  TempDb a, all;
  {
    auto s = Store::open(a.path(), true);
    auto run = s.begin_run(spec(gpu(""), "simulate"));
    run.add(ok("64", 1.0));
    run.end();
  }
  auto out = Store::open(all.path(), true);
  {
    auto run = out.begin_run(spec(gpu(""), "simulate here"));
    run.add(ok("64", 3.0));
    run.end();
  }
  const auto s = out.merge_from(Store::open(a.path(), false));
  CHECK(s.devices_added == 0);
  CHECK(s.measurements_present == 1);
  CHECK(s.measurements_added == 0);
  CHECK(out.measurements(1, 1, 1).at(0).median_ms == 3.0);  // the DB's own came first
}

TEST_CASE("merge: a kernel's function name comes over, and fills in a row that lacks it", "[db]") {
  TempDb with_function, without, all;
  {
    auto s = Store::open(with_function.path(), true);
    RunSpec r = spec(gpu("GPU-1"), "tune");
    r.kernel_function = "vector_add_kernel";
    auto run = s.begin_run(r);
    run.add(ok("64", 2.0));
    run.end();
  }
  {
    auto s = Store::open(without.path(), true);
    auto run = s.begin_run(spec(gpu("GPU-2"), "tune"));
    run.add(ok("128", 1.0));
    run.end();
  }
  {
    auto out = Store::open(all.path(), true);
    auto in = Store::open(without.path(), false);
    CHECK(out.merge_from(in).kernels_added == 1);
  }
  CHECK(count(all.path(), "SELECT COUNT(*) FROM kernels WHERE function = ''") == 1);
  {
    auto out = Store::open(all.path(), true);
    auto in = Store::open(with_function.path(), false);
    CHECK(out.merge_from(in).kernels_added == 0);  // the same kernel (name and source)
  }
  CHECK(count(all.path(), "SELECT COUNT(*) FROM kernels WHERE function = 'vector_add_kernel'") == 1);
  CHECK(count(all.path(), "SELECT COUNT(*) FROM kernels") == 1);
}
