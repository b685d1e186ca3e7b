// Configuration: one configuration of a space as a value, and its two text forms (Kernel
// Tuner's key and the JSON object the store keeps), made and parsed only at the edges.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "cutune/model/configuration.hpp"
#include "cutune/model/errors.hpp"

using namespace cutune;
using Catch::Matchers::Contains;

namespace {

Space mixed_space() {
  return Space({{"block_size_x", {Value(64), Value(128)}, Value(128)},
                {"alg", {Value("a"), Value("b")}, Value("a")},
                {"f", {Value(0.5), Value(2.45), Value(1.0)}, Value(2.45)},
                {"on", {Value(false), Value(true)}, Value(true)}},
               {"block_size_x * f < 200"});
}

}  // namespace

TEST_CASE("configuration: key and JSON keep declared order and types", "[configuration]") {
  const Space s = mixed_space();
  const Configuration d = Configuration::default_of(s);
  CHECK(d.key() == "128,a,2.45,True");
  CHECK(d.json() == R"({"block_size_x":128,"alg":"a","f":2.45,"on":true})");
  CHECK(d.to_json().dump() == d.json());
  const Configuration c(s, Config{{0, 1, 2, 0}});
  CHECK(c.key() == "64,b,1.0,False");
  CHECK(c.json() == R"({"block_size_x":64,"alg":"b","f":1.0,"on":false})");
  CHECK(c.value(1).as_string() == "b");
  REQUIRE(c.assignments().size() == 4);
  CHECK(c.assignments()[2].first == "f");
}

TEST_CASE("configuration: parsed back from its key and from k=v text, with errors naming the part",
          "[configuration]") {
  const Space s = mixed_space();
  s.for_each_valid([&](const Config& index) {
    const Configuration c(s, index);
    CHECK(Configuration::from_key(s, c.key()) == c);
    return true;
  });
  CHECK(Configuration::from_assignments(s, "alg=b, f=1") == Configuration(s, Config{{1, 1, 2, 1}}));
  CHECK(Configuration::from_assignments(s, "") == Configuration::default_of(s));
  CHECK_THROWS_WITH(Configuration::from_key(s, "128,c,2.45,True"), Contains("c"));
  CHECK_THROWS_AS(Configuration::from_key(s, "128,a"), InputError);
  CHECK_THROWS_WITH(Configuration::from_assignments(s, "nope=1"), Contains("nope"));
  // Restrictions are the caller's to check: 128 * 2.45 >= 200.
  const Configuration violating = Configuration::from_assignments(s, "f=2.45");
  CHECK(violating.violated_restriction() == "block_size_x * f < 200");
  CHECK(Configuration::from_assignments(s, "f=0.5").violated_restriction().empty());
}

TEST_CASE("configuration: a value that copies cheaply, compares and orders as its space enumerates",
          "[configuration]") {
  const Space s = mixed_space();
  std::vector<Configuration> in_order;
  s.for_each_valid([&](const Config& index) {
    in_order.emplace_back(s, index);
    return true;
  });
  REQUIRE(in_order.size() > 2);
  for (std::size_t i = 1; i < in_order.size(); ++i) CHECK(in_order[i - 1] < in_order[i]);
  const Configuration copy = in_order[1];
  CHECK(copy == in_order[1]);
  CHECK(copy != in_order[0]);
  CHECK(&copy.space() == &s);
  // A map keyed by configurations: what the runner keeps its results in.
  std::map<Configuration, int> seen;
  for (auto it = in_order.rbegin(); it != in_order.rend(); ++it) seen.emplace(*it, 0);
  CHECK(seen.begin()->first == in_order.front());
  // The same indices of another space are another configuration.
  const Space other = mixed_space();
  CHECK(Configuration(other, in_order[0].index()) != in_order[0]);
}
