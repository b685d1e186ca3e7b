#pragma once
// Results as tests write them: a configuration from its key and the JSON object the store keeps.
#include <nlohmann/json.hpp>
#include <string>

#include "cutune/model/result.hpp"

namespace cutune::testing {

/// A configuration read without a space: `key` and the values of the JSON object `json`.
inline ResultConfig config_of(const std::string& key, const std::string& json) {
  return {key, parameter_values(nlohmann::ordered_json::parse(json))};
}

}  // namespace cutune::testing
