#include "cutune/model/shape_selector.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cutune {
namespace {

bool goes_low(const SelectorNode& n, const std::map<std::string, std::int64_t>& variables) {
  const auto it = variables.find(n.variable);
  return it == variables.end() || it->second <= n.at_most;
}

}  // namespace

std::size_t ShapeSelector::select(const std::map<std::string, std::int64_t>& variables) const {
  std::size_t at = 0;
  for (std::size_t steps = 0; steps <= nodes.size(); ++steps) {
    if (at >= nodes.size()) throw std::logic_error(fmt::format("selector: node {} out of range", at));
    const SelectorNode& n = nodes[at];
    if (n.leaf()) {
      if (n.config >= configs.size()) throw std::logic_error("selector: a leaf names no configuration");
      return n.config;
    }
    at = goes_low(n, variables) ? n.low : n.high;
  }
  throw std::logic_error("selector: the tree has a cycle");
}

std::string ShapeSelector::path(const std::map<std::string, std::int64_t>& variables) const {
  std::string out;
  for (std::size_t at = 0, steps = 0; at < nodes.size() && !nodes[at].leaf() && steps <= nodes.size(); ++steps) {
    const SelectorNode& n = nodes[at];
    const bool low = goes_low(n, variables);
    out += fmt::format("{}{} {} {}", out.empty() ? "" : " and ", n.variable, low ? "<=" : ">", n.at_most);
    at = low ? n.low : n.high;
  }
  return out.empty() ? "always" : out;
}

std::string ShapeSelector::check_tree() const {
  if (nodes.empty()) return "nodes: empty";
  std::vector<int> reached(nodes.size(), 0);
  reached[0] = 1;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const SelectorNode& n = nodes[i];
    if (n.leaf()) {
      if (n.config >= configs.size())
        return fmt::format("nodes[{}].config: {} is not one of the {} configurations", i, n.config, configs.size());
      continue;
    }
    for (const auto& [field, child] : {std::pair{"low", n.low}, std::pair{"high", n.high}}) {
      // Children come after their parent, so a tree written in this order has no cycle.
      if (child >= nodes.size() || child <= i) return fmt::format("nodes[{}].{}: {} is not a later node", i, field, child);
      if (++reached[child] > 1) return fmt::format("nodes[{}].{}: node {} is reached twice", i, field, child);
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!reached[i]) return fmt::format("nodes[{}]: not reached from the root", i);
  return "";
}

}  // namespace cutune
