// Tests of the configuration space: lazy enumeration with pruning, keys, assignments.
// Every enumeration test checks the enumerator against a brute-force walk of the full
// Cartesian product that asks violated_restriction() about each configuration.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/space.hpp"

using cutune::Config;
using cutune::InputError;
using cutune::Parameter;
using cutune::Space;
using cutune::Value;
using cutune::ValueList;
using Catch::Matchers::Contains;

namespace {

Parameter param(std::string name, ValueList values) {
  Value def = values.front();
  return Parameter{std::move(name), std::move(values), def};
}

Parameter param(std::string name, ValueList values, Value def) {
  return Parameter{std::move(name), std::move(values), std::move(def)};
}

// All valid configurations, by walking the Cartesian product as an odometer (last index
// fastest, i.e. lexicographic order) and asking violated_restriction() about each one.
std::vector<Config> brute_force(const Space& s) {
  std::vector<Config> out;
  const auto& ps = s.parameters();
  if (ps.empty()) return out;
  Config c;
  c.index.assign(ps.size(), 0);
  while (true) {
    if (s.violated_restriction(c).empty()) out.push_back(c);
    std::size_t d = ps.size();
    while (d > 0) {
      --d;
      if (++c.index[d] < ps[d].values.size()) break;
      c.index[d] = 0;
      if (d == 0) return out;
    }
  }
}

std::vector<Config> via_for_each(const Space& s) {
  std::vector<Config> out;
  s.for_each_valid([&](const Config& c) {
    out.push_back(c);
    return true;
  });
  return out;
}

std::vector<Config> via_next_valid(const Space& s) {
  std::vector<Config> out;
  Config c;
  while (s.next_valid(c)) {
    out.push_back(c);
    REQUIRE(out.size() <= s.cartesian_size());  // never loops forever
  }
  return out;
}

// The checks every enumeration case shares; returns the number of valid configurations.
std::uint64_t check_enumeration(const Space& s) {
  const std::vector<Config> expected = brute_force(s);
  const std::vector<Config> visited = via_for_each(s);
  CHECK(s.count_valid() == expected.size());
  CHECK(visited == expected);
  // Strictly increasing: lexicographic in index order, no repeats.
  for (std::size_t i = 1; i < visited.size(); ++i) CHECK(visited[i - 1] < visited[i]);
  for (const auto& c : visited) {
    CHECK(c.index.size() == s.parameters().size());
    CHECK(s.is_valid(c));
  }
  CHECK(via_next_valid(s) == expected);

  // At the end next_valid clears the configuration and returns false; a cleared (empty)
  // configuration means "start from the first" again.
  Config c;
  while (s.next_valid(c)) {
  }
  CHECK(c.index.empty());
  if (expected.empty()) {
    CHECK_FALSE(s.next_valid(c));
    CHECK(c.index.empty());
  } else {
    REQUIRE(s.next_valid(c));
    CHECK(c == expected.front());
  }
  return expected.size();
}

}  // namespace

