#include "python_number_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace cutune::detail {

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

bool parse_int_text(std::string_view s, int base, std::int64_t& out, bool& overflow) {
  overflow = false;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  const auto has_prefix = [&](char lower) {
    return s.size() >= 2 && s[0] == '0' && (s[1] == lower || s[1] == lower - 32);
  };
  if (base == 0) {
    if (has_prefix('x'))
      base = 16;
    else if (has_prefix('o'))
      base = 8;
    else if (has_prefix('b'))
      base = 2;
    else
      base = 10;
    if (base == 10 && s.size() > 1 && s[0] == '0') {
      // Python: "0_0" and "00" are fine, "012" is not.
      if (s.find_first_not_of("0_") != std::string_view::npos) return false;
    }
  }
  if ((base == 16 && has_prefix('x')) || (base == 8 && has_prefix('o')) ||
      (base == 2 && has_prefix('b'))) {
    s.remove_prefix(2);
    if (!s.empty() && s.front() == '_') s.remove_prefix(1);
  }
  if (s.empty()) return false;
  __int128 value = 0;
  bool prev_digit = false;
  for (const char c : s) {
    if (c == '_') {
      if (!prev_digit) return false;
      prev_digit = false;
      continue;
    }
    const int d = digit_value(c);
    if (d >= base) return false;
    prev_digit = true;
    if (!overflow) {
      value = value * base + d;
      if (value > static_cast<__int128>(std::numeric_limits<std::int64_t>::max()) + 1)
        overflow = true;
    }
  }
  if (!prev_digit) return false;
  if (negative) value = -value;
  if (value > std::numeric_limits<std::int64_t>::max() ||
      value < std::numeric_limits<std::int64_t>::min()) {
    overflow = true;
  }
  if (!overflow) out = static_cast<std::int64_t>(value);
  return true;
}

bool parse_float_text(std::string_view s, double& out) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  std::string lower;
  for (const char c : s) lower += static_cast<char>((c >= 'A' && c <= 'Z') ? c + 32 : c);
  if (lower == "inf" || lower == "infinity") {
    out = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (lower == "nan") {
    out = std::copysign(std::numeric_limits<double>::quiet_NaN(), negative ? -1.0 : 1.0);
    return true;
  }
  std::string clean;
  bool any_digit = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      const bool ok = i > 0 && i + 1 < s.size() &&
                      std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                      std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!ok) return false;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      any_digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
      return false;
    }
    clean += c;
  }
  if (!any_digit) return false;
  double value = 0;
  const auto res = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (res.ptr != clean.data() + clean.size()) return false;
  if (res.ec == std::errc::result_out_of_range) {
    // Overflow gives inf and underflow gives 0.0, as in Python. Decide by the decimal
    // exponent of the first significant digit.
    const auto epos = clean.find_first_of("eE");
    std::string_view mant = std::string_view(clean).substr(0, epos);
    long exp10 = 0;
    if (epos != std::string::npos) {
      std::string_view e = std::string_view(clean).substr(epos + 1);
      bool eneg = false;
      if (!e.empty() && (e.front() == '+' || e.front() == '-')) {
        eneg = e.front() == '-';
        e.remove_prefix(1);
      }
      std::from_chars(e.data(), e.data() + e.size(), exp10);
      if (eneg) exp10 = -exp10;
    }
    const auto dot = mant.find('.');
    const std::string_view int_part = mant.substr(0, dot);
    const auto first_nz = int_part.find_first_not_of('0');
    long lead = 0;
    if (first_nz != std::string_view::npos) {
      lead = static_cast<long>(int_part.size() - first_nz) - 1;
    } else if (dot != std::string_view::npos) {
      const std::string_view frac = mant.substr(dot + 1);
      lead = -static_cast<long>(frac.find_first_not_of('0')) - 1;
    }
    value = (lead + exp10 > 0) ? HUGE_VAL : 0.0;
  } else if (res.ec != std::errc()) {
    return false;
  }
  out = negative ? -value : value;
  return true;
}

}  // namespace cutune::detail
