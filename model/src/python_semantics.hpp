#pragma once
// Python's semantics on Values, as the evaluator and the builtins use them: arithmetic
// (floor division and modulo round towards negative infinity, int ** negative int and /
// give floats, ZeroDivisionError, OverflowError where a 64-bit int would overflow),
// comparisons, membership and identity, subscripts and iteration. Errors are raised with
// fail() as Python names them; work is charged to the evaluation's budget.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cutune/model/value.hpp"
#include "evaluation_limits.hpp"
#include "expression_errors.hpp"
#include "expression_tree.hpp"
#include "utf8.hpp"

namespace cutune::detail {

/// bool is a subclass of int in Python: True + 1 == 2.
inline bool int_like(const Value& v) { return v.is_int() || v.is_bool(); }
inline std::int64_t int_of(const Value& v) {
  return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int();
}

/// OverflowError where Python's unbounded int would go beyond 64 bits; `what` names the
/// operation.
[[noreturn]] void int_overflow(const char* what);

/// CPython's float divmod: the remainder takes the divisor's sign; wx must not be 0.
void float_divmod(double vx, double wx, double& floordiv, double& mod);

/// a <op> b.
Value binary(BinOp op, const Value& a, const Value& b);
/// a <op> b for one link of a comparison chain (`in` tests a in b).
bool compare(CmpOp op, const Value& a, const Value& b);
/// obj[index] for a list or a string (negative indices count from the end).
Value subscript(const Value& obj, const Value& index);
/// list(v): a list as it is, the characters of a string, TypeError for anything else.
Value to_list(const Value& v);

/// Calls f(item) for each element of a list, or each character of a string.
template <typename F>
void for_each_item(const Value& v, F&& f) {
  if (v.is_list()) {
    for (const Value& item : v.as_list()) {
      charge(1);
      f(item);
    }
    return;
  }
  if (v.is_string()) {
    const std::string& s = v.as_string();
    for (std::size_t i = 0; i < s.size();) {
      charge(1);
      const std::size_t n = std::min(cp_length(static_cast<unsigned char>(s[i])), s.size() - i);
      f(Value(s.substr(i, n)));
      i += n;
    }
    return;
  }
  fail("TypeError: '" + v.type_name() + "' object is not iterable");
}

}  // namespace cutune::detail
