// The store's claims of tunings on first use: of several claimers one wins, an expired claim is
// taken over, a release by another holder does nothing, and a version-5 DB gets the table.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "cutune/db/store.hpp"
#include "sqlite_test_files.hpp"

using cutune::db::Store;
using cutune::db::TuningClaim;
using cutune::testing::raw_exec;
using cutune::testing::raw_int;
using cutune::testing::TempDb;

namespace {

TuningClaim claim_by(std::int64_t pid, const std::string& host = "node1") {
  TuningClaim c;
  c.kernel = "reduction";
  c.problem_key = "n=1048576";
  c.gpu_model = "NVIDIA H200/sm_90";
  c.objective = "time";
  c.holder_pid = pid;
  c.holder_host = host;
  return c;
}

}  // namespace

TEST_CASE("claims: of two claimers one wins, the other sees the winner's claim", "[db][on_miss]") {
  TempDb file;
  Store a = Store::open(file.path(), true);
  Store b = Store::open(file.path(), true);  // a second connection, as a second process has
  const TuningClaim first = a.claim_tuning(claim_by(100), 60);
  CHECK(first.held_by(claim_by(100)));
  CHECK_FALSE(first.started_at.empty());
  CHECK(first.expires_at > first.started_at);
  const TuningClaim second = b.claim_tuning(claim_by(200), 60);
  CHECK_FALSE(second.held_by(claim_by(200)));
  CHECK(second.held_by(claim_by(100)));
  // The same pid on another host is another holder.
  CHECK_FALSE(b.claim_tuning(claim_by(100, "node2"), 60).held_by(claim_by(100, "node2")));
  // Another key is another claim.
  TuningClaim other = claim_by(200);
  other.problem_key = "n=2048";
  CHECK(b.claim_tuning(other, 60).held_by(other));
  // Only the holder records its tuner and releases.
  b.set_claim_tuner(claim_by(200), 4242);
  CHECK(a.tuning_claim(claim_by(0))->tuner_pid == 0);
  a.set_claim_tuner(claim_by(100), 4242);
  CHECK(b.tuning_claim(claim_by(0))->tuner_pid == 4242);
  CHECK_FALSE(b.release_tuning_claim(claim_by(200)));
  CHECK(a.release_tuning_claim(claim_by(100)));
  CHECK_FALSE(a.tuning_claim(claim_by(0)).has_value());
  CHECK(b.claim_tuning(claim_by(200), 60).held_by(claim_by(200)));
}

TEST_CASE("claims: many threads with their own connections, exactly one wins", "[db][on_miss]") {
  TempDb file;
  { Store init = Store::open(file.path(), true); }
  constexpr int kClaimers = 8;
  std::atomic<int> ready{0}, won{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClaimers; ++i)
    threads.emplace_back([&, i] {
      Store s = Store::open(file.path(), true);
      ++ready;
      while (ready < kClaimers) std::this_thread::yield();
      if (s.claim_tuning(claim_by(1000 + i), 60).held_by(claim_by(1000 + i))) ++won;
    });
  for (auto& t : threads) t.join();
  CHECK(won == 1);
  CHECK(raw_int(file.path(), "SELECT COUNT(*) FROM tuning_claims") == 1);
}

TEST_CASE("claims: an expired claim is taken over, an unexpired one is not", "[db][on_miss]") {
  TempDb file;
  Store s = Store::open(file.path(), true);
  // A holder that died: its claim expired a second ago.
  CHECK(s.claim_tuning(claim_by(100), -1).held_by(claim_by(100)));
  const TuningClaim taken = s.claim_tuning(claim_by(200), 0.5);
  CHECK(taken.held_by(claim_by(200)));
  CHECK_FALSE(s.claim_tuning(claim_by(300), 60).held_by(claim_by(300)));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  CHECK(s.claim_tuning(claim_by(300), 60).held_by(claim_by(300)));
  CHECK(raw_int(file.path(), "SELECT COUNT(*) FROM tuning_claims") == 1);
}

TEST_CASE("claims: a version-5 DB gets the claims table, keeping its rows, and read-only opens read it", "[db][on_miss]") {
  TempDb file;
  {
    Store s = Store::open(file.path(), true);
    s.claim_tuning(claim_by(100), 60);
  }
  raw_exec(file.path(), "DROP TABLE tuning_claims; PRAGMA user_version = 5");
  {
    const Store reader = Store::open(file.path(), false);  // a migrated copy in memory
    CHECK_FALSE(reader.tuning_claim(claim_by(0)).has_value());
  }
  CHECK(raw_int(file.path(), "PRAGMA user_version") == 5);  // the read left the file alone
  Store s = Store::open(file.path(), true);
  CHECK(s.schema_version() == Store::kSchemaVersion);
  CHECK(Store::kSchemaVersion == 6);
  CHECK(s.integrity_ok());
  CHECK(s.claim_tuning(claim_by(100), 60).held_by(claim_by(100)));
}
