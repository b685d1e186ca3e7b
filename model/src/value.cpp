// Value: Python's bool/int/float/str/list with Python's printing and equality rules.
#include "cutune/model/value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "cutune/model/expression.hpp"

namespace cutune {

namespace {

// bool and int as one integer, as Python treats bool as a subclass of int.
std::int64_t int_like(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }

// Python compares int and float exactly (2**53 + 1 != 2.0**53), so the int is not rounded
// to a double. Returns <0, 0, >0; d must not be NaN.
int compare_int_float(std::int64_t i, double d) {
  if (d >= 9223372036854775808.0) return -1;  // 2**63: above every int64
  if (d < -9223372036854775808.0) return 1;
  const double t = std::trunc(d);
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  const double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}


}  // namespace

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout rules (float_repr_style 'short'):
  // scientific when the decimal exponent is < -4 or >= 16, else positional with ".0".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  std::string out;
  if (s.front() == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  const auto epos = s.find('e');
  std::string digits;
  for (const char c : s.substr(0, epos)) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string_view exp_text = s.substr(epos + 1);
  bool exp_negative = false;
  if (!exp_text.empty() && (exp_text.front() == '+' || exp_text.front() == '-')) {
    exp_negative = exp_text.front() == '-';
    exp_text.remove_prefix(1);
  }
  int exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  if (exp_negative) exp = -exp;

  const auto ndigits = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    const int abs_exp = exp < 0 ? -exp : exp;
    if (abs_exp < 10) out += '0';
    out += std::to_string(abs_exp);
  } else if (exp >= 0) {
    if (ndigits <= exp + 1) {
      out += digits;
      out.append(static_cast<std::size_t>(exp + 1 - ndigits), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(exp + 1));
      out += '.';
      out.append(digits, static_cast<std::size_t>(exp + 1), std::string::npos);
    }
  } else {
    out += "0.";
    out.append(static_cast<std::size_t>(-exp - 1), '0');
    out += digits;
  }
  return out;
}

double Value::to_double() const {
  switch (kind()) {
    case Kind::Bool:
      return as_bool() ? 1.0 : 0.0;
    case Kind::Int:
      return static_cast<double>(as_int());
    case Kind::Float:
      return as_float();
    default:
      break;
  }
  throw ExpressionError("TypeError: must be real number, not " + type_name());
}

std::int64_t Value::to_int() const {
  switch (kind()) {
    case Kind::Bool:
    case Kind::Int:
      return int_like(*this);
    case Kind::Float: {
      const double d = as_float();
      if (std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0 &&
          d < 9223372036854775808.0) {
        return static_cast<std::int64_t>(d);
      }
      throw ExpressionError("TypeError: expected an integer, got float " + python_float_repr(d));
    }
    default:
      break;
  }
  throw ExpressionError("TypeError: expected an integer, got " + type_name());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::None:
      return false;
    case Kind::Bool:
      return as_bool();
    case Kind::Int:
      return as_int() != 0;
    case Kind::Float:
      return as_float() != 0.0;  // NaN is truthy, as in Python
    case Kind::String:
      return !as_string().empty();
    case Kind::List:
      return !as_list().empty();
  }
  return false;
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return as_bool() ? "True" : "False";
    case Kind::Int:
      return std::to_string(as_int());
    case Kind::Float:
      return python_float_repr(as_float());
    case Kind::String:
      return as_string();
    case Kind::List: {
      std::string out = "[";
      bool first = true;
      for (const Value& v : as_list()) {
        if (!first) out += ", ";
        first = false;
        out += v.repr();
      }
      out += ']';
      return out;
    }
  }
  return {};
}

std::string python_string_repr(const std::string& s) {
  // Python picks double quotes only when that avoids escaping a single quote.
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out += quote;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += ch;
    }
  }
  out += quote;
  return out;
}

std::string Value::repr() const { return is_string() ? python_string_repr(as_string()) : str(); }

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return "list";
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() && b.is_float()) return a.as_float() == b.as_float();
    if (a.is_float() || b.is_float()) {
      const double d = a.is_float() ? a.as_float() : b.as_float();
      const std::int64_t i = a.is_float() ? int_like(b) : int_like(a);
      return !std::isnan(d) && compare_int_float(i, d) == 0;
    }
    return int_like(a) == int_like(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::None:
      return true;
    case Value::Kind::String:
      return a.as_string() == b.as_string();
    case Value::Kind::List: {
      const ValueList& x = a.as_list();
      const ValueList& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] == y[i])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cutune
