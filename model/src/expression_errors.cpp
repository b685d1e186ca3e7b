#include "expression_errors.hpp"

#include "cutune/model/expression.hpp"

namespace cutune::detail {

void fail(const std::string& msg) { throw ExpressionError(msg); }

void syntax_error(std::string_view text, std::size_t pos, const std::string& msg) {
  throw ExpressionError("cannot parse expression '" + one_line(text) + "': SyntaxError at column " +
                        std::to_string(pos + 1) + ": " + msg);
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace cutune::detail
