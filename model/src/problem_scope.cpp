#include "problem_scope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

namespace cutune::detail {

MapScope problem_scope(const ProblemInstance& inst, const Space* parameter_lists) {
  MapScope s;
  if (parameter_lists)
    for (const auto& p : parameter_lists->parameters()) s.values[p.name] = Value(p.values);
  for (const auto& [name, value] : inst.variables) s.values[name] = Value(value);
  ValueList ps;
  for (auto d : inst.problem_size) ps.push_back(Value(d));
  s.values["ProblemSize"] = Value(ps);
  return s;
}

bool is_int64_float(double d) {
  return std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0 &&
         d < 9223372036854775808.0;
}

std::string short_repr(const Value& v) {
  if (v.is_list()) {
    const ValueList& l = v.as_list();
    if (l.size() > 16 || std::any_of(l.begin(), l.end(), [](const Value& x) { return x.is_list(); }))
      return fmt::format("a list of {} values", l.size());
  }
  std::string r = v.repr();
  if (r.size() > 200) r = r.substr(0, 197) + "...";
  return r;
}

std::int64_t eval_int(const Loader& L, const Expression& e, const Scope& scope,
                      const std::string& field) {
  try {
    Value v = e.evaluate(scope);
    if (v.is_float() && !is_int64_float(v.as_float()))
      L.fail(field, fmt::format("\"{}\" is {}, not an integer", e.text(), v.str()));
    return v.to_int();
  } catch (const ExpressionError& ex) {
    L.fail(field, ex.what());
  } catch (const std::bad_variant_access&) {
    L.fail(field, fmt::format("\"{}\" is not a number", e.text()));
  } catch (const std::invalid_argument& ex) {
    L.fail(field, ex.what());
  }
}

std::int64_t eval_truncated(const Loader& L, const Expression& e, const Scope& scope, const std::string& field) {
  try {
    Value v = e.evaluate(scope);
    if (v.is_float()) {
      const double t = std::trunc(v.as_float());
      if (!is_int64_float(t)) L.fail(field, fmt::format("\"{}\" is {}, not an integer", e.text(), v.str()));
      return static_cast<std::int64_t>(t);
    }
  } catch (const ExpressionError& ex) {
    L.fail(field, ex.what());
  }
  return eval_int(L, e, scope, field);
}

}  // namespace cutune::detail
