// Tests of the enumeration's compiled restrictions (numbers-only programs, integer code,
// tables of results): on real and benchmark spaces and on restrictions that reach Python's
// corner cases, the valid configurations, their order and the errors are those of the walk
// that evaluates every restriction with the tree evaluator (the enumeration before the
// restrictions were compiled), written out here as the oracle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/expression.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/space.hpp"
#include "space_helpers.hpp"
#include "test_paths.hpp"

using cutune::Config;
using cutune::Expression;
using cutune::InputError;
using cutune::KernelProblem;
using cutune::Parameter;
using cutune::Space;
using cutune::Value;
using cutune::ValueList;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

Parameter param(std::string name, ValueList values) {
  Value def = values.front();
  return Parameter{std::move(name), std::move(values), def};
}

ValueList ints(std::initializer_list<std::int64_t> v) {
  ValueList out;
  for (auto i : v) out.emplace_back(i);
  return out;
}

ValueList range(std::int64_t from, std::int64_t to) {  // [from, to)
  ValueList out;
  for (std::int64_t i = from; i < to; ++i) out.emplace_back(i);
  return out;
}

class AssignedScope final : public cutune::Scope {
 public:
  AssignedScope(const Space& s, const Config& c, std::size_t assigned, const std::map<std::string, Value>& constants)
      : s_(s), c_(c), assigned_(assigned), constants_(constants) {}
  const Value* lookup(std::string_view name) const override {
    for (std::size_t i = 0; i < assigned_; ++i)
      if (s_.parameters()[i].name == name) return &s_.parameters()[i].values[c_.index[i]];
    auto it = constants_.find(std::string(name));
    return it == constants_.end() ? nullptr : &it->second;
  }

 private:
  const Space& s_;
  const Config& c_;
  std::size_t assigned_;
  const std::map<std::string, Value>& constants_;
};

// The oracle: depth first in declared order, each restriction (then the thread-block
// limit) evaluated by the tree evaluator once its last parameter is set. Throws what the
// tree evaluator throws.
std::vector<Config> tree_walk(const Space& s, std::size_t limit = std::numeric_limits<std::size_t>::max(),
                              const std::map<std::string, Value>& constants = {}) {
  const auto& ps = s.parameters();
  std::vector<std::pair<Expression, std::size_t>> checks;
  for (const auto& r : s.restrictions()) checks.emplace_back(r.expression, r.check_at);
  if (!s.block_limit().empty()) {
    Expression e = Expression::parse(s.block_limit());
    std::size_t at = 0;
    for (const auto& n : e.names()) at = std::max(at, s.index_of(n));
    checks.emplace_back(e, at);
  }
  std::vector<Config> out;
  Config c;
  c.index.assign(ps.size(), 0);
  const auto ok = [&](std::size_t depth) {
    AssignedScope scope(s, c, depth + 1, constants);
    for (const auto& [e, at] : checks)
      if (at == depth && !e.evaluate(scope).truthy()) return false;
    return true;
  };
  std::size_t depth = 0;
  bool descend = true;
  while (out.size() < limit) {
    if (descend && ok(depth)) {
      if (depth + 1 == ps.size()) {
        out.push_back(c);
        descend = false;
        continue;
      }
      c.index[++depth] = 0;
      continue;
    }
    descend = true;
    while (++c.index[depth] == ps[depth].values.size()) {
      if (depth == 0) return out;
      --depth;
    }
  }
  return out;
}


// The enumeration, the first valid configuration, next_valid from an invalid point, and
// is_valid all agree with the oracle.
void check_against_tree_walk(const Space& s, const std::map<std::string, Value>& constants = {}) {
  const std::vector<Config> expected = tree_walk(s, std::numeric_limits<std::size_t>::max(), constants);
  const std::vector<Config> got = cutune::testing::valid_configs(s);
  CHECK(got.size() == expected.size());
  CHECK(got == expected);
  CHECK(s.count_valid() == expected.size());
  Config first;
  CHECK(s.next_valid(first) == !expected.empty());
  if (!expected.empty()) {
    CHECK(first == expected.front());
    CHECK(s.is_valid(expected.back()));
  }
  // next_valid one by one over the first few.
  Config c;
  for (std::size_t i = 0; i < std::min<std::size_t>(expected.size(), 50); ++i) {
    REQUIRE(s.next_valid(c));
    CHECK(c == expected[i]);
  }
}

