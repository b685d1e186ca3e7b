// cutune distill: the cross matrix of a tuned sweep (each shape's best few configurations
// measured at every shape, on the GPU through the runner's measure path, stored), then the
// fewest configurations within a bound and a selector over the problem variables (stored;
// `export --format wisdom` carries it to applications).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/shape_sweep.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/distill.hpp"
#include "sweep_commands.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace cutune::cli {
namespace {

/// The problem keys to distil: the sweep's (each must have a winner), else every problem of
/// the kernel with a time winner on `model`, smallest first.
std::vector<std::string> distill_shapes(const db::Store& store, const KernelProblem& p, const std::string& model,
                                        const DistillArgs& a) {
  std::vector<std::string> tuned;
  for (const auto& w : store.winners({p.name(), "", "", "time"}))
    if (w.gpu_model == model) tuned.push_back(w.problem_key);
  std::vector<std::string> keys;
  if (!a.sweep.empty()) {
    for (const auto& shape : parse_sweep(a.sweep, p.variables(), a.yes)) {
      keys.push_back(p.instantiate(sweep_shape_text(shape)).key());
      if (std::find(tuned.begin(), tuned.end(), keys.back()) == tuned.end())
        throw InputError(fmt::format("--sweep: {} has no winner of {} on {} in {}: tune it first (tune --sweep)",
                                     keys.back(), p.name(), model, store.path().string()));
    }
  } else {
    keys = tuned;
    std::sort(keys.begin(), keys.end(), [&](const std::string& x, const std::string& y) {
      return p.instantiate(x).variables < p.instantiate(y).variables;
    });
  }
  if (keys.empty())
    throw InputError(fmt::format("distill: {} holds no winner of {} on {}: tune a sweep first (tune {} --sweep ...)",
                                 store.path().string(), p.name(), model, p.name()));
  return keys;
}

/// Each shape's winner, then its best stored measurements, `top_k` distinct in all; the union
/// over the shapes, first seen first. Configurations the current space does not declare (an
/// older source) are left out.
std::vector<Configuration> candidates(const db::Store& store, const KernelProblem& p, const std::string& model,
                                      const std::vector<std::string>& keys, std::size_t top_k) {
  std::vector<Configuration> out;
  for (const auto& key : keys) {
    std::set<std::string> mine;  // this shape's candidates, `top_k` at most
    const auto add = [&](const ResultConfig& c) {
      try {
        Configuration conf = c.configuration_in(p.space());
        mine.insert(conf.key());
        if (std::none_of(out.begin(), out.end(), [&](const Configuration& o) { return o.key() == conf.key(); }))
          out.push_back(std::move(conf));
      } catch (const InputError&) {
      }
    };
    for (const auto& w : store.winners({p.name(), "", key, "time"}))
      if (w.gpu_model == model) add(w.config);
    std::vector<db::Measurement> ms;
    for (const auto& t : store.measurement_targets({p.name(), "", key, ""}))
      if (t.gpu_model == model)
        for (auto& m : store.model_measurements(t.kernel_id, t.problem_id, t.device_id))
          if (m.status == Status::Ok && m.median_ms > 0) ms.push_back(std::move(m));
    std::stable_sort(ms.begin(), ms.end(), [](const auto& x, const auto& y) { return x.median_ms < y.median_ms; });
    for (std::size_t i = 0; i < ms.size() && mine.size() < top_k; ++i) add(ms[i].config);
  }
  return out;
}

std::string config_text(const KernelProblem& p, const Configuration& c) {
  std::string out;
  for (const auto& [name, value] : p.space().assignments(c.index()))
    out += (out.empty() ? "" : ",") + name + "=" + value.str();
  return out;
}

/// One row per shape: every candidate measured there together (interleaved), stored.
void measure_cross(db::Store& store, const KernelProblem& p, const std::vector<std::string>& keys,
                   const std::vector<Configuration>& configs, const DistillArgs& a) {
  worker::MeasureOptions o = measure_options(a.measure);
  o.finalists = 0;
  std::vector<std::string> texts;
  for (const auto& c : configs) texts.push_back(config_text(p, c));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::cout << fmt::format("measuring {} configurations at {} ({}/{})\n", texts.size(), keys[i], i + 1, keys.size())
              << std::flush;
    const runner::MeasureSession session = runner::measure_configs(p, keys[i], texts, a.device, o);
    const std::int64_t device_id = store.upsert_device(session.device);
    const std::int64_t kernel_id = store.upsert_kernel(p.name(), runner::kernel_source_hash(p));
    const std::int64_t problem_id = store.upsert_problem(kernel_id, session.problem_key, p.instantiate(keys[i]).json());
    std::vector<db::CrossCell> cells;
    for (const auto& mc : session.configs) {
      db::CrossCell c;
      c.problem_key = session.problem_key;
      c.config = mc.config;
      c.status = mc.evaluation.status;
      if (mc.evaluation.stats) c.median_ms = mc.evaluation.stats->summary.median;
      cells.push_back(std::move(c));
    }
    store.put_cross_row(kernel_id, problem_id, device_id, cells);
  }
}

struct Matrix {
  search::CrossMatrix m;
  std::vector<ResultConfig> columns;
};

