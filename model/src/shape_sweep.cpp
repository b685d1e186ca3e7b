#include "cutune/model/shape_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cutune/model/errors.hpp"
#include "cutune/model/expression.hpp"
#include "problem_scope.hpp"

namespace cutune {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::int64_t integer(const std::string& item, const std::string& text) {
  Value v;
  try {
    detail::MapScope none;
    v = Expression::parse(text).evaluate(none);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("--sweep: {}: '{}' is not an integer expression ({})", item, trim(text), e.what()));
  }
  if (!v.is_int()) throw InputError(fmt::format("--sweep: {}: '{}' is not an integer", item, trim(text)));
  return v.as_int();
}

/// One variable's values: how many, and how to make them (made only once the grid's size is
/// known to be allowed).
struct Axis {
  std::string name, item;
  std::vector<std::int64_t> list;  ///< a list
  std::int64_t lo = 0, hi = 0, step = 2;
  bool range = false, geometric = true;

  std::uint64_t count() const {
    if (!range) return list.size();
    if (!geometric) return static_cast<std::uint64_t>((hi - lo) / step) + 1;
    std::uint64_t n = 1;
    for (__int128 v = lo; v * step <= hi; v *= step) ++n;
    return n;
  }
  std::vector<std::int64_t> values() const {
    if (!range) return list;
    std::vector<std::int64_t> out;
    for (__int128 v = lo; v <= hi; v = geometric ? v * step : v + step) out.push_back(static_cast<std::int64_t>(v));
    return out;
  }
};

Axis parse_axis(const std::string& item_text, const std::vector<ProblemVariable>& variables) {
  Axis a;
  a.item = trim(item_text);
  const auto eq = a.item.find('=');
  if (eq == std::string::npos) throw InputError(fmt::format("--sweep: '{}' is not name=values", a.item));
  a.name = trim(a.item.substr(0, eq));
  const std::string spec = trim(a.item.substr(eq + 1));
  const auto var = std::find_if(variables.begin(), variables.end(), [&](const auto& v) { return v.name == a.name; });
  if (var == variables.end()) {
    std::string known;
    for (const auto& v : variables) known += (known.empty() ? "" : ", ") + v.name;
    throw InputError(fmt::format("--sweep: '{}' is not a problem variable (known: {})", a.name,
                                 known.empty() ? "none" : known));
  }
  if (spec.empty()) throw InputError(fmt::format("--sweep: {}: no values", a.item));
  const auto check = [&](std::int64_t v) {
    if (v < var->min_value || v > var->max_value)
      throw InputError(fmt::format("--sweep: {}: {}={} is outside [{}, {}]", a.item, a.name, v, var->min_value,
                                   var->max_value));
  };
  if (const auto dots = spec.find(".."); dots != std::string::npos) {
    a.range = true;
    std::string hi_text = spec.substr(dots + 2);
    if (const auto colon = hi_text.find(':'); colon != std::string::npos) {
      const std::string step = trim(hi_text.substr(colon + 1));
      hi_text = hi_text.substr(0, colon);
      if (step.empty() || (step[0] != '*' && step[0] != '+'))
        throw InputError(fmt::format("--sweep: {}: step '{}' must be *FACTOR or +INCREMENT", a.item, step));
      a.geometric = step[0] == '*';
      a.step = integer(a.item, step.substr(1));
      if (a.geometric ? a.step < 2 : a.step < 1)
        throw InputError(fmt::format("--sweep: {}: step '{}' does not grow (a factor of at least 2, or an "
                                     "increment of at least 1)",
                                     a.item, step));
    }
    a.lo = integer(a.item, spec.substr(0, dots));
    a.hi = integer(a.item, hi_text);
    check(a.lo);
    check(a.hi);
    if (a.lo > a.hi) throw InputError(fmt::format("--sweep: {}: {} is above {}", a.item, a.lo, a.hi));
    if (a.geometric && a.lo < 1)
      throw InputError(fmt::format("--sweep: {}: a doubling range starts at 1 or more (give :+INCREMENT)", a.item));
    return a;
  }
  for (const auto& v : split(spec, ',')) {
    if (trim(v).empty()) throw InputError(fmt::format("--sweep: {}: an empty value in the list", a.item));
    a.list.push_back(integer(a.item, v));
    check(a.list.back());
  }
  std::sort(a.list.begin(), a.list.end());
  a.list.erase(std::unique(a.list.begin(), a.list.end()), a.list.end());
  return a;
}

}  // namespace

std::vector<SweepShape> parse_sweep(const std::string& text, const std::vector<ProblemVariable>& variables,
                                    bool allow_large) {
  if (trim(text).empty()) throw InputError("--sweep: empty (give e.g. n=2**10..2**28)");
  std::vector<Axis> axes;
  for (const auto& item : split(text, ';')) {
    if (trim(item).empty()) throw InputError(fmt::format("--sweep {}: an empty item between ';'", text));
    axes.push_back(parse_axis(item, variables));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i)
      if (axes[i].name == axes.back().name)
        throw InputError(fmt::format("--sweep: {} is given twice: give it once", axes.back().name));
  }
  std::uint64_t total = 1;
  for (const auto& a : axes) {
    const std::uint64_t n = a.count();
    total = total > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(n, 1) ? kLargeSweep + 1 : total * n;
  }
  if (total > kLargeSweep && !allow_large)
    throw InputError(fmt::format("--sweep {}: {} shapes, more than {} (add --yes to tune them all)", text,
                                 total > kLargeSweep * 1000000 ? std::string("over 10^10") : std::to_string(total),
                                 kLargeSweep));
  std::vector<SweepShape> shapes{SweepShape{}};
  for (const auto& a : axes) {
    std::vector<SweepShape> next;
    const auto values = a.values();
    for (const auto& s : shapes)
      for (std::int64_t v : values) {
        next.push_back(s);
        next.back()[a.name] = v;
      }
    shapes = std::move(next);
  }
  return shapes;
}

std::string sweep_shape_text(const SweepShape& shape) { return variables_key(shape); }

}  // namespace cutune
