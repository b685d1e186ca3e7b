#include "cutune/db/python_repr.hpp"

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

/// Python's repr of a str (Objects/unicodeobject.c, unicode_repr) for the ASCII range;
/// bytes >= 0x80 (UTF-8) are copied, as Python copies printable non-ASCII characters.
std::string quote_python(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

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
                           : quote_python(v.get_ref<const std::string&>());
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
        out += quote_python(it.key());
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
