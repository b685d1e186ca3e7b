#pragma once
// RAII wrappers for SQLite connections' statements and transactions, and the SQLite check
// (STYLE.md, conventions 3 and 4). Private to cutune::db.
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cutune::db::detail {

/// "SQLITE_CONSTRAINT_UNIQUE" for an (extended) result code; "SQLITE_<n>" if unknown.
std::string result_code_name(int rc);

/// A failed SQLite call. what() is one line: code name and number, SQLite's message, the
/// SQL text, the call and file:line. code() is the extended result code.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }
  int primary_code() const { return code_ & 0xff; }

 private:
  int code_;
};

[[noreturn]] void throw_sqlite_error(int rc, sqlite3* db, std::string_view sql,
                                     const char* call, const char* file, int line);

/// Throws SqliteError unless `rc` is one of the accepted codes (SQLITE_OK by default).
inline void check(int rc, sqlite3* db, std::string_view sql, const char* call,
                  const char* file, int line) {
  if (rc != SQLITE_OK) throw_sqlite_error(rc, db, sql, call, file, line);
}

}  // namespace cutune::db::detail

/// Checks an SQLite call returning a result code; `sql` is the statement text it concerns.
#define CUTUNE_SQLITE_CHECK(connection, sql_text, call) \
  ::cutune::db::detail::check((call), (connection), (sql_text), #call, __FILE__, __LINE__)

namespace cutune::db::detail {

/// Runs one or more statements that return no rows (sqlite3_exec).
void exec(sqlite3* db, std::string_view sql);

/// A prepared statement. Not copyable or movable: a statement belongs to the one function
/// that prepared it and is finalized when that scope ends, which is all the store needs;
/// a moved-from handle would only be one more state to get wrong.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based (?1, ?2, ...), as in SQL.
  Statement& bind_int64(int index, std::int64_t value);
  Statement& bind_double(int index, double value);
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_null(int index);

  /// Steps once: true when a row is available, false when done. Throws on errors.
  bool step();
  /// Steps a statement that must finish without returning rows.
  void run();

  // Columns are 0-based, as in the SQLite API.
  bool is_null(int column) const;
  /// SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int column_type(int column) const;
  std::int64_t column_int64(int column) const;
  int column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

/// BEGIN IMMEDIATE ... COMMIT (a SAVEPOINT when a transaction is already open); rolls back when destroyed uncommitted (an exception left
/// the scope). IMMEDIATE takes the write lock up front, so a transaction that reads then
/// writes cannot fail half-way with SQLITE_BUSY because another writer got in between:
/// it waits (busy_timeout) at BEGIN instead. Not copyable or movable: it is a scope.
class Transaction {
 public:
  /// Write: BEGIN IMMEDIATE, the write lock at once. Read: a deferred BEGIN, one consistent
  /// snapshot for several reads (another process may commit between two autocommit reads).
  enum class Lock { Write, Read };
  explicit Transaction(sqlite3* db, Lock lock = Lock::Write);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool nested_ = false;  ///< a SAVEPOINT inside an open transaction
  bool done_ = false;
};

}  // namespace cutune::db::detail