fs::path bat() { return cutune::testing::material("data/real_kernels/bat"); }

}  // namespace

TEST_CASE("space enumeration: BAT's problem files enumerate as the tree evaluator walks them",
          "[space][enumeration][real_kernels][material]") {
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(bat())) {
    const std::string name = e.path().filename().string();
    if (name.size() < 10 || name.substr(name.size() - 10) != "-CAFF.json") continue;
    INFO(e.path().string());
    KernelProblem p = KernelProblem::load(e.path());
    check_against_tree_walk(p.space());
    ++files;
  }
  CHECK(files >= 7);
}

TEST_CASE("space enumeration: BAT's GEMM and hotspot have the valid sets Kernel Tuner 1.5 builds",
          "[space][enumeration][real_kernels][material]") {
  // Kernel Tuner 1.5.0's Searchspace on the same ConfigurationSpace, with the block size
  // names of LocalSize (studies/bench_space_construction.py checks the sets key by key).
  KernelProblem gemm = KernelProblem::load(bat() / "GEMM" / "GEMM-CAFF.json");
  CHECK(gemm.space().cartesian_size() == 20736);
  CHECK(gemm.space().count_valid() == 10312);
  KernelProblem hotspot = KernelProblem::load(bat() / "hotspot" / "hotspot-CAFF.json");
  CHECK(hotspot.space().cartesian_size() == 22200000);
  CHECK(hotspot.space().count_valid() == 349853);
  Config first;
  REQUIRE(hotspot.space().next_valid(first));
  CHECK(hotspot.space().key(first) == "1,32,1,1,1,1,10,1,0,0,1024,49152,102400");
}

TEST_CASE("space enumeration: the benchmark hub's CLBlast GEMM and hotspot spaces", "[space][enumeration]") {
  // kernels/gemm_milo.json and kernels/hotspot_milo.json of AutoTuningAssociation/
  // benchmark_hub; 116,928 and 82,984 valid is what Kernel Tuner 1.5.0 builds from them.
  Space gemm({param("GEMMK", ints({0})), param("MWG", ints({16, 32, 64, 128})), param("NWG", ints({16, 32, 64, 128})),
              param("KWG", ints({16, 32})), param("MDIMC", ints({8, 16, 32})), param("NDIMC", ints({8, 16, 32})),
              param("MDIMA", ints({8, 16, 32})), param("NDIMB", ints({8, 16, 32})), param("KWI", ints({2})),
              param("VWM", ints({1, 2, 4, 8})), param("VWN", ints({1, 2, 4, 8})), param("STRM", ints({0, 1})),
              param("STRN", ints({0, 1})), param("SA", ints({0, 1})), param("SB", ints({0, 1})),
              param("KREG", ints({1})), param("PRECISION", ints({32}))},
             {"KWG % KWI == 0", "MWG % (MDIMC * VWM) == 0", "NWG % (NDIMC * VWN) == 0", "MWG % (MDIMA * VWM) == 0",
              "NWG % (NDIMB * VWN) == 0", "KWG % ((MDIMC * NDIMC)/MDIMA) == 0", "KWG % ((MDIMC * NDIMC)/NDIMB) == 0",
              "not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)"});
  CHECK(gemm.cartesian_size() == 663552);
  CHECK(gemm.count_valid() == 116928);
  check_against_tree_walk(gemm);

  ValueList bx = ints({1, 2, 4, 8, 16});
  for (std::int64_t i = 32; i <= 1024; i += 32) bx.emplace_back(i);
  Space hotspot({param("grid_width", ints({4096})), param("grid_height", ints({4096})), param("block_size_x", bx),
                 param("block_size_y", ints({1, 2, 4, 8, 16, 32})), param("tile_size_x", range(1, 11)),
                 param("tile_size_y", range(1, 11)), param("temporal_tiling_factor", range(1, 11)),
                 param("max_tfactor", ints({10})), param("loop_unroll_factor_t", range(1, 11)),
                 param("sh_power", ints({0, 1}))},
                {"block_size_x*block_size_y>= 32", "temporal_tiling_factor % loop_unroll_factor_t == 0",
                 "block_size_x*block_size_y <= 1024",
                 "(block_size_x*tile_size_x+ temporal_tiling_factor * 2) * (block_size_y*tile_size_y+ "
                 "temporal_tiling_factor * 2) * (2+sh_power) * 4 <= 49152"});
  hotspot.set_block_limit({Expression::parse("block_size_x"), Expression::parse("block_size_y")}, 1024);
  CHECK(hotspot.cartesian_size() == 4440000);
  CHECK(hotspot.count_valid() == 82984);
  check_against_tree_walk(hotspot);
}

