#include "cutune/db/store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "cutune/model/errors.hpp"
#include "measurement_rows.hpp"
#include "result_rows.hpp"
#include "sqlite_handle.hpp"

namespace cutune::db {

using detail::SqliteError;
using detail::Statement;
using detail::Transaction;
using detail::kMeasurementColumns;
using detail::read_measurement;
using detail::config_of_row;
using detail::config_row;
using detail::finalists_of_row;
using detail::finalists_row;
using detail::read_stats_row;
using detail::resources_of_stats_row;
using detail::stats_row;
namespace fs = std::filesystem;

namespace {

/// True for a WAL-mode DB that no connection has open: the header says WAL (bytes 18 and
/// 19 are 2) and there is no -wal file beside it (the last connection to close removes it).
bool wal_at_rest(const fs::path& path) {
  std::error_code ec;
  if (fs::exists(path.string() + "-wal", ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::array<char, 20> header{};
  if (!in.read(header.data(), header.size())) return false;
  return std::string_view(header.data(), 16) == std::string_view("SQLite format 3\0", 16) && header[18] == 2 &&
         header[19] == 2;
}

/// "file:" URI of a path (sqlite3_open_v2 with SQLITE_OPEN_URI): '%', '?' and '#' escaped.
std::string file_uri(const fs::path& path, const char* query) {
  std::string uri = "file:";
  for (const char c : path.string()) {
    if (c == '%' || c == '?' || c == '#') uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else uri += c;
  }
  return uri + "?" + query;
}

/// PRAGMA application_id of every cutune DB ("CTUN"): tells our files from other
/// applications' SQLite files whatever their user_version says.
constexpr std::int32_t kApplicationId = 0x4354554E;

/// Migration i takes the schema from version i to version i + 1; they run in order, all in
/// one transaction with the user_version update. Append new steps, never edit old ones: a
/// DB in the field at version i has run exactly the first i of them.
constexpr std::array<const char*, Store::kSchemaVersion> kMigrations = {
    // 0 -> 1: the initial schema. Timestamps are ISO 8601 UTC text (utc_now_iso).
    R"sql(
CREATE TABLE devices (
  id               INTEGER PRIMARY KEY,
  name             TEXT    NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  memory_bytes     INTEGER NOT NULL,
  sm_clock_khz     INTEGER NOT NULL,
  memory_clock_khz INTEGER NOT NULL,
  memory_bus_bits  INTEGER NOT NULL,
  l2_bytes         INTEGER NOT NULL,
  driver_version   INTEGER NOT NULL,
  driver_release   TEXT    NOT NULL,
  nvrtc_version    INTEGER NOT NULL,
  uuid             TEXT UNIQUE,        -- NULL when unknown (no GPU): NULLs never collide
  model_key        TEXT    NOT NULL,   -- DeviceIdentity::model_key(): what winners key on
  first_seen_at    TEXT    NOT NULL,
  last_seen_at     TEXT    NOT NULL
);
-- Devices without a uuid are keyed by what identifies the hardware.
CREATE UNIQUE INDEX devices_without_uuid
  ON devices (name, cc_major, cc_minor, sm_count, memory_bytes) WHERE uuid IS NULL;

CREATE TABLE kernels (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  UNIQUE (name, source_hash)
);

CREATE TABLE problems (
  id           INTEGER PRIMARY KEY,
  kernel_id    INTEGER NOT NULL REFERENCES kernels (id),
  problem_key  TEXT    NOT NULL,
  problem_json TEXT    NOT NULL,
  UNIQUE (kernel_id, problem_key)
);

CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  kernel_id    INTEGER NOT NULL REFERENCES kernels (id),
  problem_id   INTEGER NOT NULL REFERENCES problems (id),
  device_id    INTEGER NOT NULL REFERENCES devices (id),
  tool_version TEXT    NOT NULL,
  strategy     TEXT    NOT NULL,
  seed         INTEGER NOT NULL,  -- the uint64 seed's bits as a signed 64-bit integer
  command      TEXT    NOT NULL,
  started_at   TEXT    NOT NULL,
  finished_at  TEXT               -- NULL while running or when interrupted
);
CREATE INDEX runs_by_target ON runs (kernel_id, problem_id, device_id);

CREATE TABLE measurements (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER REFERENCES runs (id),  -- NULL for imported data
  kernel_id   INTEGER NOT NULL REFERENCES kernels (id),
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  config_key  TEXT    NOT NULL,
  config_json TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN
                ('ok', 'compile', 'runtime', 'correctness', 'constraints', 'timeout')),
  error       TEXT    NOT NULL,
  median_ms   REAL    NOT NULL,
  samples_ms  TEXT    NOT NULL,  -- JSON array, shortest round-trip doubles
  compile_ms  REAL    NOT NULL,
  verify_ms   REAL    NOT NULL,
  started_at  TEXT    NOT NULL,
  finished_at TEXT    NOT NULL,
  -- Resume: a stored configuration is skipped. Also the index of the lookups by target.
  UNIQUE (kernel_id, problem_id, device_id, config_key)
);
CREATE INDEX measurements_by_run ON measurements (run_id);

CREATE TABLE winners (
  id          INTEGER PRIMARY KEY,
  kernel_id   INTEGER NOT NULL REFERENCES kernels (id),
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  gpu_model   TEXT    NOT NULL,  -- devices.model_key of the device that measured it
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  run_id      INTEGER REFERENCES runs (id),
  config_key  TEXT    NOT NULL,
  config_json TEXT    NOT NULL,
  median_ms   REAL    NOT NULL,
  default_ms  REAL    NOT NULL,
  updated_at  TEXT    NOT NULL,
  UNIQUE (kernel_id, problem_id, gpu_model)
);
CREATE INDEX winners_by_gpu_model ON winners (gpu_model);
)sql",
    // 1 -> 2: each measurement's statistics and conditions (mean, min, stddev,
    // the median's interval, stop reason, SM clock, temperature, power, energy, discarded
    // samples) as one JSON object, readable with json_extract; each winner's verdict from
    // the thorough re-measurement and the finalists it was declared over.
    // Winners are also kept per objective ("time", "energy"), so the table is rebuilt with
    // the objective in its unique key; objective_value is the winner's figure for it (ms or
    // mJ per launch).
    R"sql(
ALTER TABLE measurements ADD COLUMN stats_json TEXT NOT NULL DEFAULT '{}';
CREATE TABLE winners_v2 (
  id              INTEGER PRIMARY KEY,
  kernel_id       INTEGER NOT NULL REFERENCES kernels (id),
  problem_id      INTEGER NOT NULL REFERENCES problems (id),
  gpu_model       TEXT    NOT NULL,  -- devices.model_key of the device that measured it
  objective       TEXT    NOT NULL DEFAULT 'time' CHECK (objective IN ('time', 'energy')),
  device_id       INTEGER NOT NULL REFERENCES devices (id),
  run_id          INTEGER REFERENCES runs (id),
  config_key      TEXT    NOT NULL,
  config_json     TEXT    NOT NULL,
  median_ms       REAL    NOT NULL,
  default_ms      REAL    NOT NULL,
  objective_value REAL    NOT NULL DEFAULT 0,
  verdict         TEXT    NOT NULL DEFAULT 'screening' CHECK (verdict IN ('screening', 'separated', 'tie')),
  finalists_json  TEXT    NOT NULL DEFAULT '[]',
  updated_at      TEXT    NOT NULL,
  UNIQUE (kernel_id, problem_id, gpu_model, objective)
);
INSERT INTO winners_v2 (id, kernel_id, problem_id, gpu_model, device_id, run_id, config_key,
                        config_json, median_ms, default_ms, objective_value, updated_at)
  SELECT id, kernel_id, problem_id, gpu_model, device_id, run_id, config_key, config_json,
         median_ms, default_ms, median_ms, updated_at FROM winners;
DROP TABLE winners;
ALTER TABLE winners_v2 RENAME TO winners;
CREATE INDEX winners_by_gpu_model ON winners (gpu_model);
)sql",
    // 2 -> 3: Kernel Tuner's metrics (GFLOP/s...) stored with each measurement as a JSON
    // object in declaration order; winners for any objective (a metric's name, not only
    // time and energy) with its direction. The winners table is rebuilt without the CHECK
    // on the objective; every stored row is copied as it was (time and energy: lower is better).
    R"sql(
ALTER TABLE measurements ADD COLUMN metrics_json TEXT NOT NULL DEFAULT '{}';
CREATE TABLE winners_v3 (
  id               INTEGER PRIMARY KEY,
  kernel_id        INTEGER NOT NULL REFERENCES kernels (id),
  problem_id       INTEGER NOT NULL REFERENCES problems (id),
  gpu_model        TEXT    NOT NULL,  -- devices.model_key of the device that measured it
  objective        TEXT    NOT NULL DEFAULT 'time' CHECK (objective <> ''),
  device_id        INTEGER NOT NULL REFERENCES devices (id),
  run_id           INTEGER REFERENCES runs (id),
  config_key       TEXT    NOT NULL,
  config_json      TEXT    NOT NULL,
  median_ms        REAL    NOT NULL,
  default_ms       REAL    NOT NULL,
  objective_value  REAL    NOT NULL DEFAULT 0,
  verdict          TEXT    NOT NULL DEFAULT 'screening' CHECK (verdict IN ('screening', 'separated', 'tie')),
  finalists_json   TEXT    NOT NULL DEFAULT '[]',
  updated_at       TEXT    NOT NULL,
  higher_is_better INTEGER NOT NULL DEFAULT 0 CHECK (higher_is_better IN (0, 1)),
  UNIQUE (kernel_id, problem_id, gpu_model, objective)
);
INSERT INTO winners_v3 (id, kernel_id, problem_id, gpu_model, objective, device_id, run_id, config_key,
                        config_json, median_ms, default_ms, objective_value, verdict, finalists_json,
                        updated_at)
  SELECT id, kernel_id, problem_id, gpu_model, objective, device_id, run_id, config_key, config_json,
         median_ms, default_ms, objective_value, verdict, finalists_json, updated_at FROM winners;
DROP TABLE winners;
ALTER TABLE winners_v3 RENAME TO winners;
CREATE INDEX winners_by_gpu_model ON winners (gpu_model);
)sql",
    // 3 -> 4: the kernel's __global__ function (bare name) beside cutune's name for it, so a
    // prior finds a kernel tuned under another problem file's name; '' where unknown (every
    // row stored before: its next tuning fills it in).
    R"sql(