TEST_CASE("space: enumeration equals a brute-force walk of the Cartesian product", "[space]") {
  SECTION("no restrictions at all") {
    Space s({param("a", {1, 2, 3}), param("b", {10, 20}), param("c", {"x", "y"})}, {});
    CHECK(s.cartesian_size() == 12);
    CHECK(check_enumeration(s) == 12);
    // Lexicographic: the last parameter varies fastest.
    auto v = via_for_each(s);
    CHECK(v[0].index == std::vector<std::uint32_t>{0, 0, 0});
    CHECK(v[1].index == std::vector<std::uint32_t>{0, 0, 1});
    CHECK(v[2].index == std::vector<std::uint32_t>{0, 1, 0});
    CHECK(v[11].index == std::vector<std::uint32_t>{2, 1, 1});
  }
  SECTION("a restriction over one parameter (the middle one)") {
    Space s({param("a", {1, 2, 3}), param("b", {10, 20, 30}), param("c", {0, 1}),
             param("d", {5, 6})},
            {"b != 20"});
    CHECK(check_enumeration(s) == 3 * 2 * 2 * 2);
  }
  SECTION("restrictions over several parameters") {
    Space s({param("a", {1, 2, 3, 4}), param("b", {8, 16, 32}), param("c", {"x", "y", "z"}),
             param("d", {0, 1})},
            {"a * b <= 32", "c == 'x' or a > 1", "d == 0 or c != 'z'"});
    const auto n = check_enumeration(s);
    CHECK(n > 0);
    CHECK(n < s.cartesian_size());
  }
  SECTION("a restriction naming a later parameter before an earlier one") {
    Space s({param("d", {1, 2, 3, 4, 5}), param("a", {1, 2, 3}), param("e", {0, 1, 2})},
            {"e % 2 == d % 2", "a <= d"});
    // Checked once the deepest parameter it reads is set, whatever the order of names.
    CHECK(s.restrictions()[0].check_at == 2);
    CHECK(s.restrictions()[1].check_at == 1);
    CHECK(check_enumeration(s) > 0);
  }
  SECTION("a restriction over a constant passed in `constants`") {
    std::map<std::string, Value> constants{{"n", Value(100)}, {"mode", Value("fast")}};
    Space s({param("a", {16, 32, 64, 128}), param("b", {1, 2, 4}), param("c", {true, false})},
            {"a * b <= n", "mode == 'fast' or c"}, constants);
    // a*b <= 100: (16,1..4)=3, (32,1 2)=2, (64,1)=1 -> 6, times 2 values of c.
    CHECK(check_enumeration(s) == 12);
  }
  SECTION("a restriction over constants only") {
    std::map<std::string, Value> constants{{"n", Value(5)}};
    Space yes({param("a", {1, 2}), param("b", {3, 4, 5})}, {"n > 3"}, constants);
    CHECK(check_enumeration(yes) == 6);
    Space no({param("a", {1, 2}), param("b", {3, 4, 5})}, {"n > 10"}, constants);
    CHECK(check_enumeration(no) == 0);
  }
  SECTION("chained comparisons") {
    Space s({param("a", {0, 1, 2, 3, 4}), param("b", {1, 2, 4, 8}), param("c", {1, 3, 5})},
            {"1 <= a < b <= 4", "0 < c < 5 != b"});
    // a < b <= 4 with 1 <= a: (1,2),(1,4),(2,4),(3,4) = 4; c in {1,3}; 5 != b always -> 8.
    CHECK(check_enumeration(s) == 8);
  }
  SECTION("`in` and `not in`") {
    Space s({param("a", {1, 2, 3, 4, 5, 6}), param("b", {"alg_1", "alg_2", "alg_3"}),
             param("c", {0.5, 1.0, 2.45})},
            {"a in [2, 3, 5]", "b not in ('alg_2', 'alg_9')", "c in [x * 0.5 for x in range(4)]"});
    // 3 values of a, 2 of b, c in {0.5, 1.0} -> 12.
    CHECK(check_enumeration(s) == 12);
  }
  SECTION("a restriction that prunes at the first parameter") {
    Space s({param("a", {1, 2, 3, 4, 5, 6}), param("b", {1, 2, 3, 4, 5}),
             param("c", {1, 2, 3, 4}), param("d", {1, 2})},
            {"a == 4", "b + c > 6"});
    // b + c > 6: (3,4),(4,3),(4,4),(5,2),(5,3),(5,4) = 6, times 2 values of d.
    CHECK(check_enumeration(s) == 12);
    auto v = via_for_each(s);
    for (const auto& c : v) CHECK(s.value(c, 0) == Value(4));
  }
  SECTION("restrictions that reject everything") {
    Space s({param("a", {1, 2, 3}), param("b", {1, 2}), param("c", {7, 8, 9})},
            {"a + b + c < 0"});
    CHECK(check_enumeration(s) == 0);
    Space t({param("a", {1, 2, 3}), param("b", {1, 2}), param("c", {7, 8, 9})},
            {"a > 1", "a < 2"});
    CHECK(check_enumeration(t) == 0);
  }
  SECTION("truthiness of non-bool restriction results, floats and bools") {
    Space s({param("x", {0, 1, 2, 3}), param("f", {0.5, 1.5, 2.5}), param("flag", {false, true}),
             param("s", {"", "a"})},
            {"x % 2", "f * 2 > 2 or flag", "s"});
    // x in {1,3}; (f,flag): 0.5 only with True, 1.5 and 2.5 with both -> 5; s == 'a' -> 10.
    CHECK(check_enumeration(s) == 10);
  }
  SECTION("a single parameter") {
    Space s({param("a", {1, 2, 3, 4, 5})}, {"a % 2 == 1"});
    CHECK(check_enumeration(s) == 3);
  }
}

