#include "cutune/model/configuration.hpp"

namespace cutune {

Configuration Configuration::from_key(const Space& space, std::string_view key) {
  return {space, space.parse_key(key)};
}

Configuration Configuration::from_assignments(const Space& space, std::string_view text) {
  return {space, space.parse_assignments(text)};
}

nlohmann::ordered_json Configuration::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : assignments()) {
    switch (v.kind()) {
      case Value::Kind::Bool: j[name] = v.as_bool(); break;
      case Value::Kind::Int: j[name] = v.as_int(); break;
      case Value::Kind::Float: j[name] = v.as_float(); break;
      default: j[name] = v.str(); break;
    }
  }
  return j;
}

}  // namespace cutune
