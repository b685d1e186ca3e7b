#pragma once
// Evaluation of a parsed tree against a Scope (free names) and a frame of comprehension
// variables.
#include "cutune/model/expression.hpp"
#include "expression_tree.hpp"

namespace cutune::detail {

struct Frame {
  const Scope& scope;
  Value* locals;  ///< one slot per comprehension variable (ExprNode::slot)
};

/// The value of n; ExpressionError ("TypeError: ...", without the expression text) on
/// failure. The caller provides the work budget (WorkBudget).
Value eval(const ExprNode& n, Frame& f);

}  // namespace cutune::detail