TEST_CASE("space: for_each_valid stops when visit returns false", "[space]") {
  Space s({param("a", {1, 2, 3, 4}), param("b", {1, 2, 3})}, {"a != 2"});
  const auto all = brute_force(s);
  REQUIRE(all.size() == 9);
  std::vector<Config> seen;
  s.for_each_valid([&](const Config& c) {
    seen.push_back(c);
    return seen.size() < 4;
  });
  REQUIRE(seen.size() == 4);
  CHECK(std::vector<Config>(all.begin(), all.begin() + 4) == seen);

  int calls = 0;
  s.for_each_valid([&](const Config&) {
    ++calls;
    return false;
  });
  CHECK(calls == 1);
}

TEST_CASE("space: next_valid resumes from any valid configuration", "[space]") {
  Space s({param("a", {1, 2, 3}), param("b", {1, 2, 3}), param("c", {1, 2})}, {"a != b"});
  const auto all = brute_force(s);
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    Config c = all[i];
    REQUIRE(s.next_valid(c));
    CHECK(c == all[i + 1]);
  }
  Config last = all.back();
  CHECK_FALSE(s.next_valid(last));
  CHECK(last.index.empty());
}

TEST_CASE("space: next_valid from an invalid configuration moves to the next valid one",
          "[space]") {
  // "Advances config to the next valid configuration in the same order as for_each_valid":
  // from any configuration of the Cartesian product, valid or not, that is the smallest
  // valid configuration greater than it.
  Space s({param("a", {1, 2, 3}), param("b", {1, 2, 3}), param("c", {1, 2})},
          {"a != 1", "a != b"});
  const auto valid = brute_force(s);
  Config c;
  c.index.assign(3, 0);
  while (true) {
    Config next = c;
    const bool more = s.next_valid(next);
    auto it = std::upper_bound(valid.begin(), valid.end(), c);
    INFO("from " << s.key(c));
    if (it == valid.end()) {
      CHECK_FALSE(more);
      CHECK(next.index.empty());
    } else {
      CHECK(more);
      CHECK(next == *it);
      CHECK(s.is_valid(next));
    }
    std::size_t d = 3;
    while (d > 0) {
      --d;
      if (++c.index[d] < s.parameters()[d].values.size()) break;
      c.index[d] = 0;
    }
    if (c.index == std::vector<std::uint32_t>{0, 0, 0}) break;
  }
}

TEST_CASE("space: enumeration prunes instead of walking the Cartesian product", "[space]") {
  // 8 parameters x 10 values = 10^8 configurations. Without pruning these would take
  // minutes; with restrictions checked as soon as their last parameter is set, they take
  // microseconds.
  std::vector<Parameter> ps;
  for (int i = 0; i < 8; ++i) {
    ValueList v;
    for (int j = 0; j < 10; ++j) v.emplace_back(j);
    ps.push_back(param("p" + std::to_string(i), v));
  }
  SECTION("a restriction on the first parameter rejects every value") {
    Space s(ps, {"p0 > 100", "p7 >= 0"});
    CHECK(s.cartesian_size() == 100000000ULL);
    CHECK(s.count_valid() == 0);
    Config c;
    CHECK_FALSE(s.next_valid(c));
  }
  SECTION("one value of the first parameter, a small rest") {
    Space s(ps, {"p0 == 3", "p1 <= 1", "p2 <= 1", "p3 == p2", "p4 == 0", "p5 < 3",
                 "p6 == p5", "p7 % 5 == 0"});
    // 1 * 2 * 2 * 1 * 1 * 3 * 1 * 2
    CHECK(s.count_valid() == 24);
    auto v = via_for_each(s);
    REQUIRE(v.size() == 24);
    CHECK(s.key(v.front()) == "3,0,0,0,0,0,0,0");
    CHECK(s.key(v.back()) == "3,1,1,1,0,2,2,5");
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1] < v[i]);
  }
}

TEST_CASE("space: a restriction that fails to evaluate is an InputError", "[space]") {
  Space s({param("a", {0, 1, 2}), param("b", {1, 2})}, {"b / a > 0"});
  CHECK_THROWS_AS(s.count_valid(), InputError);
  CHECK_THROWS_WITH(s.count_valid(), Contains("b / a > 0"));
}