/// The stored cells of `keys` as a matrix; columns in the order first seen.
Matrix read_matrix(const db::Store& store, const KernelProblem& p, const std::string& model,
                   const std::vector<std::string>& keys) {
  Matrix out;
  std::map<std::string, std::size_t> column_of;
  std::vector<std::map<std::size_t, std::optional<double>>> rows(keys.size());
  for (const auto& cell : store.cross_cells(p.name(), model)) {
    const auto row = std::find(keys.begin(), keys.end(), cell.problem_key);
    if (row == keys.end()) continue;
    auto [it, added] = column_of.emplace(cell.config.key(), out.columns.size());
    if (added) out.columns.push_back(cell.config);
    rows[static_cast<std::size_t>(row - keys.begin())][it->second] = cell.median_ms;
  }
  for (std::size_t r = 0; r < keys.size(); ++r) {
    out.m.shapes.push_back(p.instantiate(keys[r]).variables);
    std::vector<std::optional<double>> row(out.columns.size());
    for (const auto& [c, v] : rows[r]) row[c] = v;
    out.m.ms.push_back(std::move(row));
  }
  return out;
}

void print_tree(std::ostream& out, const ShapeSelector& s, std::size_t at, int depth) {
  const SelectorNode& n = s.nodes[at];
  const std::string pad(static_cast<std::size_t>(2 * depth + 2), ' ');
  if (n.leaf()) {
    out << fmt::format("{}-> config {} ({})\n", pad, n.config + 1, s.configs[n.config].key());
    return;
  }
  out << fmt::format("{}{} <= {}:\n", pad, n.variable, n.at_most);
  print_tree(out, s, n.low, depth + 1);
  out << fmt::format("{}{} > {}:\n", pad, n.variable, n.at_most);
  print_tree(out, s, n.high, depth + 1);
}

void print_distillation(std::ostream& out, const ShapeSelector& s, const Matrix& mx, const search::Distillation& d,
                        const std::vector<std::string>& keys) {
  out << fmt::format("\n{} on {}: {} shapes, {} candidate configurations; bound {:.3g}%\n", s.kernel, s.gpu_model,
                     keys.size(), mx.columns.size(), s.bound * 100);
  out << fmt::format("kept {} configuration{} (greedy set cover), worst slowdown {:.3g}%\n", s.configs.size(),
                     s.configs.size() == 1 ? "" : "s", d.worst_slowdown * 100);
  out << fmt::format("  {:<24} {:>12}  {:>9}  {}\n", "shape", "best ms", "selected", "slowdown");
  for (std::size_t r = 0; r < keys.size(); ++r) {
    if (std::find(d.uncovered.begin(), d.uncovered.end(), r) != d.uncovered.end()) {
      out << fmt::format("  {:<24} {:>12}  {:>9}  (nothing measured: left out)\n", keys[r], "-", "-");
      continue;
    }
    out << fmt::format("  {:<24} {:>12.5g}  {:>9}  {:.2f}%\n", keys[r], d.best_ms[r],
                       fmt::format("config {}", s.select(mx.m.shapes[r]) + 1), d.slowdown[r] * 100);
  }
  out << "selector:\n";
  print_tree(out, s, 0, 0);
}

ojson distill_json(const ShapeSelector& s, const Matrix& mx, const search::Distillation& d,
                   const std::vector<std::string>& keys) {
  ojson columns = ojson::array(), ms = ojson::array();
  for (const auto& c : mx.columns) columns.push_back(c.key());
  for (const auto& row : mx.m.ms) {
    ojson r = ojson::array();
    for (const auto& v : row) r.push_back(v ? ojson(*v) : ojson(nullptr));
    ms.push_back(r);
  }
  return ojson{{"shapes", keys},          {"configs", columns},     {"ms", ms},
               {"best_ms", d.best_ms},    {"slowdown", d.slowdown}, {"uncovered", d.uncovered},
               {"selector", selector_json(s)}};
}

}  // namespace

int cmd_distill(const DistillArgs& a) {
  const KernelProblem p = KernelProblem::load(resolve_kernel(a.kernel));
  if (a.no_measure && a.gpu.empty())
    throw InputError("distill --no-measure: give --gpu MODEL (the GPU model of the stored measurements)");
  const fs::path path = a.db.empty() ? default_db_path() : fs::path(a.db);
  if (!fs::exists(path)) throw InputError(fmt::format("--db {}: no such file: tune a sweep first", path.string()));
  db::Store store = db::Store::open(path, /*create=*/true);
  const std::string model = a.gpu.empty() ? cuda::identify(a.device).model_key() : a.gpu;
  const std::vector<std::string> keys = distill_shapes(store, p, model, a);
  if (!a.no_measure) {
    const auto configs = candidates(store, p, model, keys, a.top_k);
    measure_cross(store, p, keys, configs, a);
  }
  const Matrix mx = read_matrix(store, p, model, keys);
  if (mx.columns.empty())
    throw InputError(fmt::format("distill: {} holds no cross measurements of {} on {}: run distill on that GPU "
                                 "(without --no-measure) first",
                                 path.string(), p.name(), model));
  const search::Distillation d = search::distill(mx.m, a.bound);
  ShapeSelector s;
  s.kernel = p.name();
  s.gpu_model = model;
  s.bound = a.bound;
  s.worst_slowdown = d.worst_slowdown;
  for (std::size_t r = 0; r < keys.size(); ++r)
    if (std::find(d.uncovered.begin(), d.uncovered.end(), r) == d.uncovered.end()) s.shapes.push_back(keys[r]);
  for (std::size_t k : d.kept) s.configs.push_back(mx.columns[k]);
  s.nodes = d.nodes;
  s.created_at = db::utc_now_iso();
  if (s.configs.empty()) throw InputError(fmt::format("distill: no configuration of {} succeeded at any shape", p.name()));
  store.set_selector(s);
  print_distillation(std::cout, s, mx, d, keys);
  std::cout << fmt::format("stored in {}; `cutune export --format wisdom --kernel {} --db {} -o FILE` carries it\n",
                           path.string(), p.name(), path.string());
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    if (!out) throw InputError(fmt::format("--json {}: cannot be written", a.json));
    out << distill_json(s, mx, d, keys).dump(2) << '\n';
  }
  return kOk;
}

}  // namespace cutune::cli