TEST_CASE("space enumeration: a space of 1.3e9 points with 12 restrictions", "[space][enumeration]") {
  // studies/bench_space_construction.py's synthetic_1e9; Kernel Tuner 1.5.0 finds the same
  // 1,558,334 valid configurations.
  Space s({param("block_size_x", ints({16, 32, 64, 128, 256, 512, 1024})),
           param("block_size_y", ints({1, 2, 4, 8, 16, 32})), param("tile_size_x", range(1, 33)),
           param("tile_size_y", range(1, 33)), param("vector_width", ints({1, 2, 4, 8})),
           param("unroll", ints({1, 2, 4, 8, 16})), param("stages", range(1, 9)), param("split_k", ints({1, 2, 4, 8})),
           param("use_smem", ints({0, 1})), param("padding", ints({0, 1, 2, 4})), param("swizzle", ints({0, 1})),
           param("cache_policy", ints({0, 1, 2}))},
          {"block_size_x * block_size_y >= 64", "block_size_x * block_size_y <= 1024",
           "tile_size_x % vector_width == 0", "tile_size_x * tile_size_y <= 32",
           "block_size_x * tile_size_x * block_size_y * tile_size_y <= 32768", "tile_size_y % unroll == 0 or unroll == 1",
           "unroll <= stages * 4", "split_k == 1 or (stages >= 2 and use_smem == 1)",
           "use_smem == 0 or stages * (block_size_x * tile_size_x + padding) * tile_size_y * 4 <= 49152",
           "padding == 0 or use_smem == 1", "swizzle == 0 or (use_smem == 1 and block_size_y >= 2)",
           "cache_policy == 0 or vector_width >= 4"});
  s.set_block_limit({Expression::parse("block_size_x"), Expression::parse("block_size_y")}, 1024);
  CHECK(s.cartesian_size() == 1321205760);
  CHECK(s.count_valid() == 1558334);
  // The first configurations and order, against the oracle's first 2000.
  const auto expected = tree_walk(s, 2000);
  std::vector<Config> got;
  s.for_each_valid([&](const Config& c) {
    got.push_back(c);
    return got.size() < expected.size();
  });
  CHECK(got == expected);
  CHECK(s.key(expected.front()) == "16,4,1,1,1,1,1,1,0,0,0,0");
}

