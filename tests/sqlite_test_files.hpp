#pragma once
// SQLite files for the store's tests: a unique temporary DB path, and SQL run on a plain
// connection outside the store (to build old-version, foreign or damaged files and to read
// what the store wrote, byte for byte).
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

namespace cutune::testing {

/// A unique path under the temp directory; removes the DB and its -wal/-shm/-journal.
class TempDb {
 public:
  explicit TempDb(const std::string& stem = "cutune-test-db") {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(counter++) + "-" + std::to_string(rd()) + ".db");
  }
  ~TempDb() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_.string() + suffix, ec);
  }
  TempDb(const TempDb&) = delete;
  TempDb& operator=(const TempDb&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Runs SQL on a plain connection.
inline void raw_exec(const std::filesystem::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(p.string().c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  INFO(message);
  REQUIRE(rc == SQLITE_OK);
}

/// The first column of the first row of a query, read-only: as an integer, or as text.
inline std::int64_t raw_int(const std::filesystem::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(p.string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const std::int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

inline std::string raw_text(const std::filesystem::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(p.string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const auto* text = sqlite3_column_text(st, 0);
  std::string out = text ? reinterpret_cast<const char*>(text) : "";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace cutune::testing
