#pragma once
// Number text as Python reads it, for literals in an expression and for int() and float()
// of a string: bases and prefixes, underscores between digits, inf and nan.
#include <cstdint>
#include <string_view>

namespace cutune::detail {

/// The value of a digit or letter in bases up to 36; 99 for any other character.
int digit_value(char c);

/// Parses Python int literal text (as int() accepts it) in the given base (0: by prefix);
/// false on error. Sets overflow when the digits are valid but too large for int64.
bool parse_int_text(std::string_view s, int base, std::int64_t& out, bool& overflow);

/// Parses decimal float text (digits with single underscores between digits, optional
/// fraction and exponent, or inf/infinity/nan); false when it is not a valid literal.
/// Beyond double's range it gives inf or 0.0, as Python does.
bool parse_float_text(std::string_view s, double& out);

}  // namespace cutune::detail