ALTER TABLE kernels ADD COLUMN function TEXT NOT NULL DEFAULT '';
)sql",
    // 4 -> 5: shape sweeps (cutune distill). cross_measurements: the best few configurations
    // of each tuned problem, each measured at every other problem of the kernel (one row of
    // the cross matrix per problem and device, measured together); median_ms NULL where the
    // configuration failed there. selectors: the configurations kept and the decision tree
    // over the problem variables, per kernel name, GPU model and objective (JSON:
    // shape_selector.hpp).
    R"sql(
CREATE TABLE cross_measurements (
  id          INTEGER PRIMARY KEY,
  kernel_id   INTEGER NOT NULL REFERENCES kernels (id),
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  config_key  TEXT    NOT NULL,
  config_json TEXT    NOT NULL,
  median_ms   REAL,
  status      TEXT    NOT NULL,
  measured_at TEXT    NOT NULL,
  UNIQUE (kernel_id, problem_id, device_id, config_key)
);
CREATE TABLE selectors (
  id            INTEGER PRIMARY KEY,
  kernel        TEXT NOT NULL,
  gpu_model     TEXT NOT NULL,
  objective     TEXT NOT NULL DEFAULT 'time',
  selector_json TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  UNIQUE (kernel, gpu_model, objective)
);
)sql",
    // 5 -> 6: claims of tunings on first use (cutune::loader's on_miss): one row per kernel,
    // problem, GPU model and objective being tuned, so the processes of one application that
    // miss the same winner tune it once. Keyed by names, not ids: the kernel and problem may
    // have no rows yet when a claim is taken. A claim whose expires_at has passed (its holder
    // died with its tuning) may be taken over.
    R"sql(
