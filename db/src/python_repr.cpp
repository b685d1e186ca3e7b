#include "cutune/db/python_repr.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <system_error>

namespace cutune::db {

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";

  // std::to_chars without a precision gives the shortest digits that round-trip, the
  // same digits as Python's repr (both are "shortest, correctly rounded"); only the
  // layout differs, so take the digits and the exponent and lay them out as Python does
  // (Python/pystrtod.c, format_float_short with mode 'r' and Py_DTSF_ADD_DOT_0).
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x,
                                 std::chars_format::scientific);
  if (res.ec != std::errc()) throw std::logic_error("python_float_repr: to_chars failed");
  const std::string_view sci(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));

  std::string out;
  std::size_t i = 0;
  if (sci[i] == '-') {
    out += '-';
    ++i;
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (std::size_t k = i; k < e_pos; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  // Python strips trailing zeros of the shortest digits ("1e+16", not "1.0e+16").
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();

  const int n = static_cast<int>(digits.size());
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (n > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    out += exponent < 0 ? '-' : '+';
    const int abs_exp = exponent < 0 ? -exponent : exponent;
    if (abs_exp < 10) out += '0';
    out += std::to_string(abs_exp);
    return out;
  }
  if (exponent < 0) {  // 0.000ddd
    out += "0.";
    out.append(static_cast<std::size_t>(-exponent - 1), '0');
    out += digits;
    return out;
  }
  const int int_digits = exponent + 1;
  if (n <= int_digits) {  // ddd000.0
    out += digits;
    out.append(static_cast<std::size_t>(int_digits - n), '0');
    out += ".0";
  } else {  // ddd.ddd
    out.append(digits, 0, static_cast<std::size_t>(int_digits));
    out += '.';
    out.append(digits, static_cast<std::size_t>(int_digits), std::string::npos);
  }
  return out;
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