TEST_CASE("space: cartesian_size", "[space]") {
  CHECK(Space({param("a", {1, 2, 3})}, {}).cartesian_size() == 3);
  CHECK(Space({param("a", {1, 2, 3}), param("b", {1, 2, 3, 4, 5})}, {"a > b"}).cartesian_size() ==
        15);

  auto many = [](int count, int values) {
    std::vector<Parameter> ps;
    for (int i = 0; i < count; ++i) {
      ValueList v;
      for (int j = 0; j < values; ++j) v.emplace_back(j);
      ps.push_back(param("p" + std::to_string(i), v));
    }
    return Space(ps, {});
  };
  CHECK(many(63, 2).cartesian_size() == (std::uint64_t{1} << 63));
  CHECK(many(64, 2).cartesian_size() == std::numeric_limits<std::uint64_t>::max());
  CHECK(many(19, 10).cartesian_size() == 10000000000000000000ULL);
  CHECK(many(20, 10).cartesian_size() == std::numeric_limits<std::uint64_t>::max());
  CHECK(many(40, 10).cartesian_size() == std::numeric_limits<std::uint64_t>::max());
}

namespace {
// Kernel Tuner's strategies test cache uses keys like "128,alg_2,15,True,2.45".
Space mixed_space() {
  return Space({param("block_size_x", {128, 256, 512}, 256),
                param("algorithm", {"alg_1", "alg_2"}),
                param("unroll", {1, 15}),
                param("use_shared", {true, false}),
                param("factor", {1.0, 2.45, 4.0})},
               {});
}
}  // namespace

TEST_CASE("space: key and parse_key round trip", "[space]") {
  Space s = mixed_space();
  Config c{{0, 1, 1, 0, 1}};
  CHECK(s.key(c) == "128,alg_2,15,True,2.45");
  CHECK(s.parse_key("128,alg_2,15,True,2.45") == c);
  CHECK(s.key(Config{{2, 0, 0, 1, 0}}) == "512,alg_1,1,False,1.0");
  CHECK(s.key(s.default_config()) == "256,alg_1,1,True,1.0");

  std::uint64_t n = 0;
  s.for_each_valid([&](const Config& x) {
    CHECK(s.parse_key(s.key(x)) == x);
    ++n;
    return true;
  });
  CHECK(n == 3 * 2 * 2 * 2 * 3);

  // Floats written without the ".0", as some tools do, still match.
  CHECK(s.parse_key("512,alg_1,1,False,4") == Config{{2, 0, 0, 1, 2}});
}

TEST_CASE("space: parse_key errors", "[space]") {
  Space s = mixed_space();
  SECTION("too few values") {
    CHECK_THROWS_AS(s.parse_key("128,alg_2,15,True"), InputError);
    CHECK_THROWS_AS(s.parse_key("128"), InputError);
    CHECK_THROWS_AS(s.parse_key(""), InputError);
  }
  SECTION("too many values") {
    CHECK_THROWS_AS(s.parse_key("128,alg_2,15,True,2.45,7"), InputError);
    CHECK_THROWS_AS(s.parse_key("128,alg_2,15,True,2.45,"), InputError);
  }
  SECTION("a value that is not declared") {
    CHECK_THROWS_AS(s.parse_key("129,alg_2,15,True,2.45"), InputError);
    CHECK_THROWS_WITH(s.parse_key("128,alg_3,15,True,2.45"), Contains("alg_3"));
    CHECK_THROWS_WITH(s.parse_key("128,alg_2,15,True,2.5"), Contains("factor"));
    CHECK_THROWS_AS(s.parse_key("128,alg_2,15,true,2.45"), InputError);  // Python spelling only
  }
}

TEST_CASE("space: parse_assignments", "[space]") {
  Space s({param("block_size_x", {64, 128, 256}, 256), param("unroll", {1, 2, 4}, 4),
           param("alg", {"a", "b"}, "b"), param("f", {1.0, 2.5}, 2.5)},
          {});
  CHECK(s.default_config() == Config{{2, 2, 1, 1}});
  CHECK(s.parse_assignments("block_size_x=128, unroll=2") == Config{{1, 1, 1, 1}});
  CHECK(s.parse_assignments("unroll=1") == Config{{2, 0, 1, 1}});
  CHECK(s.parse_assignments("") == s.default_config());
  CHECK(s.parse_assignments(" alg = a ,f=2.5") == Config{{2, 2, 0, 1}});
  CHECK(s.parse_assignments("f=1") == Config{{2, 2, 1, 0}});  // 1 matches 1.0

  CHECK_THROWS_AS(s.parse_assignments("nope=1"), InputError);
  CHECK_THROWS_WITH(s.parse_assignments("nope=1"), Contains("nope"));
  CHECK_THROWS_AS(s.parse_assignments("unroll=3"), InputError);
  CHECK_THROWS_WITH(s.parse_assignments("unroll=3"), Contains("unroll") && Contains("3"));
  CHECK_THROWS_AS(s.parse_assignments("unroll=2,unroll=4"), InputError);
  CHECK_THROWS_WITH(s.parse_assignments("unroll=2,unroll=4"), Contains("unroll"));
  CHECK_THROWS_AS(s.parse_assignments("unroll"), InputError);
  CHECK_THROWS_AS(s.parse_assignments("unroll=2,,alg=a"), InputError);
  CHECK_THROWS_AS(s.parse_assignments("=2"), InputError);
  CHECK_THROWS_AS(s.parse_assignments("unroll="), InputError);
}

