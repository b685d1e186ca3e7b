// The store's rows of shape sweeps: the cross matrix (cross_measurements) and the selectors
// distilled from it (selectors). Kept apart from store.cpp: only these two tables.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "result_rows.hpp"
#include "sqlite_handle.hpp"

namespace cutune::db {

using detail::Statement;
using detail::Transaction;

namespace {

bool contains_ignoring_case(const std::string& text, const std::string& part) {
  const auto low = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return part.empty() || low(text).find(low(part)) != std::string::npos;
}

}  // namespace

void Store::put_cross_row(std::int64_t kernel_id, std::int64_t problem_id, std::int64_t device_id,
                          const std::vector<CrossCell>& cells) {
  Transaction tx(db_);
  const std::string now = utc_now_iso();
  for (const CrossCell& c : cells) {
    Statement st(db_,
                 "INSERT OR REPLACE INTO cross_measurements (kernel_id, problem_id, device_id, config_key, "
                 "config_json, median_ms, status, measured_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    st.bind_int64(1, kernel_id).bind_int64(2, problem_id).bind_int64(3, device_id);
    st.bind_text(4, c.config.key()).bind_text(5, c.config.to_json().dump());
    if (c.median_ms) st.bind_double(6, *c.median_ms);
    else st.bind_null(6);
    st.bind_text(7, status_name(c.status)).bind_text(8, now);
    st.run();
  }
  tx.commit();
}

std::vector<CrossCell> Store::cross_cells(const std::string& kernel, const std::string& gpu_model) const {
  Statement st(db_,
               "SELECT p.problem_key, c.config_key, c.config_json, c.median_ms, c.status, d.model_key, c.measured_at "
               "FROM cross_measurements c JOIN kernels k ON k.id = c.kernel_id "
               "JOIN problems p ON p.id = c.problem_id JOIN devices d ON d.id = c.device_id "
               "WHERE k.name = ?1 AND d.model_key = ?2 ORDER BY p.problem_key, c.config_key, c.id");
  st.bind_text(1, kernel).bind_text(2, gpu_model);
  std::vector<CrossCell> out;
  while (st.step()) {
    CrossCell c;
    c.problem_key = st.column_text(0);
    c.config = detail::config_of_row(st.column_text(1), st.column_text(2),
                                     fmt::format("{}: cross measurement of {} {}", path_.string(), kernel, c.problem_key));
    if (!st.is_null(3)) c.median_ms = st.column_double(3);
    const auto status = parse_status(st.column_text(4));
    if (!status)
      throw InputError(fmt::format("{}: cross measurement of {} {}: unknown status '{}'", path_.string(), kernel,
                                   c.problem_key, st.column_text(4)));
    c.status = *status;
    c.gpu_model = st.column_text(5);
    c.measured_at = st.column_text(6);
    out.push_back(std::move(c));
  }
  return out;
}

void Store::set_selector(const ShapeSelector& selector) {
  Statement st(db_,
               "INSERT INTO selectors (kernel, gpu_model, objective, selector_json, created_at) "
               "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (kernel, gpu_model, objective) DO UPDATE SET "
               "selector_json = excluded.selector_json, created_at = excluded.created_at");
  st.bind_text(1, selector.kernel).bind_text(2, selector.gpu_model).bind_text(3, selector.objective);
  st.bind_text(4, selector_json(selector).dump()).bind_text(5, selector.created_at.empty() ? utc_now_iso() : selector.created_at);
  st.run();
}

std::vector<ShapeSelector> Store::selectors(const WinnerFilter& filter) const {
  Statement st(db_,
               "SELECT id, selector_json FROM selectors WHERE (?1 = '' OR kernel = ?1) AND (?2 = '' OR objective = ?2) "
               "ORDER BY kernel, gpu_model, objective");
  st.bind_text(1, filter.kernel).bind_text(2, filter.objective);
  std::vector<ShapeSelector> out;
  while (st.step()) {
    nlohmann::ordered_json j;
    const std::string where = fmt::format("{}: selectors row {}", path_.string(), st.column_int64(0));
    try {
      j = nlohmann::ordered_json::parse(st.column_text(1));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not JSON ({})", where, e.what()));
    }
    ShapeSelector s = selector_from_json(j, where);
    if (!contains_ignoring_case(s.gpu_model, filter.gpu)) continue;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace cutune::db
