#pragma once
// The builtins an expression may call (range, len, min, max, abs, int, float, round, sum,
// list, tuple, str, bool, pow, any, all), with Python's arguments, results and errors.
#include <cstddef>
#include <string_view>

#include "cutune/model/value.hpp"
#include "expression_tree.hpp"

namespace cutune::detail {

struct BuiltinInfo {
  const char* name;
  Builtin fn;
  std::size_t min_args;
  std::size_t max_args;  ///< kManyArgs: no limit (min, max)
};

inline constexpr std::size_t kManyArgs = 1000000;

/// The builtin of that name; nullptr when there is none.
const BuiltinInfo* find_builtin(std::string_view name);

/// Calls fn with args[0..n); the parser has checked n against the builtin's arity.
Value call_builtin(Builtin fn, const Value* args, std::size_t n);

}  // namespace cutune::detail