TEST_CASE("space: find_value", "[space]") {
  Space s({param("f", {1.0, 2.45, 4.0}), param("i", {4, 8}), param("b", {true, false}),
           param("s", {"alg_1", "4"})},
          {});
  CHECK(s.find_value(0, "4") == 2);    // 4 matches 4.0
  CHECK(s.find_value(0, "4.0") == 2);
  CHECK(s.find_value(0, "2.45") == 1);
  CHECK(s.find_value(0, " 1.0 ") == 0);
  CHECK(s.find_value(1, "8") == 1);
  CHECK(s.find_value(2, "True") == 0);
  CHECK(s.find_value(2, "False") == 1);
  CHECK(s.find_value(3, "alg_1") == 0);
  CHECK(s.find_value(3, "4") == 1);
  CHECK_THROWS_AS(s.find_value(0, "3"), InputError);
  CHECK_THROWS_AS(s.find_value(0, "2.4"), InputError);
  CHECK_THROWS_AS(s.find_value(1, "abc"), InputError);
  CHECK_THROWS_AS(s.find_value(3, "alg_2"), InputError);
}

TEST_CASE("space: constructor errors", "[space]") {
  SECTION("duplicate parameter") {
    CHECK_THROWS_AS(Space({param("a", {1, 2}), param("a", {3})}, {}), InputError);
    CHECK_THROWS_WITH(Space({param("a", {1, 2}), param("a", {3})}, {}), Contains("'a'"));
  }
  SECTION("duplicate value") {
    CHECK_THROWS_AS(Space({param("a", {1, 2, 1})}, {}), InputError);
    CHECK_THROWS_AS(Space({param("a", {"x", "x"})}, {}), InputError);
    CHECK_THROWS_AS(Space({param("a", {1, 1.0})}, {}), InputError);  // Python: 1 == 1.0
  }
  SECTION("default not in the list") {
    CHECK_THROWS_AS(Space({param("a", {1, 2}, 3)}, {}), InputError);
    CHECK_THROWS_WITH(Space({param("a", {1, 2}, 3)}, {}), Contains("a") && Contains("3"));
  }
  SECTION("empty value list") {
    CHECK_THROWS_AS(Space({Parameter{"a", {}, Value(1)}}, {}), InputError);
  }
  SECTION("a restriction that does not parse") {
    CHECK_THROWS_AS(Space({param("a", {1, 2})}, {"a <"}), InputError);
    CHECK_THROWS_WITH(Space({param("a", {1, 2})}, {"a < < 2"}), Contains("a < < 2"));
    CHECK_THROWS_AS(Space({param("a", {1, 2})}, {""}), InputError);
  }
  SECTION("a restriction naming an unknown name") {
    CHECK_THROWS_AS(Space({param("a", {1, 2})}, {"a < zz"}), InputError);
    CHECK_THROWS_WITH(Space({param("a", {1, 2})}, {"a < zz"}), Contains("zz"));
    // A constant makes the same name known.
    CHECK_NOTHROW(Space({param("a", {1, 2})}, {"a < zz"}, {{"zz", Value(2)}}));
  }
}

