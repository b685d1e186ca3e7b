#pragma once
// Tokens of a Python expression: numbers and strings (their values decoded), names
// (keywords included) and operators, each with its byte offset for error messages.
#include <cstdint>
#include <string_view>
#include <vector>

#include "cutune/model/value.hpp"

namespace cutune::detail {

enum class Tok : std::uint8_t { End, Number, String, Name, Op };

struct Token {
  Tok kind = Tok::End;
  std::uint32_t pos = 0;           // byte offset in the text
  std::string_view text;           // Name, Op: a view of the text
  Value value;                     // Number, String
  bool int_min_magnitude = false;  // the literal 9223372036854775808, valid only after unary -
};

/// Python's reserved words; a name that is one is a keyword, not a variable.
bool is_keyword(std::string_view s);

/// The tokens of text, ending with one of kind End (at the text's length, after trailing
/// blanks). Throws ExpressionError, a SyntaxError naming the column, on a character or
/// literal Python would not accept (or that cutune does not support: bytes, f-strings,
/// complex numbers, integers beyond 64 bits). The tokens view text: it must outlive them.
std::vector<Token> tokenize(std::string_view text);

}  // namespace cutune::detail
