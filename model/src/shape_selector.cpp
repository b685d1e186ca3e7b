#include "cutune/model/shape_selector.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

#include "cutune/model/errors.hpp"

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

nlohmann::ordered_json selector_json(const ShapeSelector& s) {
  using ojson = nlohmann::ordered_json;
  ojson configs = ojson::array(), tree = ojson::array();
  for (const auto& c : s.configs) configs.push_back(c.to_json());
  for (const auto& n : s.nodes)
    tree.push_back(n.leaf() ? ojson{{"config", n.config}}
                            : ojson{{"variable", n.variable}, {"at_most", n.at_most}, {"low", n.low}, {"high", n.high}});
  return ojson{{"kernel", s.kernel},   {"gpu_model", s.gpu_model},         {"objective", s.objective},
               {"bound", s.bound},     {"worst_slowdown", s.worst_slowdown}, {"shapes", s.shapes},
               {"created_at", s.created_at}, {"configs", configs},             {"tree", tree}};
}

namespace {

struct Fields {
  const std::string& where;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}.{}: {}", where, field, what));
  }
  const nlohmann::ordered_json& at(const nlohmann::ordered_json& j, const std::string& key, const std::string& path) const {
    const auto it = j.find(key);
    if (it == j.end()) fail(path, "missing");
    return *it;
  }
  std::string text(const nlohmann::ordered_json& j, const std::string& key) const {
    const auto& v = at(j, key, key);
    if (!v.is_string()) fail(key, "must be a string");
    return v.get<std::string>();
  }
  double number(const nlohmann::ordered_json& j, const std::string& key) const {
    const auto& v = at(j, key, key);
    if (!v.is_number()) fail(key, "must be a number");
    return v.get<double>();
  }
  template <class Int>
  Int integer(const nlohmann::ordered_json& j, const std::string& key, const std::string& path) const {
    const auto& v = at(j, key, path);
    if (!v.is_number_integer() || (std::is_unsigned_v<Int> && v.get<std::int64_t>() < 0))
      fail(path, "must be a whole number");
    return v.get<Int>();
  }
};

}  // namespace

ShapeSelector selector_from_json(const nlohmann::ordered_json& j, const std::string& where) {
  const Fields f{where};
  if (!j.is_object()) throw InputError(fmt::format("{}: must be an object", where));
  ShapeSelector s;
  s.kernel = f.text(j, "kernel");
  s.gpu_model = f.text(j, "gpu_model");
  s.objective = j.contains("objective") ? f.text(j, "objective") : "time";
  s.bound = f.number(j, "bound");
  s.worst_slowdown = j.contains("worst_slowdown") ? f.number(j, "worst_slowdown") : 0.0;
  s.created_at = j.contains("created_at") ? f.text(j, "created_at") : "";
  if (const auto it = j.find("shapes"); it != j.end()) {
    if (!it->is_array()) f.fail("shapes", "must be a list");
    for (const auto& k : *it) {
      if (!k.is_string()) f.fail("shapes", "must be a list of problem keys");
      s.shapes.push_back(k.get<std::string>());
    }
  }
  const auto& configs = f.at(j, "configs", "configs");
  if (!configs.is_array() || configs.empty()) f.fail("configs", "must be a non-empty list");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!configs[i].is_object()) f.fail(fmt::format("configs[{}]", i), "must be an object");
    s.configs.emplace_back("", parameter_values(configs[i]));
  }
  const auto& tree = f.at(j, "tree", "tree");
  if (!tree.is_array()) f.fail("tree", "must be a list");
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const std::string at = fmt::format("tree[{}]", i);
    if (!tree[i].is_object()) f.fail(at, "must be an object");
    SelectorNode n;
    if (tree[i].contains("variable")) {
      const auto& v = tree[i]["variable"];
      if (!v.is_string() || v.get<std::string>().empty()) f.fail(at + ".variable", "must be a variable's name");
      n.variable = v.get<std::string>();
      n.at_most = f.integer<std::int64_t>(tree[i], "at_most", at + ".at_most");
      n.low = f.integer<std::size_t>(tree[i], "low", at + ".low");
      n.high = f.integer<std::size_t>(tree[i], "high", at + ".high");
    } else {
      n.config = f.integer<std::size_t>(tree[i], "config", at + ".config");
    }
    s.nodes.push_back(std::move(n));
  }
  if (const std::string e = s.check_tree(); !e.empty()) {
    std::string why = e;
    if (why.rfind("nodes", 0) == 0) why = "tree" + why.substr(5);
    throw InputError(fmt::format("{}.{}", where, why));
  }
  return s;
}

}  // namespace cutune