TEST_CASE("space: default_config, assignments, value, index_of", "[space]") {
  Space s({param("block_size_x", {64, 128, 256}, 256), param("alg", {"a", "b"}, "b"),
           param("f", {0.5, 2.45}, 2.45), param("flag", {false, true}, true)},
          {});
  Config d = s.default_config();
  CHECK(d.index == std::vector<std::uint32_t>{2, 1, 1, 1});
  CHECK(s.value(d, 0) == Value(256));
  CHECK(s.value(d, 1) == Value("b"));
  CHECK(s.value(d, 2).as_float() == 2.45);
  CHECK(s.value(d, 3) == Value(true));
  auto as = s.assignments(Config{{0, 0, 0, 0}});
  REQUIRE(as.size() == 4);
  CHECK(as[0].first == "block_size_x");
  CHECK(as[0].second == Value(64));
  CHECK(as[1].first == "alg");
  CHECK(as[1].second == Value("a"));
  CHECK(as[2].first == "f");
  CHECK(as[2].second.str() == "0.5");
  CHECK(as[3].first == "flag");
  CHECK(as[3].second.str() == "False");
  CHECK(s.index_of("f") == 2);
  CHECK(s.has_parameter("alg"));
  CHECK_FALSE(s.has_parameter("nope"));
  CHECK_THROWS_AS(s.index_of("nope"), InputError);

  // violated_restriction names the restriction text; wrong-sized configs are invalid.
  Space r({param("a", {1, 2, 3}), param("b", {1, 2})}, {"a < 3", "a != b"});
  CHECK(r.violated_restriction(Config{{0, 1}}).empty());
  CHECK(r.violated_restriction(Config{{2, 0}}) == "a < 3");
  CHECK(r.violated_restriction(Config{{0, 0}}) == "a != b");
  CHECK_FALSE(r.is_valid(Config{{0}}));
  CHECK_FALSE(r.is_valid(Config{{5, 0}}));
}

TEST_CASE("space: a membership predicate narrows validity at the leaf", "[space]") {
  // 3 x 3 with restriction a <= b (6 valid); membership keeps those with a + b odd:
  // (0,1), (1,2) -> 2 members. A recorded space uses this to mean "in the recording".
  Space s({param("a", {0, 1, 2}), param("b", {0, 1, 2})}, {"a <= b"});
  REQUIRE(s.count_valid() == 6);
  s.set_membership([](const Config& c) { return (c.index[0] + c.index[1]) % 2 == 1; });
  CHECK(s.count_valid() == 2);
  CHECK(brute_force(s) == std::vector<Config>{Config{{0, 1}}, Config{{1, 2}}});
  CHECK(s.is_valid(Config{{0, 1}}));
  CHECK_FALSE(s.is_valid(Config{{0, 2}}));  // passes the restriction, not a member
  CHECK(s.violated_restriction(Config{{0, 2}}) == "<not a member>");
  CHECK(s.violated_restriction(Config{{2, 1}}) == "a <= b");  // restrictions come first
  // next_valid skips non-members, also when resuming from one.
  Config c{{0, 2}};
  REQUIRE(s.next_valid(c));
  CHECK(c == Config{{1, 2}});
  CHECK_FALSE(s.next_valid(c));
  s.set_membership(nullptr);
  CHECK(s.count_valid() == 6);
}

TEST_CASE("space: the thread-block limit prunes like Kernel Tuner's MaxProdConstraint", "[space][block_limit]") {
  Space s({param("bx", {Value(64), Value(256), Value(1024)}), param("t", {Value(1), Value(2)}),
           param("by", {Value(1), Value(4)})},
          {"t <= by"});
  CHECK(s.count_valid() == 3 * 3);
  s.set_block_limit({cutune::Expression::parse("bx"), cutune::Expression::parse("by")}, 1024);
  CHECK(s.block_limit() == "bx * by <= 1024");
  CHECK(s.restrictions().size() == 1);  // the user's, unchanged
  CHECK(s.count_valid() == 3 + 2 * 2);  // bx=1024 with by=4 is dropped
  CHECK(s.violated_restriction(s.parse_assignments("bx=1024,by=4")) == "bx * by <= 1024");
  // The same set as a brute-force walk that asks violated_restriction.
  std::vector<Config> walked;
  s.for_each_valid([&](const Config& c) {
    walked.push_back(c);
    return true;
  });
  CHECK(walked == brute_force(s));
  // Replaced, then removed.
  s.set_block_limit({cutune::Expression::parse("bx")}, 64);
  CHECK(s.count_valid() == 3);
  s.set_block_limit({}, 64);
  CHECK(s.block_limit().empty());
  CHECK(s.count_valid() == 3 * 3);
  CHECK_THROWS_AS(s.set_block_limit({cutune::Expression::parse("bz")}, 64), InputError);
}

TEST_CASE("space: set_default makes a configuration the default", "[space]") {
  Space s({param("a", {Value(1), Value(2)}), param("b", {Value(3), Value(4)})}, {});
  const Config c = s.parse_assignments("a=2,b=4");
  s.set_default(c);
  CHECK(s.default_config() == c);
  CHECK(s.parameters()[0].default_value == Value(2));
}
