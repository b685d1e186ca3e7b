#pragma once
// Python 3 expressions (the grammar of cutune/model/expression.hpp) parsed into a tree.
#include <string_view>

#include "expression_tree.hpp"

namespace cutune::detail {

/// The tree of text, names unresolved (every variable an Op::Name) and nothing folded.
/// Throws ExpressionError, a SyntaxError naming the column, on anything else, and on
/// nesting deep enough to threaten the stack.
ExprNode parse_tree(std::string_view text);

}  // namespace cutune::detail
