#include "sqlite_handle.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>

namespace cutune::db::detail {

std::string result_code_name(int rc) {
  switch (rc) {  // extended codes the store can meet, then the primary codes
    case SQLITE_CONSTRAINT_CHECK: return "SQLITE_CONSTRAINT_CHECK";
    case SQLITE_CONSTRAINT_FOREIGNKEY: return "SQLITE_CONSTRAINT_FOREIGNKEY";
    case SQLITE_CONSTRAINT_NOTNULL: return "SQLITE_CONSTRAINT_NOTNULL";
    case SQLITE_CONSTRAINT_PRIMARYKEY: return "SQLITE_CONSTRAINT_PRIMARYKEY";
    case SQLITE_CONSTRAINT_UNIQUE: return "SQLITE_CONSTRAINT_UNIQUE";
    case SQLITE_BUSY_SNAPSHOT: return "SQLITE_BUSY_SNAPSHOT";
    case SQLITE_CANTOPEN_ISDIR: return "SQLITE_CANTOPEN_ISDIR";
    case SQLITE_READONLY_DBMOVED: return "SQLITE_READONLY_DBMOVED";
    case SQLITE_IOERR_SHORT_READ: return "SQLITE_IOERR_SHORT_READ";
    default: break;
  }
  static constexpr const char* kPrimary[] = {
      "SQLITE_OK",       "SQLITE_ERROR",    "SQLITE_INTERNAL", "SQLITE_PERM",
      "SQLITE_ABORT",    "SQLITE_BUSY",     "SQLITE_LOCKED",   "SQLITE_NOMEM",
      "SQLITE_READONLY", "SQLITE_INTERRUPT", "SQLITE_IOERR",   "SQLITE_CORRUPT",
      "SQLITE_NOTFOUND", "SQLITE_FULL",     "SQLITE_CANTOPEN", "SQLITE_PROTOCOL",
      "SQLITE_EMPTY",    "SQLITE_SCHEMA",   "SQLITE_TOOBIG",   "SQLITE_CONSTRAINT",
      "SQLITE_MISMATCH", "SQLITE_MISUSE",   "SQLITE_NOLFS",    "SQLITE_AUTH",
      "SQLITE_FORMAT",   "SQLITE_RANGE",    "SQLITE_NOTADB",   "SQLITE_NOTICE",
      "SQLITE_WARNING"};
  if (rc == SQLITE_ROW) return "SQLITE_ROW";
  if (rc == SQLITE_DONE) return "SQLITE_DONE";
  const int primary = rc & 0xff;
  if (primary >= 0 && primary < static_cast<int>(std::size(kPrimary))) {
    // An extended code without its own name keeps its primary name: SQLITE_IOERR (266).
    return kPrimary[primary];
  }
  return fmt::format("SQLITE_{}", rc);
}

namespace {
// SQL in messages on one line: the schema is written over many lines.
std::string one_line(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  bool space = false;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  constexpr std::size_t kMax = 400;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}
}  // namespace

void throw_sqlite_error(int rc, sqlite3* db, std::string_view sql, const char* call,
                        const char* file, int line) {
  // sqlite3_errmsg describes the connection's latest failure, which is this call's when
  // the call was made on `db`; errstr is the generic text for the code.
  const char* message =
      db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(rc, fmt::format("{} ({}): {}; sql: {}; call: {} at {}:{}",
                                    result_code_name(rc), rc, message, one_line(sql), call,
                                    file, line));
}

void exec(sqlite3* db, std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    // sqlite3_exec reports through its own message; keep it, then free it.
    std::string copy = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteError(rc, fmt::format("{} ({}): {}; sql: {}; call: sqlite3_exec at {}:{}",
                                      result_code_name(rc), rc, copy, one_line(sql),
                                      __FILE__, __LINE__));
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  CUTUNE_SQLITE_CHECK(db_, sql_, sqlite3_prepare_v2(db_, sql_.c_str(),
                                                    static_cast<int>(sql_.size()), &stmt_,
                                                    nullptr));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind_int64(int index, std::int64_t value) {
  CUTUNE_SQLITE_CHECK(db_, sql_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  CUTUNE_SQLITE_CHECK(db_, sql_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies, so the caller's string may die before step().
  CUTUNE_SQLITE_CHECK(db_, sql_,
                      sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                                          SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_null(int index) {
  CUTUNE_SQLITE_CHECK(db_, sql_, sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite_error(rc, db_, sql_, "sqlite3_step(stmt)", __FILE__, __LINE__);
}

void Statement::run() {
  if (step()) {
    throw std::logic_error("cutune::db: statement returned rows where none were expected: " +
                           one_line(sql_));
  }
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int Statement::column_type(int column) const { return sqlite3_column_type(stmt_, column); }

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

int Statement::column_int(int column) const { return sqlite3_column_int(stmt_, column); }

double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);  // before _bytes (SQLite's rule)
  const int bytes = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

Transaction::Transaction(sqlite3* db, Lock lock)
    // Inside an open transaction (Store::transaction around the store's own writes) a
    // savepoint nests where a second BEGIN would fail.
    : db_(db), nested_(sqlite3_get_autocommit(db) == 0) {
  exec(db_, nested_ ? "SAVEPOINT cutune_nested" : lock == Lock::Write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (done_) return;
  // No-throw path: we are unwinding. If ROLLBACK fails, SQLite has already rolled the
  // transaction back itself (that is when it refuses), so there is nothing left to undo.
  if (sqlite3_get_autocommit(db_) == 0) {
    const char* sql = nested_ ? "ROLLBACK TO cutune_nested; RELEASE cutune_nested" : "ROLLBACK";
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
      std::fprintf(stderr, "cutune: ROLLBACK failed: %s (%d): %s\n",
                   result_code_name(rc).c_str(), rc, sqlite3_errmsg(db_));
    }
  }
}

void Transaction::commit() {
  exec(db_, nested_ ? "RELEASE cutune_nested" : "COMMIT");
  done_ = true;
}

}  // namespace cutune::db::detail
