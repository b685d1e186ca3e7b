#pragma once
// Problem-level expressions (sizes, fills, geometry, metrics) evaluated against the names
// a problem provides, with failures reported as InputErrors naming the file and field.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "cutune/model/expression.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/value.hpp"
#include "problem_fields.hpp"

namespace cutune::detail {

// Names visible to problem-level expressions: problem variables, ProblemSize, and (for
// geometry and metrics) parameters and extra values.
class MapScope final : public Scope {
 public:
  std::map<std::string, Value, std::less<>> values;
  const Value* lookup(std::string_view name) const override {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

/// The problem variables and ProblemSize of an instance; with parameter_lists, also every
/// tuning parameter bound to its list of values: Kernel Tuner evaluates argument sizes so,
/// and "ProblemSize[0] + max(filter_width) - 1" then sizes a buffer for any configuration.
MapScope problem_scope(const ProblemInstance& inst, const Space* parameter_lists = nullptr);

/// True when the float is a whole number that int64 holds; casting any other is undefined.
bool is_int64_float(double d);

/// repr() for an error message, cut short: a value an expression built can be huge (a list
/// holding one big list many times over prints as terabytes).
std::string short_repr(const Value& v);

/// e as an integer; fails naming `field` when it fails or gives a non-integral number.
std::int64_t eval_int(const Loader& L, const Expression& e, const Scope& scope, const std::string& field);

/// Kernel Tuner's int(eval(divisor)): a float quotient is truncated, not refused.
std::int64_t eval_truncated(const Loader& L, const Expression& e, const Scope& scope, const std::string& field);

}  // namespace cutune::detail