CREATE TABLE tuning_claims (
  kernel      TEXT    NOT NULL,
  problem_key TEXT    NOT NULL,
  gpu_model   TEXT    NOT NULL,
  objective   TEXT    NOT NULL,
  holder_pid  INTEGER NOT NULL,
  holder_host TEXT    NOT NULL,
  tuner_pid   INTEGER NOT NULL DEFAULT 0,
  started_at  TEXT    NOT NULL,
  expires_at  TEXT    NOT NULL,
  PRIMARY KEY (kernel, problem_key, gpu_model, objective)
);
)sql",
};

/// The tables a cutune DB of the current version must have.
constexpr std::array<std::string_view, 9> kTables = {"cross_measurements", "devices",  "kernels",
                                                     "measurements",       "problems", "runs",
                                                     "selectors",          "tuning_claims", "winners"};

std::int64_t pragma_int(sqlite3* db, const char* name) {
  Statement st(db, fmt::format("PRAGMA {}", name));
  return st.step() ? st.column_int64(0) : 0;
}

std::vector<std::string> user_tables(sqlite3* db) {
  Statement st(db,
               "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
               "'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  std::vector<std::string> names;
  while (st.step()) names.push_back(st.column_text(0));
  return names;
}

std::string join_some(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 4;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kShown) out += fmt::format(", ... ({} tables)", names.size());
  return out;
}

void bind_optional_id(Statement& st, int index, std::int64_t id) {
  if (id > 0) {
    st.bind_int64(index, id);
  } else {
    st.bind_null(index);
  }
}

std::string samples_to_json(const std::vector<double>& samples) {
  // nlohmann::json writes the shortest text that parses back to the same double, so the
  // samples round-trip exactly; a NaN or infinity becomes null (JSON has neither).
  return nlohmann::json(samples).dump();
}

std::vector<double> samples_from_json(const std::string& text, const fs::path& path,
                                      std::int64_t row_id) {
  const auto bad = [&] {
    return InputError(fmt::format("{}: measurement {}: samples_ms is not a JSON array of "
                                  "numbers",
                                  path.string(), row_id));
  };
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) throw bad();
  std::vector<double> samples;
  samples.reserve(j.size());
  for (const auto& v : j) {
    if (v.is_null()) {
      samples.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      samples.push_back(v.get<double>());
    } else {
      throw bad();
    }
  }
  return samples;
}

std::string metrics_to_json(const std::vector<std::pair<std::string, double>>& metrics) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : metrics) j[name] = v;  // a NaN/infinity becomes null
  return j.dump();
}

std::vector<std::pair<std::string, double>> metrics_from_json(const std::string& text, const fs::path& path,
                                                              std::int64_t row_id) {
  const auto j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    throw InputError(fmt::format("{}: measurement {}: metrics_json is not a JSON object", path.string(), row_id));
  std::vector<std::pair<std::string, double>> out;
  for (auto it = j.begin(); it != j.end(); ++it)
    out.emplace_back(it.key(), it.value().is_number() ? it.value().get<double>()
                                                      : std::numeric_limits<double>::quiet_NaN());
  return out;
}


std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string slug_of(const std::string& text) {
  DeviceIdentity d;
  d.name = text;
  return d.slug();
}

bool gpu_matches(const std::string& gpu_model, const std::string& filter) {
  if (filter.empty()) return true;
  if (lower(gpu_model).find(lower(filter)) != std::string::npos) return true;
  // Also the folder-name form the results/ tree uses: "nvidia-h200" finds "NVIDIA H200/sm_90".
  const bool has_alnum = std::any_of(filter.begin(), filter.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
  });
  return has_alnum && slug_of(gpu_model).find(slug_of(filter)) != std::string::npos;
}

}  // namespace

namespace detail {

const char* const kMeasurementColumns =
    "id, config_key, config_json, status, error, median_ms, samples_ms, compile_ms, "
    "verify_ms, started_at, finished_at, stats_json, metrics_json, run_id, device_id";

Measurement read_measurement(const Statement& st, const fs::path& path) {
  Measurement m;
  const std::int64_t id = st.column_int64(0);
  const std::string where = fmt::format("{}: measurement {}", path.string(), id);
  m.config = config_of_row(st.column_text(1), st.column_text(2), where);
  const std::string status = st.column_text(3);
  const auto parsed = parse_status(status);
  if (!parsed) throw InputError(fmt::format("{}: unknown status '{}'", where, status));
  m.status = *parsed;
  m.error = st.column_text(4);
  m.median_ms = st.column_double(5);
  m.samples_ms = samples_from_json(st.column_text(6), path, id);
  m.compile_ms = st.column_double(7);
  m.verify_ms = st.column_double(8);
  m.started_at = st.column_text(9);
  m.finished_at = st.column_text(10);
  read_stats_row(m, st.column_text(11));
  m.metrics = metrics_from_json(st.column_text(12), path, id);
  m.run_id = st.column_int64(13);  // NULL (imported without a run) reads as 0
  m.device_id = st.column_int64(14);
  return m;
}

void learn_kernel_function(sqlite3* db, std::int64_t kernel_id, const std::string& function) {
  if (function.empty()) return;
  Statement up(db, "UPDATE kernels SET function = ?1 WHERE id = ?2 AND function = ''");
  up.bind_text(1, function).bind_int64(2, kernel_id);
  up.run();
}

}  // namespace detail

