// The store's claims of tunings on first use (tuning_claims). Kept apart from store.cpp: only
// this table, and nothing else reads it.
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "cutune/db/store.hpp"
#include "sqlite_handle.hpp"

namespace cutune::db {

using detail::Statement;
using detail::Transaction;

namespace {

constexpr const char* kClaimColumns =
    "kernel, problem_key, gpu_model, objective, holder_pid, holder_host, tuner_pid, started_at, expires_at";
constexpr const char* kClaimKey = "kernel = ?1 AND problem_key = ?2 AND gpu_model = ?3 AND objective = ?4";

void bind_key(Statement& st, const TuningClaim& c) {
  st.bind_text(1, c.kernel).bind_text(2, c.problem_key).bind_text(3, c.gpu_model).bind_text(4, c.objective);
}

std::optional<TuningClaim> read_claim(sqlite3* db, const TuningClaim& key) {
  Statement st(db, fmt::format("SELECT {} FROM tuning_claims WHERE {}", kClaimColumns, kClaimKey));
  bind_key(st, key);
  if (!st.step()) return std::nullopt;
  TuningClaim c;
  c.kernel = st.column_text(0);
  c.problem_key = st.column_text(1);
  c.gpu_model = st.column_text(2);
  c.objective = st.column_text(3);
  c.holder_pid = st.column_int64(4);
  c.holder_host = st.column_text(5);
  c.tuner_pid = st.column_int64(6);
  c.started_at = st.column_text(7);
  c.expires_at = st.column_text(8);
  return c;
}

}  // namespace

TuningClaim Store::claim_tuning(const TuningClaim& claim, double expires_in_s) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::string now_iso = utc_iso(now);
  const auto expiry = now + duration_cast<system_clock::duration>(duration<double>(std::isfinite(expires_in_s) ? expires_in_s : 0.0));
  // Read, decide and write under the write lock (BEGIN IMMEDIATE): a second claimer waits at
  // BEGIN and then sees the first one's row, so exactly one of them inserts.
  Transaction tx(db_);
  {
    Statement expired(db_, fmt::format("DELETE FROM tuning_claims WHERE {} AND expires_at <= ?5", kClaimKey));
    bind_key(expired, claim);
    expired.bind_text(5, now_iso);
    expired.run();
  }
  Statement insert(db_, fmt::format("INSERT OR IGNORE INTO tuning_claims ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?8)",
                                    kClaimColumns));
  bind_key(insert, claim);
  insert.bind_int64(5, claim.holder_pid).bind_text(6, claim.holder_host).bind_text(7, now_iso).bind_text(8, utc_iso(expiry));
  insert.run();
  std::optional<TuningClaim> stored = read_claim(db_, claim);
  tx.commit();
  return stored.value_or(claim);  // always there: inserted or kept
}

void Store::set_claim_tuner(const TuningClaim& claim, std::int64_t tuner_pid) {
  Statement st(db_, fmt::format("UPDATE tuning_claims SET tuner_pid = ?5 WHERE {} AND holder_pid = ?6 AND holder_host = ?7",
                                kClaimKey));
  bind_key(st, claim);
  st.bind_int64(5, tuner_pid).bind_int64(6, claim.holder_pid).bind_text(7, claim.holder_host);
  st.run();
}

bool Store::release_tuning_claim(const TuningClaim& claim) {
  Statement st(db_, fmt::format("DELETE FROM tuning_claims WHERE {} AND holder_pid = ?5 AND holder_host = ?6", kClaimKey));
  bind_key(st, claim);
  st.bind_int64(5, claim.holder_pid).bind_text(6, claim.holder_host);
  st.run();
  return sqlite3_changes(db_) > 0;
}

std::optional<TuningClaim> Store::tuning_claim(const TuningClaim& key) const { return read_claim(db_, key); }

}  // namespace cutune::db
