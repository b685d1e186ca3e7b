// Store::merge_from: the rows of one cutune DB added to another (shards of a space run as
// independent jobs, each into its own DB, then combined).
#include <fmt/format.h>
#include <sqlite3.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "cutune/db/store.hpp"
#include "measurement_rows.hpp"
#include "sqlite_handle.hpp"

namespace cutune::db {

using detail::Statement;
using detail::Transaction;

namespace {

/// One column's value as SQLite holds it, copied without interpretation.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;
using Row = std::vector<Cell>;

Cell read_cell(const Statement& st, int column) {
  switch (st.column_type(column)) {
    case SQLITE_NULL: return std::monostate{};
    case SQLITE_INTEGER: return st.column_int64(column);
    case SQLITE_FLOAT: return st.column_double(column);
    default: return st.column_text(column);  // the schema has no blobs
  }
}

std::vector<Row> read_rows(sqlite3* db, const std::string& sql, int columns) {
  Statement st(db, sql);
  std::vector<Row> rows;
  while (st.step()) {
    Row r;
    r.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) r.push_back(read_cell(st, c));
    rows.push_back(std::move(r));
  }
  return rows;
}

void bind_cell(Statement& st, int index, const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) st.bind_null(index);
  else if (auto* i = std::get_if<std::int64_t>(&cell)) st.bind_int64(index, *i);
  else if (auto* d = std::get_if<double>(&cell)) st.bind_double(index, *d);
  else st.bind_text(index, std::get<std::string>(cell));
}