std::string utc_now_iso() { return utc_iso(std::chrono::system_clock::now()); }

std::string utc_iso(std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t seconds = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms);
}

std::optional<double> objective_value(const Measurement& m, const Objective& objective) {
  return m.objective_value(objective);
}

Store::Store(sqlite3* db) : db_(db) {}

Store::Store(Store&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      read_only_(other.read_only_) {}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    read_only_ = other.read_only_;
  }
  return *this;
}

Store::~Store() {
  // Every Statement is finalized by its scope, so close_v2 closes at once; in WAL mode the
  // last connection to close checkpoints and removes the -wal file.
  sqlite3_close_v2(db_);
}

namespace {

// The migrations from the DB's user_version to kSchemaVersion, in one transaction.
void migrate(sqlite3* db) {
  Transaction tx(db);
  // Another process may have migrated between our look and our write lock.
  const std::int64_t current = pragma_int(db, "user_version");
  for (std::int64_t v = current; v < Store::kSchemaVersion; ++v) {
    detail::exec(db, kMigrations[static_cast<std::size_t>(v)]);
  }
  if (current < Store::kSchemaVersion) {
    detail::exec(db, fmt::format("PRAGMA application_id = {}", kApplicationId));
    detail::exec(db, fmt::format("PRAGMA user_version = {}", Store::kSchemaVersion));
  }
  tx.commit();
}

}  // namespace

