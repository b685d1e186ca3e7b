// Fuzz target: cutune's Python-expression parser and evaluator.
// Any text must either parse and evaluate, or fail with ExpressionError; a crash, undefined
// behaviour, another exception, a hang or a memory blow-up is a finding. Built as a
// libFuzzer binary (fuzz_expression, clang, -DCUTUNE_FUZZ=ON) and as the corpus
// regression test (fuzz_regression_expression, every build). See README.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "cutune/model/errors.hpp"
#include "cutune/model/expression.hpp"
#include "cutune/model/value.hpp"

namespace {

using cutune::Value;
using cutune::ValueList;

// Names as restrictions, sizes and metrics see them: parameters, problem variables,
// ProblemSize, and values of every kind, including the int64 extremes.
class FuzzScope final : public cutune::Scope {
 public:
  const Value* lookup(std::string_view name) const override {
    for (const auto& [n, v] : values_)
      if (n == name) return &v;
    return nullptr;
  }

 private:
  const std::pair<std::string_view, Value> values_[12] = {
      {"block_size_x", Value(256)},
      {"tile_size_y", Value(4)},
      {"n", Value(std::int64_t{268435456})},
      {"ProblemSize", Value(ValueList{Value(4096), Value(2)})},
      {"time_s", Value(1.5e-3)},
      {"alg", Value("alg_2")},
      {"flag", Value(true)},
      {"none", Value()},
      {"nested", Value(ValueList{Value(1), Value(ValueList{Value(2.5), Value("x")}), Value()})},
      {"big", Value(std::numeric_limits<std::int64_t>::max())},
      {"small", Value(std::numeric_limits<std::int64_t>::min())},
      {"uni", Value("h\xc3\xa9llo \xe2\x82\xac")},
  };
};

class NoNames final : public cutune::Scope {
 public:
  const Value* lookup(std::string_view) const override { return nullptr; }
};

[[noreturn]] void finding(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "fuzz_expression: %s\n  first:  %s\n  second: %s\n", what, a.c_str(),
               b.c_str());
  std::abort();
}

// True when printing v stays small. The evaluator bounds what it builds, not the printed
// size of a list that holds one list many times over (Python shares them the same way).
bool printable(const Value& v, std::int64_t& budget) {
  budget -= v.is_string() ? static_cast<std::int64_t>(v.as_string().size()) + 1 : 1;
  if (budget < 0) return false;
  if (v.is_list())
    for (const Value& item : v.as_list())
      if (!printable(item, budget)) return false;
  return true;
}
bool printable(const Value& v) {
  std::int64_t budget = std::int64_t{1} << 22;
  return printable(v, budget);
}

// Exercises a result the way callers use it (printing, truthiness, equality, numbers).
void use(const Value& v) {
  (void)v.truthy();
  (void)v.type_name();
  if (!printable(v)) return;
  const std::string s = v.str();
  const std::string r = v.repr();
  if (!(v == v) && !(v.is_float() || v.is_list())) finding("value not equal to itself", r, r);
  try {
    (void)v.to_double();
  } catch (const cutune::ExpressionError&) {
  }
  try {
    (void)v.to_int();
  } catch (const cutune::ExpressionError&) {
  }
}

// Oracle: Python's repr of a value reads back as an equal value (when it is short and holds
// no float that repr writes as a name: inf, nan).
void check_round_trip(const Value& v) {
  std::int64_t budget = 4096;
  if (!printable(v, budget)) return;
  const std::string r = v.repr();
  if (r.size() > 4096 || r.find("inf") != std::string::npos ||
      r.find("nan") != std::string::npos)
    return;
  Value back;
  try {
    back = cutune::Expression::parse(r).evaluate(NoNames());
  } catch (const cutune::ExpressionError& e) {
    finding("repr() does not parse back", r, e.what());
  }
  if (!(back == v) || back.repr() != r) finding("repr() reads back as another value", r, back.repr());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Expressions are one line of a JSON file; longer inputs only make slow cases longer.
  if (size > 4096) return -1;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cutune::Expression e;
  try {
    e = cutune::Expression::parse(text);
  } catch (const cutune::ExpressionError&) {
    return 0;
  }
  (void)e.names();
  const FuzzScope scope;
  for (int pass = 0; pass < 2; ++pass) {
    try {
      const Value v = pass == 0 ? e.evaluate(NoNames()) : e.evaluate(scope);
      use(v);
      if (pass == 1) {
        // Evaluation is deterministic: a second run gives the same value.
        const Value again = e.evaluate(scope);
        if (printable(v) && again.repr() != v.repr())
          finding("two evaluations differ", v.repr(), again.repr());
      }
      check_round_trip(v);
    } catch (const cutune::ExpressionError&) {
    } catch (const cutune::InputError&) {
    }
  }
  return 0;
}
