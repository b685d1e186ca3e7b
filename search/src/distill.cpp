#include "cutune/search/distill.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

namespace cutune::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Medians equal to the printed digits must tie: 1.05 * 1.0 is 1.0500000000000000444.
constexpr double kRelEps = 1e-9;

struct Work {
  const CrossMatrix& m;
  double bound;
  std::vector<double> best;

  /// The cell over the row's best (1 = the best); +inf when not measured.
  double ratio(std::size_t shape, std::size_t column) const {
    const auto& cell = m.ms[shape][column];
    return cell && best[shape] > 0 ? *cell / best[shape] : kInf;
  }
  bool within(double r) const { return r <= (1.0 + bound) * (1.0 + kRelEps); }
};

std::vector<std::size_t> greedy_cover(const Work& w, const std::vector<std::size_t>& shapes) {
  std::set<std::size_t> open(shapes.begin(), shapes.end());
  std::vector<std::size_t> kept;
  std::vector<double> log_sum(w.m.configs(), 0.0);
  for (std::size_t c = 0; c < w.m.configs(); ++c)
    for (std::size_t s : shapes) log_sum[c] += std::min(std::log(w.ratio(s, c)), 50.0);  // unmeasured: a large penalty
  while (!open.empty()) {
    std::size_t pick = 0, pick_count = 0;
    for (std::size_t c = 0; c < w.m.configs(); ++c) {
      std::size_t count = 0;
      for (std::size_t s : open) count += w.within(w.ratio(s, c));
      if (count > pick_count || (count == pick_count && count > 0 && log_sum[c] < log_sum[pick])) {
        pick = c;
        pick_count = count;
      }
    }
    if (pick_count == 0) break;  // cannot happen: a row's best cell is within any bound
    kept.push_back(pick);
    for (auto it = open.begin(); it != open.end();) it = w.within(w.ratio(*it, pick)) ? open.erase(it) : std::next(it);
  }
  return kept;
}

struct Leaf {
  double worst = kInf, sum = kInf;
  std::size_t slot = 0;  ///< index into kept
};

Leaf best_leaf(const Work& w, const std::vector<std::size_t>& kept, const std::vector<std::size_t>& shapes) {
  Leaf best;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    double worst = 0, sum = 0;
    for (std::size_t s : shapes) {
      const double r = w.ratio(s, kept[k]);
      worst = std::max(worst, r);
      sum += r;
    }
    if (std::tie(worst, sum) < std::tie(best.worst, best.sum)) best = {worst, sum, k};
  }
  return best;
}

std::int64_t threshold_between(std::int64_t a, std::int64_t b) {
  // Geometric mean for sizes (what a doubling sweep needs), the midpoint otherwise; always
  // in [a, b - 1] so that a goes low and b high.
  double t = a > 0 && b > 0 ? std::sqrt(static_cast<double>(a) * static_cast<double>(b)) : (static_cast<double>(a) + static_cast<double>(b)) / 2;
  auto v = static_cast<std::int64_t>(std::floor(t));
  return std::clamp(v, a, b - 1);
}

struct Builder {
  const Work& w;
  const std::vector<std::size_t>& kept;
  std::vector<std::string> variables;
  std::vector<SelectorNode> nodes;

  std::size_t build(const std::vector<std::size_t>& shapes) {
    const std::size_t at = nodes.size();
    nodes.emplace_back();
    const Leaf leaf = best_leaf(w, kept, shapes);
    if (!w.within(leaf.worst)) {
      struct Split {
        double worst = kInf, sum = kInf;
        std::string variable;
        std::int64_t at_most = 0;
      } best;
      for (const auto& v : variables) {
        std::vector<std::int64_t> values;
        for (std::size_t s : shapes) values.push_back(w.m.shapes[s].at(v));
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
        for (std::size_t i = 0; i + 1 < values.size(); ++i) {
          const std::int64_t t = threshold_between(values[i], values[i + 1]);
          std::vector<std::size_t> low, high;
          for (std::size_t s : shapes) (w.m.shapes[s].at(v) <= t ? low : high).push_back(s);
          const Leaf l = best_leaf(w, kept, low), h = best_leaf(w, kept, high);
          const double worst = std::max(l.worst, h.worst), sum = l.sum + h.sum;
          if (std::tie(worst, sum) < std::tie(best.worst, best.sum)) best = {worst, sum, v, t};
        }
      }
      if (!best.variable.empty()) {
        std::vector<std::size_t> low, high;
        for (std::size_t s : shapes) (w.m.shapes[s].at(best.variable) <= best.at_most ? low : high).push_back(s);
        nodes[at].variable = best.variable;
        nodes[at].at_most = best.at_most;
        const std::size_t l = build(low);
        const std::size_t h = build(high);
        nodes[at].low = l;
        nodes[at].high = h;
        return at;
      }
    }
    nodes[at].config = leaf.slot;
    return at;
  }
};

/// The variables the shapes differ in, in name order (a variable every shape has alike
/// cannot split anything).
std::vector<std::string> varying_variables(const CrossMatrix& m, const std::vector<std::size_t>& shapes) {
  std::vector<std::string> out;
  if (shapes.empty()) return out;
  for (const auto& [name, value] : m.shapes[shapes.front()]) {
    bool varies = false;
    for (std::size_t s : shapes) {
      const auto it = m.shapes[s].find(name);
      if (it == m.shapes[s].end()) throw std::invalid_argument("distill: shapes with different variables (" + name + ")");
      varies |= it->second != value;
    }
    if (varies) out.push_back(name);
  }
  return out;
}

}  // namespace

Distillation distill(const CrossMatrix& m, double bound) {
  if (!(bound >= 0)) throw std::invalid_argument("distill: the bound must be 0 or more");
  if (m.ms.size() != m.shapes.size()) throw std::invalid_argument("distill: one row per shape");
  for (const auto& row : m.ms)
    if (row.size() != m.configs()) throw std::invalid_argument("distill: rows of different lengths");
  Work w{m, bound, std::vector<double>(m.shapes.size(), 0.0)};
  Distillation d;
  std::vector<std::size_t> covered;
  for (std::size_t s = 0; s < m.shapes.size(); ++s) {
    double best = kInf;
    for (const auto& cell : m.ms[s])
      if (cell && *cell > 0) best = std::min(best, *cell);
    if (std::isfinite(best)) {
      w.best[s] = best;
      covered.push_back(s);
    } else {
      d.uncovered.push_back(s);
    }
  }
  d.best_ms = w.best;
  d.slowdown.assign(m.shapes.size(), 0.0);
  if (covered.empty()) return d;
  d.kept = greedy_cover(w, covered);
  Builder b{w, d.kept, varying_variables(m, covered), {}};
  b.build(covered);
  d.nodes = std::move(b.nodes);
  ShapeSelector tree;
  tree.nodes = d.nodes;
  tree.configs.resize(d.kept.size());
  for (std::size_t s : covered) {
    d.slowdown[s] = w.ratio(s, d.kept[tree.select(m.shapes[s])]) - 1.0;
    d.worst_slowdown = std::max(d.worst_slowdown, d.slowdown[s]);
  }
  return d;
}

}  // namespace cutune::search