Store Store::open(const fs::path& path, bool create) {
  const std::string where = path.string();
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!create && !fs::exists(st)) {
    throw InputError(fmt::format("{}: no such database file", where));
  }
  if (fs::is_directory(st)) throw InputError(fmt::format("{}: is a directory", where));

  // Read-only opens use SQLITE_OPEN_READONLY, so nothing they do can write the file.
  // A WAL-mode DB at rest is opened immutable besides: a plain read-only connection to it
  // creates -wal and -shm files and, being unable to checkpoint, leaves them beside the DB
  // (query and export did), and in a folder it may not write it cannot open it at all
  // (SQLite's "Read-Only Databases" in wal.html). Immutable reads the main file without
  // locks or side files; with no -wal file no writer is connected, and one that connects
  // meanwhile writes to its own -wal, reaching the main file only at a checkpoint (1000
  // pages, or its close) -- a window a query's milliseconds rarely meet. With a -wal file
  // (a tuning in progress, or one killed) the plain read-only open reads what it holds.
  const bool immutable = !create && wal_at_rest(path);
  const int flags = create      ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                    : immutable ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                                : SQLITE_OPEN_READONLY;
  const std::string name = immutable ? file_uri(path, "immutable=1") : where;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Store store(raw);  // owns the handle even when the open failed (SQLite wants it closed)
  store.path_ = path;
  store.read_only_ = !create;
  if (rc != SQLITE_OK) {
    throw InputError(fmt::format("{}: cannot open database: {}", where,
                                 raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3* db = store.db_;
  sqlite3_extended_result_codes(db, 1);
  // A second process (cutune query, an export) may read while a tuning session writes:
  // in WAL mode readers do not block the writer, but checkpoints and the journal-mode
  // switch take short exclusive locks, so wait for them instead of failing with BUSY.
  constexpr std::chrono::milliseconds kBusyWait{10'000};
  CUTUNE_SQLITE_CHECK(db, "sqlite3_busy_timeout", sqlite3_busy_timeout(db, static_cast<int>(kBusyWait.count())));

  // Look before touching: everything up to the migration only reads, so a file that is not
  // ours is left exactly as it was found. The reads share one snapshot: read one by one, a
  // process migrating the new file in between made another see version 0 beside the tables
  // ("not a cutune database (it has other tables: devices, kernels, ...)" in one of 8
  // writers of test_shard_cli, under load).
  std::int64_t version = 0;
  try {
    Transaction look(db, Transaction::Lock::Read);
    const std::int64_t app_id = pragma_int(db, "application_id");
    version = pragma_int(db, "user_version");
    const auto tables = user_tables(db);
    look.commit();
    const bool ours = app_id == kApplicationId;
    const bool empty = tables.empty() && version == 0 && app_id == 0;
    if (!ours && !empty && app_id != 0) {
      throw InputError(fmt::format("{}: not a cutune database (SQLite application_id {:#x})",
                                   where, app_id));
    }
    if (version > kSchemaVersion) {
      throw InputError(fmt::format("{}: schema version {} is newer than this cutune ({})",
                                   where, version, kSchemaVersion));
    }
    if (empty) {
      if (!create) {
        throw InputError(fmt::format("{}: empty database (no cutune tables)", where));
      }
    } else if (version == 0) {
      throw InputError(fmt::format("{}: not a cutune database (it has other tables: {})",
                                   where, join_some(tables)));
    } else if (version == kSchemaVersion) {
      for (auto table : kTables) {
        if (!std::binary_search(tables.begin(), tables.end(), table)) {
          throw InputError(fmt::format("{}: not a cutune database (no '{}' table)", where,
                                       table));
        }
      }
    }
  } catch (const SqliteError& e) {
    // Not a database (garbage), or a damaged one: the user's file, not our bug.
    const int primary = e.primary_code();
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_CANTOPEN ||
        primary == SQLITE_IOERR) {
      const char* message = sqlite3_errstr(e.code());
      throw InputError(fmt::format("{}: not a readable cutune database ({})", where, message));
    }
    throw;
  }

  if (!create && version < kSchemaVersion) {
    // Read-only, an older schema: the file is copied into memory and the copy migrated, so a
    // query of a DB last written by an older cutune reads it, and the file stays as it is.
    sqlite3* raw_copy = nullptr;
    const int copy_rc = sqlite3_open_v2(":memory:", &raw_copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    Store copy(raw_copy);
    copy.path_ = path;
    copy.read_only_ = true;
    CUTUNE_SQLITE_CHECK(raw_copy, ":memory:", copy_rc);
    sqlite3_backup* backup = sqlite3_backup_init(raw_copy, "main", db, "main");
    if (backup == nullptr)
      detail::throw_sqlite_error(sqlite3_errcode(raw_copy), raw_copy, "", "sqlite3_backup_init", __FILE__, __LINE__);
    sqlite3_backup_step(backup, -1);
    CUTUNE_SQLITE_CHECK(raw_copy, "", sqlite3_backup_finish(backup));
    if (pragma_int(raw_copy, "user_version") != version)  // written between the look and the copy
      throw InputError(fmt::format("{}: changed while it was read; open it again", where));
    migrate(raw_copy);
    store = std::move(copy);  // closes the file's connection: the copy is what is read
    db = store.db_;
  }
  CUTUNE_SQLITE_CHECK(db, "PRAGMA foreign_keys = ON",
                      sqlite3_exec(db, "PRAGMA foreign_keys = ON", nullptr, nullptr, nullptr));
  if (!create) {
    detail::exec(db, "PRAGMA query_only = ON");  // belt and braces over SQLITE_OPEN_READONLY
    return store;
  }

  // WAL: each commit appends to the -wal file, and a commit is complete once its frames
  // are there; a kill -9 mid-write leaves an uncommitted tail that the next open ignores,
  // so the database is never corrupted and loses at most the measurement in flight.
  // synchronous=NORMAL skips the fsync per commit (it syncs at checkpoints instead): a
  // process crash loses nothing, since the data is already in the OS's page cache; only an
  // OS crash or power loss can drop the last few commits, still without corruption. That is
  // the right trade for one commit per measurement. Without WAL (a file system without
  // shared memory) keep FULL, where NORMAL could corrupt on power loss.
  // Several processes opening a new DB at once (tuning shards, one tune per GPU): the switch
  // to WAL needs an exclusive lock, and where waiting could deadlock SQLite answers BUSY at
  // once instead of calling the busy handler ("SQLITE_BUSY: database is locked; sql: PRAGMA
  // journal_mode = WAL" in one of 8 writers of test_shard_cli, seen twice under load). A DB
  // already in WAL mode needs no switch; otherwise retry within the busy timeout.
  const auto journal_mode = [&](const char* sql) {
    Statement st(db, sql);
    return st.step() ? lower(st.column_text(0)) : std::string();
  };
  std::string mode = journal_mode("PRAGMA journal_mode");
  for (const auto give_up = std::chrono::steady_clock::now() + kBusyWait; mode != "wal";) {
    try {
      mode = journal_mode("PRAGMA journal_mode = WAL");
      break;
    } catch (const SqliteError& e) {
      if (e.primary_code() != SQLITE_BUSY || std::chrono::steady_clock::now() > give_up) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  detail::exec(db, mode == "wal" ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL");

  if (version < kSchemaVersion) migrate(db);
  return store;
}

int Store::schema_version() const {
  return static_cast<int>(pragma_int(db_, "user_version"));
}

std::int64_t Store::upsert_device(const DeviceIdentity& d) {
  // ?1..?14: the identity's columns, ?15: now.
  const auto bind = [&](Statement& st) {
    st.bind_text(1, d.name)
        .bind_int64(2, d.cc_major)
        .bind_int64(3, d.cc_minor)
        .bind_int64(4, d.sm_count)
        .bind_int64(5, static_cast<std::int64_t>(d.memory_bytes))
        .bind_int64(6, d.sm_clock_khz)
        .bind_int64(7, d.memory_clock_khz)
        .bind_int64(8, d.memory_bus_bits)
        .bind_int64(9, d.l2_bytes)
        .bind_int64(10, d.driver_version)
        .bind_text(11, d.driver_release)
        .bind_int64(12, d.nvrtc_version)
        .bind_text(14, d.model_key())
        .bind_text(15, utc_now_iso());
    if (d.uuid.empty()) {
      st.bind_null(13);
    } else {
      st.bind_text(13, d.uuid);
    }
  };

  Transaction tx(db_);
  std::optional<std::int64_t> id;
  {
    Statement find(db_, d.uuid.empty()
                            ? "SELECT id FROM devices WHERE uuid IS NULL AND name = ?1 AND "
                              "cc_major = ?2 AND cc_minor = ?3 AND sm_count = ?4 AND "
                              "memory_bytes = ?5"
                            : "SELECT id FROM devices WHERE uuid = ?1");
    if (d.uuid.empty()) {
      find.bind_text(1, d.name)
          .bind_int64(2, d.cc_major)
          .bind_int64(3, d.cc_minor)
          .bind_int64(4, d.sm_count)
          .bind_int64(5, static_cast<std::int64_t>(d.memory_bytes));
    } else {
      find.bind_text(1, d.uuid);
    }
    if (find.step()) id = find.column_int64(0);
  }
  if (id) {
    Statement update(db_,
                     "UPDATE devices SET name = ?1, cc_major = ?2, cc_minor = ?3, "
                     "sm_count = ?4, memory_bytes = ?5, sm_clock_khz = ?6, "
                     "memory_clock_khz = ?7, memory_bus_bits = ?8, l2_bytes = ?9, "
                     "driver_version = ?10, driver_release = ?11, nvrtc_version = ?12, "
                     "uuid = ?13, model_key = ?14, last_seen_at = ?15 WHERE id = ?16");
    bind(update);
    update.bind_int64(16, *id);
    update.run();
  } else {
    Statement insert(db_,
                     "INSERT INTO devices (name, cc_major, cc_minor, sm_count, memory_bytes, "
                     "sm_clock_khz, memory_clock_khz, memory_bus_bits, l2_bytes, "
                     "driver_version, driver_release, nvrtc_version, uuid, model_key, "
                     "first_seen_at, last_seen_at) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                     "?15, ?15)");
    bind(insert);
    insert.run();
    id = sqlite3_last_insert_rowid(db_);
  }
  tx.commit();
  return *id;
}

std::optional<DeviceIdentity> Store::device(std::int64_t device_id) const {
  Statement st(db_,
               "SELECT name, cc_major, cc_minor, sm_count, memory_bytes, sm_clock_khz, "
               "memory_clock_khz, memory_bus_bits, l2_bytes, driver_version, driver_release, "
               "nvrtc_version, uuid FROM devices WHERE id = ?1");
  st.bind_int64(1, device_id);
  if (!st.step()) return std::nullopt;
  DeviceIdentity d;
  d.name = st.column_text(0);
  d.cc_major = st.column_int(1);
  d.cc_minor = st.column_int(2);
  d.sm_count = st.column_int(3);
  d.memory_bytes = static_cast<std::uint64_t>(st.column_int64(4));
  d.sm_clock_khz = st.column_int(5);
  d.memory_clock_khz = st.column_int(6);
  d.memory_bus_bits = st.column_int(7);
  d.l2_bytes = st.column_int(8);
  d.driver_version = st.column_int(9);
  d.driver_release = st.column_text(10);
  d.nvrtc_version = st.column_int(11);
  d.uuid = st.column_text(12);  // NULL reads as ""
  return d;
}

std::int64_t Store::upsert_kernel(const std::string& name, const std::string& source_hash,
                                  const std::string& function) {
  // Look first, so that a known kernel costs no insert (and works on a read-only store); its
  // function is filled in where the row lacks it (one UPDATE, a no-op once it is known).
  const auto find = [&]() -> std::optional<std::int64_t> {
    Statement st(db_, "SELECT id FROM kernels WHERE name = ?1 AND source_hash = ?2");
    st.bind_text(1, name).bind_text(2, source_hash);
    if (st.step()) return st.column_int64(0);
    return std::nullopt;
  };
  if (auto id = find()) {
    if (!read_only_) detail::learn_kernel_function(db_, *id, function);
    return *id;
  }
  Statement insert(db_,
                   "INSERT INTO kernels (name, source_hash, function) VALUES (?1, ?2, ?3) "
                   "ON CONFLICT (name, source_hash) DO NOTHING");
  insert.bind_text(1, name).bind_text(2, source_hash).bind_text(3, function);
  insert.run();
  if (auto id = find()) return *id;  // ours, or a concurrent writer's: the same row
  throw std::logic_error("cutune::db: kernel row missing right after its insert");
}

std::int64_t Store::upsert_problem(std::int64_t kernel_id, const std::string& problem_key,
                                   const std::string& problem_json) {
  const auto find = [&]() -> std::optional<std::int64_t> {
    Statement st(db_, "SELECT id FROM problems WHERE kernel_id = ?1 AND problem_key = ?2");
    st.bind_int64(1, kernel_id).bind_text(2, problem_key);
    if (st.step()) return st.column_int64(0);
    return std::nullopt;
  };
  if (auto id = find()) return *id;
  Statement insert(db_,
                   "INSERT INTO problems (kernel_id, problem_key, problem_json) "
                   "VALUES (?1, ?2, ?3) ON CONFLICT (kernel_id, problem_key) DO NOTHING");
  insert.bind_int64(1, kernel_id).bind_text(2, problem_key).bind_text(3, problem_json);
  insert.run();
  if (auto id = find()) return *id;
  throw std::logic_error("cutune::db: problem row missing right after its insert");
}

Run Store::begin_run(const RunSpec& spec) {
  const auto device_id = upsert_device(spec.device);
  const auto kernel_id = upsert_kernel(spec.kernel, spec.source_hash, spec.kernel_function);
  const auto problem_id = upsert_problem(kernel_id, spec.problem_key, spec.problem_json);
  return Run(*this, insert_run(kernel_id, problem_id, device_id, spec), kernel_id, problem_id, device_id);
}

std::int64_t Store::insert_run(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                               const RunSpec& spec) {
  Statement st(db_,
               "INSERT INTO runs (kernel_id, problem_id, device_id, tool_version, strategy, "
               "seed, command, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  st.bind_int64(1, kernel_id)
      .bind_int64(2, problem_id)
      .bind_int64(3, device_id)
      .bind_text(4, spec.tool_version)
      .bind_text(5, spec.strategy)
      .bind_int64(6, std::bit_cast<std::int64_t>(spec.seed))  // SQLite integers are signed
      .bind_text(7, spec.command)
      .bind_text(8, utc_now_iso());
  st.run();
  return sqlite3_last_insert_rowid(db_);
}

void Store::finish_run(std::int64_t run_id) {
  Statement st(db_, "UPDATE runs SET finished_at = ?1 WHERE id = ?2");
  st.bind_text(1, utc_now_iso()).bind_int64(2, run_id);
  st.run();
  if (sqlite3_changes(db_) != 1) {
    throw std::invalid_argument(fmt::format("cutune::db: end of run: no run {}", run_id));
  }
}

namespace {
constexpr const char* kRunColumns =
    "id, kernel_id, problem_id, device_id, tool_version, strategy, seed, command, started_at, finished_at";

RunInfo read_run(const Statement& st) {
  RunInfo r;
  r.id = st.column_int64(0);
  r.kernel_id = st.column_int64(1);
  r.problem_id = st.column_int64(2);
  r.device_id = st.column_int64(3);
  r.tool_version = st.column_text(4);
  r.strategy = st.column_text(5);
  r.seed = std::bit_cast<std::uint64_t>(st.column_int64(6));
  r.command = st.column_text(7);
  r.started_at = st.column_text(8);
  r.finished_at = st.column_text(9);  // NULL reads as ""
  return r;
}
}  // namespace

std::optional<RunInfo> Store::run(std::int64_t run_id) const {
  Statement st(db_, fmt::format("SELECT {} FROM runs WHERE id = ?1", kRunColumns));
  st.bind_int64(1, run_id);
  if (!st.step()) return std::nullopt;
  return read_run(st);
}

std::vector<RunInfo> Store::runs(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id) const {
  Statement st(db_, fmt::format("SELECT {} FROM runs WHERE kernel_id = ?1 AND problem_id = ?2 AND device_id = ?3 "
                                "ORDER BY id",
                                kRunColumns));
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_run(st));
  return out;
}

bool Store::insert_measurement(std::int64_t run_id, std::int64_t kernel_id,
                               std::int64_t problem_id, std::int64_t device_id,
                               const Measurement& m) {
  // SQLite stores a NaN REAL as NULL: refuse it here with a message saying which field.
  for (auto [field, value] : {std::pair{"median_ms", m.median_ms},
                              std::pair{"compile_ms", m.compile_ms},
                              std::pair{"verify_ms", m.verify_ms}}) {
    if (std::isnan(value)) {
      throw std::invalid_argument(fmt::format(
          "cutune::db: a measurement's {} is NaN (config {})", field, m.config.key()));
    }
  }
  // One statement outside any explicit transaction is its own transaction: when step()
  // returns, the row is committed (durable per the WAL comment in open) and visible to
  // other connections. DO NOTHING applies to the unique key only, so a foreign-key or
  // CHECK violation still throws.
  Statement st(db_,
               "INSERT INTO measurements (run_id, kernel_id, problem_id, device_id, "
               "config_key, config_json, status, error, median_ms, samples_ms, compile_ms, "
               "verify_ms, started_at, finished_at, stats_json, metrics_json) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
               "ON CONFLICT (kernel_id, problem_id, device_id, config_key) DO NOTHING");
  bind_optional_id(st, 1, run_id);
  st.bind_int64(2, kernel_id)
      .bind_int64(3, problem_id)
      .bind_int64(4, device_id)
      .bind_text(5, m.config.key())
      .bind_text(6, config_row(m.config))
      .bind_text(7, status_name(m.status))
      .bind_text(8, m.error)
      .bind_double(9, m.median_ms)
      .bind_text(10, samples_to_json(m.samples_ms))
      .bind_double(11, m.compile_ms)
      .bind_double(12, m.verify_ms)
      .bind_text(13, m.started_at)
      .bind_text(14, m.finished_at)
      .bind_text(15, stats_row(m))
      .bind_text(16, metrics_to_json(m.metrics));
  st.run();
  return sqlite3_changes(db_) == 1;
}

std::optional<Measurement> Store::find_measurement(std::int64_t kernel_id,
                                                   std::int64_t problem_id,
                                                   std::int64_t device_id,
                                                   const std::string& config_key) const {
  Statement st(db_, fmt::format("SELECT {} FROM measurements WHERE kernel_id = ?1 AND "
                                "problem_id = ?2 AND device_id = ?3 AND config_key = ?4",
                                kMeasurementColumns));
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
  st.bind_text(4, config_key);
  if (!st.step()) return std::nullopt;
  return read_measurement(st, path_);
}

std::vector<Measurement> Store::measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                             std::int64_t device_id) const {
  Statement st(db_, fmt::format("SELECT {} FROM measurements WHERE kernel_id = ?1 AND "
                                "problem_id = ?2 AND device_id = ?3 ORDER BY id",
                                kMeasurementColumns));
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
  std::vector<Measurement> out;
  while (st.step()) out.push_back(read_measurement(st, path_));
  return out;
}

std::vector<Measurement> Store::model_measurements(std::int64_t kernel_id, std::int64_t problem_id,
                                                   std::int64_t device_id) const {
  Statement st(db_, fmt::format("SELECT {} FROM measurements WHERE kernel_id = ?1 AND problem_id = ?2 AND "
                                "device_id IN (SELECT id FROM devices WHERE model_key = "
                                "(SELECT model_key FROM devices WHERE id = ?3)) "
                                "ORDER BY device_id != ?3, device_id, id",
                                kMeasurementColumns));
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
  std::vector<Measurement> out;
  std::set<std::string> seen;
  while (st.step()) {
    Measurement m = read_measurement(st, path_);
    if (seen.insert(m.config.key()).second) out.push_back(std::move(m));
  }
  return out;
}

void Store::write_winner(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                         std::int64_t run_id, const WinnerChoice& w) {
  // One statement, so atomic: the GPU model comes from the device row. The WHERE before
  // ON CONFLICT is also what keeps SQLite from parsing ON as a join constraint.
  Statement st(db_,
               "INSERT INTO winners (kernel_id, problem_id, gpu_model, objective, device_id, run_id, "
               "config_key, config_json, median_ms, default_ms, objective_value, verdict, "
               "finalists_json, updated_at, higher_is_better) "
               "SELECT ?1, ?2, model_key, ?5, id, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14 FROM devices "
               "WHERE id = ?3 "
               "ON CONFLICT (kernel_id, problem_id, gpu_model, objective) DO UPDATE SET "
               "device_id = excluded.device_id, run_id = excluded.run_id, "
               "config_key = excluded.config_key, config_json = excluded.config_json, "
               "median_ms = excluded.median_ms, default_ms = excluded.default_ms, "
               "objective_value = excluded.objective_value, verdict = excluded.verdict, "
               "finalists_json = excluded.finalists_json, updated_at = excluded.updated_at, "
               "higher_is_better = excluded.higher_is_better");
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
  bind_optional_id(st, 4, run_id);
  // The objective and the verdict become text here, and only here.
  st.bind_text(5, w.objective.name())
      .bind_text(6, w.config.key())
      .bind_text(7, config_row(w.config))
      .bind_double(8, w.median_ms)
      .bind_double(9, w.default_ms)
      .bind_double(10, w.objective.is_time() && w.objective_value == 0 ? w.median_ms : w.objective_value)
      .bind_text(11, verdict_name(w.verdict))
      .bind_text(12, finalists_row(w.finalists))
      .bind_text(13, utc_now_iso())
      .bind_int64(14, w.objective.higher_is_better ? 1 : 0);
  st.run();
  if (sqlite3_changes(db_) != 1) {
    throw std::invalid_argument(fmt::format("cutune::db: winner: no device {}", device_id));
  }
}

std::vector<Winner> Store::winners(const WinnerFilter& filter) const {
  Statement st(db_,
               "SELECT k.name, p.problem_key, w.gpu_model, w.config_key, w.config_json, "
               "w.median_ms, w.default_ms, w.run_id, w.updated_at, w.verdict, w.finalists_json, "
               "w.objective, w.objective_value, w.higher_is_better, "
               // The winner's own measurement: its resources (stats_json) show beside its time.
               "(SELECT m.stats_json FROM measurements m WHERE m.kernel_id = w.kernel_id AND "
               "m.problem_id = w.problem_id AND m.device_id = w.device_id AND m.config_key = w.config_key) "
               "FROM winners w JOIN kernels k ON k.id = w.kernel_id "
               "JOIN problems p ON p.id = w.problem_id "
               "WHERE (?1 = '' OR k.name = ?1) AND (?2 = '' OR p.problem_key = ?2) "
               "AND (?3 = '' OR w.objective = ?3) "
               "ORDER BY k.name, p.problem_key, w.gpu_model, w.objective, w.id");
  st.bind_text(1, filter.kernel).bind_text(2, filter.problem).bind_text(3, filter.objective);
  std::vector<Winner> out;
  while (st.step()) {
    Winner w;
    w.gpu_model = st.column_text(2);
    // The GPU match (substring, case and slug insensitive) is easier to state in C++.
    if (!gpu_matches(w.gpu_model, filter.gpu)) continue;
    w.kernel = st.column_text(0);
    w.problem_key = st.column_text(1);
    w.config = config_of_row(st.column_text(3), st.column_text(4),
                             fmt::format("{}: winner of {} {}", path_.string(), w.kernel, w.problem_key));
    w.median_ms = st.column_double(5);
    w.default_ms = st.column_double(6);
    w.run_id = st.column_int64(7);  // NULL reads as 0
    w.updated_at = st.column_text(8);
    const std::string verdict = st.column_text(9);
    const auto parsed = parse_verdict(verdict);
    if (!parsed)  // the schema's CHECK allows no other: a file written by something else
      throw InputError(fmt::format("{}: winner of {} {}: unknown verdict '{}'", path_.string(), w.kernel,
                                   w.problem_key, verdict));
    w.verdict = *parsed;
    w.finalists = finalists_of_row(st.column_text(10));
    w.objective = Objective::from_name(st.column_text(11), st.column_int64(13) != 0);
    w.objective_value = st.column_double(12);
    w.resources = resources_of_stats_row(st.column_text(14));
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<MeasurementTarget> Store::measurement_targets(const WinnerFilter& filter, bool or_function) const {
  Statement st(db_,
               "SELECT m.kernel_id, m.problem_id, m.device_id, k.name, p.problem_key, p.problem_json, "
               "d.model_key, COUNT(*), k.function FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
               "JOIN problems p ON p.id = m.problem_id JOIN devices d ON d.id = m.device_id "
               "WHERE (?1 = '' OR k.name = ?1 OR (?3 AND k.function = ?1)) AND (?2 = '' OR p.problem_key = ?2) "
               "GROUP BY m.kernel_id, m.problem_id, m.device_id "
               "ORDER BY k.name, p.problem_key, d.model_key, m.device_id");
  st.bind_text(1, filter.kernel).bind_text(2, filter.problem).bind_int64(3, or_function ? 1 : 0);
  std::vector<MeasurementTarget> out;
  while (st.step()) {
    MeasurementTarget t;
    t.gpu_model = st.column_text(6);
    if (!gpu_matches(t.gpu_model, filter.gpu)) continue;
    t.kernel_id = st.column_int64(0);
    t.problem_id = st.column_int64(1);
    t.device_id = st.column_int64(2);
    t.kernel = st.column_text(3);
    t.problem_key = st.column_text(4);
    t.problem_json = st.column_text(5);
    t.count = static_cast<std::size_t>(st.column_int64(7));
    t.kernel_function = st.column_text(8);
    out.push_back(std::move(t));
  }
  return out;
}

void Store::transaction(const std::function<bool()>& body) {
  Transaction tx(db_);
  if (body()) tx.commit();
}

bool Store::integrity_ok() const {
  Statement st(db_, "PRAGMA integrity_check");
  return st.step() && st.column_text(0) == "ok";
}

void Run::require_open(const char* what) const {
  if (ended_) throw std::logic_error(fmt::format("cutune::db: {} after the end of run {}", what, id_));
}

std::vector<Measurement> Run::measurements() const {
  return store_->measurements(kernel_id_, problem_id_, device_id_);
}

std::vector<Measurement> Run::model_measurements() const {
  return store_->model_measurements(kernel_id_, problem_id_, device_id_);
}

bool Run::add(const Measurement& m) {
  require_open("a measurement");
  return store_->insert_measurement(id_, kernel_id_, problem_id_, device_id_, m);
}

void Run::set_winner(const WinnerChoice& winner) {
  require_open("a winner");
  store_->write_winner(kernel_id_, problem_id_, device_id_, id_, winner);
}

void Run::end() {
  require_open("the end");
  store_->finish_run(id_);
  ended_ = true;
}

}  // namespace cutune::db
