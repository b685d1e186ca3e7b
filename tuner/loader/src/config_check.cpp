#include "config_check.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cutune/model/errors.hpp"

namespace cutune::loader::detail {

Config checked_config(const KernelProblem& problem, const std::string& config_json, const std::string& origin) {
  const Space& space = problem.space();
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: kernel {}: {}; not compiled", origin, problem.name(), what));
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::parse_error&) {
    fail(fmt::format("configuration '{}' is not JSON", config_json.substr(0, 80)));
  }
  if (!j.is_object()) fail(fmt::format("configuration '{}' is not an object", config_json.substr(0, 80)));
  for (const auto& [name, value] : j.items())
    if (!space.has_parameter(name)) fail(fmt::format("parameter '{}' is not declared", name));
  Config config;
  for (const Parameter& p : space.parameters()) {
    auto it = j.find(p.name);
    if (it == j.end()) fail(fmt::format("parameter {} is missing", p.name));
    // Typed: a JSON bool only matches a declared bool, a string only a string, a number
    // only a number (so "128" or true never stand for 128).
    Value v;
    if (it->is_boolean()) v = it->get<bool>();
    else if (it->is_number_integer()) v = it->get<std::int64_t>();
    else if (it->is_number_float()) v = it->get<double>();
    else if (it->is_string()) v = it->get<std::string>();
    else fail(fmt::format("parameter {}: value {} is not declared", p.name, it->dump()));
    std::optional<std::uint32_t> index;
    for (std::size_t i = 0; i < p.values.size() && !index; ++i) {
      const Value& d = p.values[i];
      if (d.is_bool() != v.is_bool() || d.is_string() != v.is_string() || d.is_list()) continue;
      if (d == v) index = static_cast<std::uint32_t>(i);
    }
    if (!index) {
      std::string declared;
      for (const auto& d : p.values) declared += (declared.empty() ? "" : ", ") + d.str();
      fail(fmt::format("parameter {}: value {} is not declared (declared: {})", p.name, it->dump(), declared));
    }
    config.index.push_back(*index);
  }
  if (std::string r = space.violated_restriction(config); !r.empty())
    fail(fmt::format("configuration {} violates the restriction \"{}\"", space.key(config), r));
  return config;
}

}  // namespace cutune::loader::detail
