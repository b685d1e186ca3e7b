// The --sweep parser: ranges with their step rule, lists, grids, and the bad input it refuses.
#include <catch2/catch.hpp>

#include "cutune/model/errors.hpp"
#include "cutune/model/shape_sweep.hpp"

using namespace cutune;
using Catch::Matchers::Contains;

namespace {

const std::vector<ProblemVariable> kVars{{"n", 1 << 20, 1, 2147483647}, {"m", 64, 1, 4096}};

std::vector<std::int64_t> values_of(const std::vector<SweepShape>& shapes, const std::string& v) {
  std::vector<std::int64_t> out;
  for (const auto& s : shapes) out.push_back(s.at(v));
  return out;
}

}  // namespace

TEST_CASE("sweep: a range of powers of two doubles from the low end to the high end", "[sweep]") {
  const auto shapes = parse_sweep("n=2**10..2**14", kVars);
  CHECK(values_of(shapes, "n") == std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384});
  CHECK(shapes.front().size() == 1);  // m is not named: it keeps its default
  CHECK(sweep_shape_text(shapes.front()) == "n=1024");
}

TEST_CASE("sweep: step rules: a factor, an increment, the high end kept only when reached", "[sweep]") {
  CHECK(values_of(parse_sweep("n=1000..64000:*4", kVars), "n") == std::vector<std::int64_t>{1000, 4000, 16000, 64000});
  CHECK(values_of(parse_sweep("n=1000..70000:*4", kVars), "n") == std::vector<std::int64_t>{1000, 4000, 16000, 64000});
  CHECK(values_of(parse_sweep("n=1024..4096:+1024", kVars), "n") == std::vector<std::int64_t>{1024, 2048, 3072, 4096});
  CHECK(values_of(parse_sweep("n=5..5", kVars), "n") == std::vector<std::int64_t>{5});
}

TEST_CASE("sweep: a list, sorted and without repeats", "[sweep]") {
  CHECK(values_of(parse_sweep("n=4000, 1000,2000,1000", kVars), "n") == std::vector<std::int64_t>{1000, 2000, 4000});
}

TEST_CASE("sweep: a grid over two variables, the first varying slowest", "[sweep]") {
  const auto shapes = parse_sweep("n=2**10..2**11; m=64,128", kVars);
  REQUIRE(shapes.size() == 4);
  CHECK(sweep_shape_text(shapes[0]) == "m=64,n=1024");
  CHECK(sweep_shape_text(shapes[1]) == "m=128,n=1024");
  CHECK(sweep_shape_text(shapes[2]) == "m=64,n=2048");
  CHECK(sweep_shape_text(shapes[3]) == "m=128,n=2048");
}

TEST_CASE("sweep: bad input is one InputError naming --sweep", "[sweep]") {
  CHECK_THROWS_WITH(parse_sweep("", kVars), Contains("--sweep: empty"));
  CHECK_THROWS_WITH(parse_sweep("  ", kVars), Contains("--sweep: empty"));
  CHECK_THROWS_WITH(parse_sweep("n=", kVars), Contains("no values"));
  CHECK_THROWS_WITH(parse_sweep("n=1,,2", kVars), Contains("empty value"));
  CHECK_THROWS_WITH(parse_sweep("n=1;", kVars), Contains("empty item"));
  CHECK_THROWS_WITH(parse_sweep("k=1,2", kVars), Contains("'k' is not a problem variable (known: n, m)"));
  CHECK_THROWS_WITH(parse_sweep("n=1;n=2", kVars), Contains("given twice"));
  CHECK_THROWS_WITH(parse_sweep("n=0..2**10", kVars), Contains("n=0 is outside [1, 2147483647]"));
  CHECK_THROWS_WITH(parse_sweep("m=64,8192", kVars), Contains("m=8192 is outside [1, 4096]"));
  CHECK_THROWS_WITH(parse_sweep("n=2**31", kVars), Contains("outside"));
  CHECK_THROWS_WITH(parse_sweep("n=2**12..2**10", kVars), Contains("4096 is above 1024"));
  CHECK_THROWS_WITH(parse_sweep("n=1..8:*1", kVars), Contains("does not grow"));
  CHECK_THROWS_WITH(parse_sweep("n=1..8:+0", kVars), Contains("does not grow"));
  CHECK_THROWS_WITH(parse_sweep("n=1..8:x2", kVars), Contains("*FACTOR or +INCREMENT"));
  CHECK_THROWS_WITH(parse_sweep("n=1.5", kVars), Contains("not an integer"));
  CHECK_THROWS_WITH(parse_sweep("n=abc", kVars), Contains("--sweep: n=abc"));
  CHECK_THROWS_AS(parse_sweep("n", kVars), InputError);
}

TEST_CASE("sweep: over 10^4 shapes is refused unless allowed, counted before any is made", "[sweep]") {
  CHECK_THROWS_WITH(parse_sweep("n=1..20000:+1", kVars), Contains("20000 shapes, more than 10000 (add --yes"));
  // 2**31 values: refused at once, without making them.
  CHECK_THROWS_WITH(parse_sweep("n=1..2**31-1:+1", kVars), Contains("add --yes"));
  CHECK_THROWS_WITH(parse_sweep("n=1..200:+1;m=1..100:+1", kVars), Contains("20000 shapes"));
  CHECK(parse_sweep("n=1..20000:+1", kVars, /*allow_large=*/true).size() == 20000);
  CHECK(parse_sweep("n=1..10000:+1", kVars).size() == 10000);
}