std::int64_t id_of(const Cell& cell) {
  if (auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  return 0;  // NULL
}

std::string text_of(const Cell& cell) {
  if (auto* s = std::get_if<std::string>(&cell)) return *s;
  return {};
}

double number_of(const Cell& cell) {
  if (auto* d = std::get_if<double>(&cell)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  return 0.0;
}

/// Binds `row[first..last]` to ?1.. in order.
void bind_range(Statement& st, const Row& row, std::size_t first, std::size_t last) {
  for (std::size_t c = first; c <= last; ++c) bind_cell(st, static_cast<int>(c - first + 1), row[c]);
}

Cell id_cell(std::int64_t id) { return id > 0 ? Cell(id) : Cell(std::monostate{}); }

// Column lists, id first. The inserts bind every column after the id.
constexpr int kDeviceColumns = 17;
constexpr const char* kDeviceSelect =
    "SELECT id, name, cc_major, cc_minor, sm_count, memory_bytes, sm_clock_khz, memory_clock_khz, "
    "memory_bus_bits, l2_bytes, driver_version, driver_release, nvrtc_version, uuid, model_key, first_seen_at, "
    "last_seen_at FROM devices ORDER BY id";
constexpr int kRunColumns = 10;
constexpr const char* kRunSelect =
    "SELECT id, kernel_id, problem_id, device_id, tool_version, strategy, seed, command, started_at, finished_at "
    "FROM runs ORDER BY id";
constexpr int kMeasurementColumns = 17;
constexpr const char* kMeasurementSelect =
    "SELECT id, run_id, kernel_id, problem_id, device_id, config_key, config_json, status, error, median_ms, "
    "samples_ms, compile_ms, verify_ms, started_at, finished_at, stats_json, metrics_json FROM measurements "
    "ORDER BY id";
constexpr int kWinnerColumns = 16;
constexpr const char* kWinnerSelect =
    "SELECT id, kernel_id, problem_id, gpu_model, objective, device_id, run_id, config_key, config_json, "
    "median_ms, default_ms, objective_value, verdict, finalists_json, updated_at, higher_is_better FROM winners "
    "ORDER BY id";
// Winner row positions.
enum WinnerColumn : std::size_t {
  kWId, kWKernel, kWProblem, kWModel, kWObjective, kWDevice, kWRun, kWKey, kWJson, kWMedian, kWDefault,
  kWValue, kWVerdict, kWFinalists, kWUpdated, kWHigher
};

/// Everything of a source DB, read before anything is written (the source may be the
/// destination's own file).
struct Snapshot {
  std::vector<Row> devices, kernels, problems, runs, measurements, winners;
};

Snapshot read_snapshot(sqlite3* db) {
  Snapshot s;
  s.devices = read_rows(db, kDeviceSelect, kDeviceColumns);
  s.kernels = read_rows(db, "SELECT id, name, source_hash, function FROM kernels ORDER BY id", 4);
  s.problems = read_rows(db, "SELECT id, kernel_id, problem_key, problem_json FROM problems ORDER BY id", 4);
  s.runs = read_rows(db, kRunSelect, kRunColumns);
  s.measurements = read_rows(db, kMeasurementSelect, kMeasurementColumns);
  s.winners = read_rows(db, kWinnerSelect, kWinnerColumns);
  return s;
}

std::optional<Row> find_one(sqlite3* db, const std::string& sql, const std::vector<Cell>& params, int columns) {
  Statement st(db, sql);
  for (std::size_t i = 0; i < params.size(); ++i) bind_cell(st, static_cast<int>(i + 1), params[i]);
  if (!st.step()) return std::nullopt;
  Row r;
  for (int c = 0; c < columns; ++c) r.push_back(read_cell(st, c));
  return r;
}

/// The best ok measurement of a winner group.
struct Best {
  std::int64_t run_id = 0, device_id = 0;
  std::string config_key, config_json;
  double median_ms = 0.0, value = 0.0;
};

/// Ranked as tune ranks (db::objective_value over the store's own row reader); equal
/// values in the order of the keys' text; the same key on two devices of the model: the
/// first stored.
std::optional<Best> best_measurement(sqlite3* db, const std::filesystem::path& path, std::int64_t kernel_id,
                                     std::int64_t problem_id, const std::string& gpu_model,
                                     const Objective& objective) {
  Statement st(db, fmt::format("SELECT {} FROM measurements WHERE kernel_id = ?1 AND "
                               "problem_id = ?2 AND status = 'ok' AND device_id IN "
                               "(SELECT id FROM devices WHERE model_key = ?3) ORDER BY id",
                               detail::kMeasurementColumns));
  st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_text(3, gpu_model);
  std::optional<Best> best;
  while (st.step()) {
    const Measurement m = detail::read_measurement(st, path);
    const auto v = objective_value(m, objective);
    if (!v) continue;
    const bool better = !best || objective.better(*v, best->value) ||
                        (*v == best->value && m.config.key() < best->config_key);
    if (!better) continue;
    // The configuration's text as the row has it: a winner made of it says the same.
    best = Best{m.run_id, m.device_id, m.config.key(), st.column_text(2), m.median_ms, *v};
  }
  return best;
}

/// Whether a stored winner still stands over the merged measurements' best (merge_from's rule).
bool still_stands(const Row& winner, const Best& best) {
  if (text_of(winner[kWKey]) == best.config_key && number_of(winner[kWMedian]) == best.median_ms) return true;
  const auto finalists = nlohmann::json::parse(text_of(winner[kWFinalists]), nullptr, false);
  if (!finalists.is_array()) return false;
  for (const auto& f : finalists) {
    if (!f.is_object() || !f.contains("config_key") || !f["config_key"].is_string()) continue;
    if (f["config_key"].get<std::string>() != best.config_key) continue;
    return f.contains("screening_median_ms") && f["screening_median_ms"].is_number() &&
           f["screening_median_ms"].get<double>() == best.median_ms;
  }
  return false;
}

using GroupKey = std::tuple<std::int64_t, std::int64_t, std::string, std::string>;

GroupKey group_of(const Row& w) {
  return {id_of(w[kWKernel]), id_of(w[kWProblem]), text_of(w[kWModel]), text_of(w[kWObjective])};
}

/// Rows equal but for id and updated_at: writing one over the other would change nothing.
bool same_winner(const Row& a, const Row& b) {
  for (std::size_t c = kWKernel; c < kWinnerColumns; ++c)
    if (c != kWUpdated && a[c] != b[c]) return false;
  return true;
}

}  // namespace

Store::MergeStats Store::merge_from(const Store& source) {
  const Snapshot src = read_snapshot(source.db_);
  MergeStats stats;
  Transaction tx(db_);

  std::map<std::int64_t, std::int64_t> device_ids, kernel_ids, problem_ids, run_ids;
  for (const Row& d : src.devices) {
    const bool has_uuid = !std::holds_alternative<std::monostate>(d[13]);
    const auto found =
        has_uuid ? find_one(db_, "SELECT id, first_seen_at, last_seen_at FROM devices WHERE uuid = ?1", {d[13]}, 3)
                 : find_one(db_,
                            "SELECT id, first_seen_at, last_seen_at FROM devices WHERE uuid IS NULL AND name = ?1 "
                            "AND cc_major = ?2 AND cc_minor = ?3 AND sm_count = ?4 AND memory_bytes = ?5",
                            {d[1], d[2], d[3], d[4], d[5]}, 3);
    if (found) {
      const std::int64_t id = id_of((*found)[0]);
      device_ids[id_of(d[0])] = id;
      const std::string first = std::min(text_of((*found)[1]), text_of(d[15]));
      const std::string last = std::max(text_of((*found)[2]), text_of(d[16]));
      if (first != text_of((*found)[1]) || last != text_of((*found)[2])) {
        Statement up(db_, "UPDATE devices SET first_seen_at = ?1, last_seen_at = ?2 WHERE id = ?3");
        up.bind_text(1, first).bind_text(2, last).bind_int64(3, id);
        up.run();
      }
      continue;
    }
    Statement ins(db_,
                  "INSERT INTO devices (name, cc_major, cc_minor, sm_count, memory_bytes, sm_clock_khz, "
                  "memory_clock_khz, memory_bus_bits, l2_bytes, driver_version, driver_release, nvrtc_version, uuid, "
                  "model_key, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                  "?12, ?13, ?14, ?15, ?16)");
    bind_range(ins, d, 1, kDeviceColumns - 1);
    ins.run();
    device_ids[id_of(d[0])] = sqlite3_last_insert_rowid(db_);
    ++stats.devices_added;
  }

  for (const Row& k : src.kernels) {
    const auto found = find_one(db_, "SELECT id FROM kernels WHERE name = ?1 AND source_hash = ?2", {k[1], k[2]}, 1);
    if (found) {
      kernel_ids[id_of(k[0])] = id_of((*found)[0]);
      detail::learn_kernel_function(db_, id_of((*found)[0]), text_of(k[3]));  // where the source knows it
      continue;
    }
    Statement ins(db_, "INSERT INTO kernels (name, source_hash, function) VALUES (?1, ?2, ?3)");
    bind_range(ins, k, 1, 3);
    ins.run();
    kernel_ids[id_of(k[0])] = sqlite3_last_insert_rowid(db_);
    ++stats.kernels_added;
  }

  for (const Row& p : src.problems) {
    const Cell kernel = kernel_ids.at(id_of(p[1]));
    const auto found =
        find_one(db_, "SELECT id FROM problems WHERE kernel_id = ?1 AND problem_key = ?2", {kernel, p[2]}, 1);
    if (found) {  // keeps its stored JSON, as upsert_problem does
      problem_ids[id_of(p[0])] = id_of((*found)[0]);
      continue;
    }
    Statement ins(db_, "INSERT INTO problems (kernel_id, problem_key, problem_json) VALUES (?1, ?2, ?3)");
    bind_cell(ins, 1, kernel);
    bind_cell(ins, 2, p[2]);
    bind_cell(ins, 3, p[3]);
    ins.run();
    problem_ids[id_of(p[0])] = sqlite3_last_insert_rowid(db_);
    ++stats.problems_added;
  }

  for (const Row& r : src.runs) {
    Row mapped = r;
    mapped[1] = kernel_ids.at(id_of(r[1]));
    mapped[2] = problem_ids.at(id_of(r[2]));
    mapped[3] = device_ids.at(id_of(r[3]));
    // A run has no identity of its own in the schema: its target, how it was made and the
    // millisecond it started name it (two runs of one command on one target start apart).
    const auto found = find_one(db_,
                                "SELECT id, finished_at FROM runs WHERE kernel_id = ?1 AND problem_id = ?2 AND "
                                "device_id = ?3 AND tool_version = ?4 AND strategy = ?5 AND seed = ?6 AND "
                                "command = ?7 AND started_at = ?8",
                                {mapped[1], mapped[2], mapped[3], r[4], r[5], r[6], r[7], r[8]}, 2);
    if (found) {
      const std::int64_t id = id_of((*found)[0]);
      run_ids[id_of(r[0])] = id;
      if (std::holds_alternative<std::monostate>((*found)[1]) && !std::holds_alternative<std::monostate>(r[9])) {
        Statement up(db_, "UPDATE runs SET finished_at = ?1 WHERE id = ?2");
        bind_cell(up, 1, r[9]);
        up.bind_int64(2, id);
        up.run();
      }
      continue;
    }
    Statement ins(db_,
                  "INSERT INTO runs (kernel_id, problem_id, device_id, tool_version, strategy, seed, command, "
                  "started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    bind_range(ins, mapped, 1, kRunColumns - 1);
    ins.run();
    run_ids[id_of(r[0])] = sqlite3_last_insert_rowid(db_);
    ++stats.runs_added;
  }

  for (const Row& m : src.measurements) {
    Row mapped = m;
    mapped[1] = id_cell(id_of(m[1]) > 0 ? run_ids.at(id_of(m[1])) : 0);  // NULL: imported data
    mapped[2] = kernel_ids.at(id_of(m[2]));
    mapped[3] = problem_ids.at(id_of(m[3]));
    mapped[4] = device_ids.at(id_of(m[4]));
    Statement ins(db_,
                  "INSERT INTO measurements (run_id, kernel_id, problem_id, device_id, config_key, config_json, "
                  "status, error, median_ms, samples_ms, compile_ms, verify_ms, started_at, finished_at, "
                  "stats_json, metrics_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                  "?15, ?16) ON CONFLICT (kernel_id, problem_id, device_id, config_key) DO NOTHING");
    bind_range(ins, mapped, 1, kMeasurementColumns - 1);
    ins.run();
    if (sqlite3_changes(db_) == 1) ++stats.measurements_added;
    else ++stats.measurements_present;
  }

  // Winners: this DB's, then the source's (ids mapped), as candidates per group.
  std::map<GroupKey, std::vector<Row>> candidates;
  std::map<GroupKey, Row> here;
  for (Row& w : read_rows(db_, kWinnerSelect, kWinnerColumns)) {
    here.emplace(group_of(w), w);
    candidates[group_of(w)].push_back(std::move(w));
  }
  for (const Row& w : src.winners) {
    Row mapped = w;
    mapped[kWKernel] = kernel_ids.at(id_of(w[kWKernel]));
    mapped[kWProblem] = problem_ids.at(id_of(w[kWProblem]));
    mapped[kWDevice] = device_ids.at(id_of(w[kWDevice]));
    mapped[kWRun] = id_cell(id_of(w[kWRun]) > 0 ? run_ids.at(id_of(w[kWRun])) : 0);
    candidates[group_of(mapped)].push_back(std::move(mapped));
  }
  for (const auto& [group, rows] : candidates) {
    const auto& [kernel_id, problem_id, gpu_model, objective] = group;
    const bool higher_is_better = id_of(rows.front()[kWHigher]) != 0;
    const auto best = best_measurement(db_, path_, kernel_id, problem_id, gpu_model,
                                       Objective::from_name(objective, higher_is_better));
    const Row* kept = &rows.front();  // no ok measurement: the first stored winner stands
    Row fresh;
    if (best) {
      kept = nullptr;
      for (const Row& w : rows)
        if (still_stands(w, *best)) {
          kept = &w;
          break;
        }
      if (!kept) {
        double default_ms = 0.0;
        for (const Row& w : rows)
          if (number_of(w[kWDefault]) > 0) {
            default_ms = number_of(w[kWDefault]);
            break;
          }
        fresh = rows.front();
        fresh[kWDevice] = best->device_id;
        fresh[kWRun] = id_cell(best->run_id);
        fresh[kWKey] = best->config_key;
        fresh[kWJson] = best->config_json;
        fresh[kWMedian] = best->median_ms;
        fresh[kWDefault] = default_ms;
        fresh[kWValue] = best->value;
        fresh[kWVerdict] = std::string("screening");
        fresh[kWFinalists] = std::string("[]");
        fresh[kWUpdated] = utc_now_iso();
        kept = &fresh;
      }
    }
    if (auto it = here.find(group); it != here.end() && same_winner(it->second, *kept)) continue;
    Statement st(db_,
                 "INSERT INTO winners (kernel_id, problem_id, gpu_model, objective, device_id, run_id, config_key, "
                 "config_json, median_ms, default_ms, objective_value, verdict, finalists_json, updated_at, "
                 "higher_is_better) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
                 "ON CONFLICT (kernel_id, problem_id, gpu_model, objective) DO UPDATE SET "
                 "device_id = excluded.device_id, run_id = excluded.run_id, config_key = excluded.config_key, "
                 "config_json = excluded.config_json, median_ms = excluded.median_ms, "
                 "default_ms = excluded.default_ms, objective_value = excluded.objective_value, "
                 "verdict = excluded.verdict, finalists_json = excluded.finalists_json, "
                 "updated_at = excluded.updated_at, higher_is_better = excluded.higher_is_better");
    bind_range(st, *kept, kWKernel, kWinnerColumns - 1);
    st.run();
    ++stats.winners_written;
  }
  tx.commit();
  return stats;
}

}  // namespace cutune::db