TEST_CASE("space enumeration: compiled restrictions keep Python's semantics", "[space][enumeration][python]") {
  const ValueList small = ints({-7, -3, -1, 0, 1, 2, 3, 5, 8});
  // Each restriction reaches a corner of Python's arithmetic for some of the 9 x 9 x 9 points.
  const std::vector<std::string> restrictions = {
      "a // 2 == -2",                         // floor division rounds towards -inf
      "a % 3 == 2",                           // the remainder takes the divisor's sign
      "a % -3 == -1",                         //
      "a / 2 == -3.5",                        // true division gives a float
      "a / 2 > 1 and a / 3 < 2",              // compared as floats
      "(a + 0.5) % 2 == 1.5",                 // float modulo
      "(a + 0.5) // 2 == -4.0",               // float floor division
      "a < b <= c",                           // chained comparison
      "a < 0 < b != c",                       //
      "b in [1, 2, 3] and c not in [0, 5]",  // membership in a constant list
      "(a or b) * 2 == 4",                    // or returns an operand
      "(a and b) == 3",                       // and returns an operand
      "not a",                                //
      "(b if a > 0 else c) == 5",             // conditional
      "min(a, b, c) == -1 and max(a, b) == 3",  // min/max of ints
      "abs(a) == 3",                          //
      "int(a / 3) == -1",                     // int() truncates towards zero
      "round(a / 2) == 0",                    // round half to even
      "-a == 7",                              //
      "~a == -4",                             //
      "a ** 2 == 9",                          //
      "2 ** a == 0.125",                      // int ** negative int gives a float
      "a * 1.5 >= b",                         // mixed int and float
      "a == 3.0",                             // int == float
      "a << 1 == -14",                        // shifts through the tree semantics
      "(a > 0) + (b > 0) == 2",               // bools add as ints
      "a * b - c == 0 or a - b * c == 40",    //
  };
  for (const auto& r : restrictions) {
    INFO(r);
    Space s({param("a", small), param("b", small), param("c", small)}, {r});
    check_against_tree_walk(s);
    CHECK(s.count_valid() > 0);
    CHECK(s.count_valid() < 9 * 9 * 9);
  }
  // Float and bool parameters.
  Space f({param("x", ValueList{Value(0.5), Value(1.0), Value(-2.5), Value(3.0)}),
           param("flag", ValueList{Value(false), Value(true)}), param("n", ints({1, 2, 3}))},
          {"x * n > 1", "flag or x < 0", "(flag + n) % 2 == 0", "x // 1 == x or n == 3"});
  check_against_tree_walk(f);
  CHECK(f.count_valid() == 4);
  // A problem constant read by a restriction.
  const std::map<std::string, Value> constants{{"N", Value(100)}};
  Space k({param("a", range(1, 20))}, {"a * a <= N and a % (N // 50) == 0"}, constants);
  check_against_tree_walk(k, constants);
  CHECK(k.count_valid() == 5);
}

TEST_CASE("space enumeration: Python's errors surface as before, and every time", "[space][enumeration][python]") {
  // Division by zero for b == 2, reached only after a > 0: the error names the restriction.
  Space s({param("a", ints({0, 1})), param("b", ints({1, 2, 3}))}, {"a == 0 or a // (b - 2) >= 0"});
  CHECK_THROWS_WITH(s.count_valid(), Contains("restriction \"a == 0 or a // (b - 2) >= 0\"") &&
                                         Contains("ZeroDivisionError: integer division or modulo by zero"));
  CHECK_THROWS_AS(tree_walk(s), cutune::ExpressionError);
  // Again: an error is never remembered as a result.
  CHECK_THROWS_WITH(s.count_valid(), Contains("ZeroDivisionError"));
  Config c = s.parse_assignments("a=0,b=3");
  CHECK(s.is_valid(c));
  CHECK_THROWS_WITH(s.violated_restriction(s.parse_assignments("a=1,b=2")), Contains("ZeroDivisionError"));
  // 64-bit overflow is cutune's OverflowError, from the compiled code as from the tree.
  Space o({param("a", ints({1, 4000000000})), param("b", ints({1, 4000000000}))}, {"a * b * a > 0"});
  CHECK_THROWS_WITH(o.count_valid(), Contains("OverflowError"));
  // Strings are left to the tree evaluator.
  Space t({param("alg", ValueList{Value("alg_1"), Value("alg_2")}), param("n", ints({1, 2}))},
          {"alg == 'alg_2' or n == 1", "len(alg) + n > 5"});
  check_against_tree_walk(t);
  CHECK(t.count_valid() == 3);
}

TEST_CASE("space enumeration: copies share compiled restrictions safely", "[space][enumeration]") {
  Space s({param("a", range(0, 50)), param("b", range(0, 50))}, {"a % 7 == b % 5", "a + b < 60"});
  Space copy = s;
  copy.set_block_limit({Expression::parse("a")}, 10);  // recompiled for the copy only
  CHECK(copy.count_valid() < s.count_valid());
  check_against_tree_walk(s);
  check_against_tree_walk(copy);
  Space moved = std::move(copy);
  check_against_tree_walk(moved);
}
