#pragma once
// The two ways an expression fails, as ExpressionError: a syntax error while parsing, which
// names the text and the column, and a Python exception while evaluating ("TypeError: ...",
// as Python prints it), which Expression::evaluate prefixes with the text.
#include <cstddef>
#include <string>
#include <string_view>

namespace cutune::detail {

/// A Python exception during evaluation; msg is "Kind: what", as Python prints it.
[[noreturn]] void fail(const std::string& msg);

/// "cannot parse expression '<text>': SyntaxError at column <pos + 1>: <msg>".
[[noreturn]] void syntax_error(std::string_view text, std::size_t pos, const std::string& msg);

/// The text on one line (newlines and tabs as spaces): messages are one line.
std::string one_line(std::string_view text);

}  // namespace cutune::detail
