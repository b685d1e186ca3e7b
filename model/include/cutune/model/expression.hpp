#pragma once
// Python expressions as Kernel Tuner writes them in restrictions, T1 "Values", argument
// sizes and grid divisors: parsed once, evaluated many times against named values.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/value.hpp"

namespace cutune {

/// A parse or evaluation error; what() is one line naming the expression and the problem.
class ExpressionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Resolves free names during evaluation. Returns nullptr for an unknown name.
class Scope {
 public:
  virtual ~Scope() = default;
  virtual const Value* lookup(std::string_view name) const = 0;
};

namespace detail {
struct ExprNode;
}

/// An immutable parsed expression. Cheap to copy (shares the tree).
///
/// Grammar: Python 3 expressions: int/float/str/True/False/None literals, names, lists and
/// tuples, subscripts (`ProblemSize[0]`, negative indices, slices not required), calls of
/// the builtins range, len, min, max, abs, int, float, round, sum, list, str, bool, pow;
/// arithmetic + - * / // % ** with Python semantics (floor division and modulo round
/// towards negative infinity; ** is right-associative and binds tighter than unary minus;
/// int ** negative int gives a float; / always gives a float; division by zero is an
/// error); comparisons == != < <= > >= `in` `not in`, chained (`1 < x <= 8`); `and`/`or`
/// returning an operand as Python does, `not`; conditional `a if c else b`; list
/// comprehensions `[e for x in it if c]` (nested `for` allowed).
///
/// Hostile input fails with ExpressionError ("MemoryError: ..."), never a hang or a memory
/// blow-up: nesting is limited, sequences to 2**24 elements, and one evaluation (or the
/// constant folding of one parse) to 2**22 element operations (elements made or visited,
/// characters copied or compared).
class Expression {
 public:
  /// Parses text; throws ExpressionError naming the text and the position on failure.
  static Expression parse(std::string_view text);

  /// Evaluates; throws ExpressionError on an unknown name or a type error.
  Value evaluate(const Scope& scope) const;

  /// The free names the expression reads (not comprehension variables, not builtins that
  /// are called), in order of first appearance, without duplicates.
  const std::vector<std::string>& names() const { return names_; }

  const std::string& text() const { return text_; }

  /// The parsed tree, for the model's own passes over it (the space compiles restrictions
  /// from it); nullptr for a default-constructed expression.
  const detail::ExprNode* tree() const { return root_.get(); }

 private:
  std::string text_;
  std::shared_ptr<const detail::ExprNode> root_;
  std::vector<std::string> names_;
};

}  // namespace cutune
