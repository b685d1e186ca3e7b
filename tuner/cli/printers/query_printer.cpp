#include "query_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "cutune/model/status.hpp"

namespace cutune::cli {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kColumns = 12;
using Cells = std::array<std::string, kColumns>;
/// Columns of text, aligned left (numbers align right).
bool text_column(std::size_t c) { return c < 4 || c == 11; }

struct Row {
  Cells cells;
  std::string config;
};

// Registers per thread, local memory per thread (spills), shared memory per block (static
// plus dynamic) and theoretical occupancy: what Nsight Compute's launch statistics show. "-"
// where the winner's measurement kept none (imported, simulated, stored by older versions).
using Resources = std::array<std::string, 4>;
Resources resource_cells(const std::optional<KernelResources>& r) {
  if (!r) return {"-", "-", "-", "-"};
  return {fmt::format("{}", r->registers), fmt::format("{}", r->local_bytes), fmt::format("{}", r->shared_bytes()),
          r->occupancy ? fmt::format("{:.0f}%", *r->occupancy * 100.0) : "-"};
}

Row winner_row(const db::Winner& w) {
  const std::string objective =
      w.objective.is_energy() ? fmt::format("{:.3g} mJ", w.objective_value)
      : w.objective.is_time() ? w.objective.name()
                              : fmt::format("{} {:.6g} ({})", w.objective.name(), w.objective_value,
                                            w.objective.higher_is_better ? "max" : "min");
  // No default measured (an import, a simulation, a default that failed): "-", not 0.
  const bool has_default = w.default_ms > 0 && w.median_ms > 0;
  const Resources r = resource_cells(w.resources);
  return {{w.kernel, w.problem_key, gpu_label(w.gpu_model), objective, fmt::format("{:.4f}", w.median_ms),
           r[0], r[1], r[2], r[3],
           has_default ? fmt::format("{:.4f}", w.default_ms) : "-",
           has_default ? fmt::format("{:.3f}x", w.default_ms / w.median_ms) : "-", verdict_name(w.verdict)},
          w.config.to_json().dump()};
}

}  // namespace

json winners_json(const std::vector<db::Winner>& winners) {
  json arr = json::array();
  for (const auto& w : winners)
    arr.push_back(json{{"kernel", w.kernel}, {"problem", w.problem_key}, {"gpu", w.gpu_model},
                       {"config_key", w.config.key()}, {"config", w.config.to_json()},
                       {"median_ms", w.median_ms}, {"default_ms", w.default_ms},
                       {"objective", w.objective.name()}, {"objective_value", w.objective_value},
                       {"objective_higher_is_better", w.objective.higher_is_better},
                       {"verdict", verdict_name(w.verdict)}, {"finalists", db::finalists_array(w.finalists)},
                       {"run_id", w.run_id}, {"updated_at", w.updated_at},
                       {"resources", w.resources ? json(to_json(*w.resources)) : json(nullptr)}});
  return arr;
}

void print_winner_table(std::ostream& out, const std::vector<db::Winner>& winners) {
  // Columns as wide as their longest entry: a kernel or GPU name longer than a fixed width
  // pushed the rest of its row out of line.
  const Cells head{"kernel", "problem", "gpu",        "objective",  "median_ms", "regs",
                   "local_B", "smem_B",  "occupancy", "default_ms", "speedup",   "verdict"};
  std::vector<Row> rows;
  for (const auto& w : winners) rows.push_back(winner_row(w));
  std::array<std::size_t, kColumns> width{};
  for (std::size_t c = 0; c < width.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r.cells[c].size());
  }
  const auto print = [&](const Cells& cells, const std::string& config) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c)
      line += text_column(c) ? fmt::format("{:<{}}  ", cells[c], width[c])  // text left, numbers right
                             : fmt::format("{:>{}}  ", cells[c], width[c]);
    out << line << config << '\n';
  };
  print(head, "configuration");
  for (const auto& r : rows) print(r.cells, r.config);
}

std::string gpu_label(const std::string& model_key) {
  constexpr std::string_view unknown_arch = "/sm_00";
  if (model_key.size() > unknown_arch.size() && model_key.ends_with(unknown_arch))
    return model_key.substr(0, model_key.size() - unknown_arch.size());
  return model_key;
}

}  // namespace cutune::cli
