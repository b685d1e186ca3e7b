#pragma once
// What several tests need of a space: its valid configurations, in the space's order.
#include <string>
#include <vector>

#include "cutune/model/space.hpp"

namespace cutune::testing {

inline std::vector<Config> valid_configs(const Space& space) {
  std::vector<Config> out;
  space.for_each_valid([&](const Config& c) {
    out.push_back(c);
    return true;
  });
  return out;
}

inline std::vector<std::string> valid_keys(const Space& space) {
  std::vector<std::string> out;
  for (const Config& c : valid_configs(space)) out.push_back(space.key(c));
  return out;
}

}  // namespace cutune::testing
