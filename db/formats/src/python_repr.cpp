#include "cutune/formats/python_repr.hpp"

#include "cutune/model/value.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <system_error>

namespace cutune::db {

std::string python_float_repr(double x) {
  // The model already lays floats out as Python's repr does (restriction expressions
  // print them): one implementation for both.
  return cutune::python_float_repr(x);
}

namespace {

std::string to_python(const nlohmann::ordered_json& v, bool top_level_str) {
  using V = nlohmann::ordered_json::value_t;
  switch (v.type()) {
    case V::null:
      return "None";
    case V::boolean:
      return v.get<bool>() ? "True" : "False";
    case V::number_integer:
      return std::to_string(v.get<std::int64_t>());
    case V::number_unsigned:
      return std::to_string(v.get<std::uint64_t>());
    case V::number_float:
      return python_float_repr(v.get<double>());
    case V::string:
      return top_level_str ? v.get_ref<const std::string&>()
                           : python_string_repr(v.get_ref<const std::string&>());
    case V::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ", ";
        first = false;
        out += to_python(e, false);
      }
      return out + "]";
    }
    case V::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += python_string_repr(it.key());
        out += ": ";
        out += to_python(it.value(), false);
      }
      return out + "}";
    }
    case V::binary:
    case V::discarded:
      break;
  }
  throw std::invalid_argument("python_str: a binary or discarded JSON value has no Python form");
}

}  // namespace

std::string python_str(const nlohmann::ordered_json& v) { return to_python(v, true); }
std::string python_repr(const nlohmann::ordered_json& v) { return to_python(v, false); }

}  // namespace cutune::db
