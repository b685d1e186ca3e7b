// Shards of a space: disjoint, together the whole valid space, balanced, and refused input.
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/shard.hpp"
#include "cutune/model/space.hpp"
#include "space_helpers.hpp"

using namespace cutune;

namespace {
Space small_space() {
  return Space({Parameter{"x", {1, 2, 4, 8, 16}, 1}, Parameter{"y", {1, 2, 3, 4}, 1}, Parameter{"z", {0, 1}, 0}},
               {"x * y <= 32"});
}
}  // namespace

TEST_CASE("shard: the N shards are disjoint, balanced and together the whole space", "[shard]") {
  const Space space = small_space();
  const std::vector<Config> all = testing::valid_configs(space);
  REQUIRE(all.size() > 10);
  for (std::uint64_t n : {1u, 2u, 3u, 7u, 64u}) {
    std::set<Config> seen;
    std::size_t total = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const Space shard = shard_of(space, Shard{i, n});
      const auto share = testing::valid_configs(shard);
      CHECK(shard.count_valid() == share.size());
      // Sizes differ by at most one: position i mod N.
      CHECK(share.size() == all.size() / n + (i < all.size() % n ? 1 : 0));
      for (std::size_t k = 0; k < share.size(); ++k) CHECK(share[k] == all[i + k * n]);
      for (const Config& c : share) CHECK(seen.insert(c).second);
      total += share.size();
      // A configuration of another shard is not valid in this one; the space's own checks stay.
      if (n > 1) CHECK_FALSE(shard.is_valid(all[(i + 1) % n]));
      CHECK(shard.violated_restriction(Config{{4, 3, 0}}) == "x * y <= 32");
    }
    CHECK(total == all.size());
    CHECK(seen == std::set<Config>(all.begin(), all.end()));
  }
}

TEST_CASE("shard: a space already narrowed by a membership is split within it", "[shard]") {
  Space space = small_space();
  space.set_membership([](const Config& c) { return c.index[2] == 1; });
  const auto members = testing::valid_configs(space);
  const Space a = shard_of(space, Shard{0, 2}), b = shard_of(space, Shard{1, 2});
  CHECK(a.count_valid() + b.count_valid() == members.size());
  a.for_each_valid([](const Config& c) {
    CHECK(c.index[2] == 1);
    return true;
  });
}

TEST_CASE("shard: i/N is parsed, malformed text and i >= N are refused naming the option", "[shard]") {
  CHECK(parse_shard("0/1").count == 1);
  const Shard s = parse_shard("2/5");
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  CHECK(s.text() == "2/5");
  for (const char* bad : {"", "3", "3/3", "4/3", "1/0", "-1/3", "1/-3", "a/3", "1/3x", "1//3", " 1/3", "1/"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), InputError);
    try {
      parse_shard(bad);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).starts_with("--shard "));
    }
  }
}
