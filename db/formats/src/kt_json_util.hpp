#pragma once
// Small helpers shared by the Kernel Tuner format readers and writers.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cutune/formats/python_json.hpp"

namespace cutune::db::detail {

/// JSON equality as the formats need it: numbers by value (1 == 1.0, as in Python), NaN
/// equal to NaN, objects whatever their member order (Python dicts); otherwise strict
/// (true is not 1).
inline bool json_equal(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  if (a.is_number_float() && b.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  if (a.is_number() && b.is_number()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto o = b.find(it.key());
      if (o == b.end() || !json_equal(it.value(), *o)) return false;
    }
    return true;
  }
  return a == b;
}

/// A string as JSON writes it, for error messages: "128,4" -> "\"128,4\"".
inline std::string json_quoted(std::string_view s) {
  std::string out;
  append_python_json_string(out, s);
  return out;
}

}  // namespace cutune::db::detail
