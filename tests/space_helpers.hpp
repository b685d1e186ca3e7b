#pragma once
// What several tests need of a space: its valid configurations, in the space's order, and
// the small spaces the strategy tests share.
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/space.hpp"

namespace cutune::testing {

/// A parameter of the integers 0..n-1 (default 0).
inline Parameter range_param(std::string name, int n) {
  ValueList values;
  for (int i = 0; i < n; ++i) values.emplace_back(i);
  return Parameter{std::move(name), values, values.front()};
}

/// The strategies' convex toy space: 1100 valid of 2400 (a + b <= 9 couples two axes,
/// c != 4 punches a hole).
inline std::vector<Parameter> bowl_parameters() {
  return {range_param("a", 10), range_param("b", 10), range_param("c", 6), range_param("d", 4)};
}
inline Space bowl_space() { return Space(bowl_parameters(), {"a + b <= 9", "c != 4"}); }

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
