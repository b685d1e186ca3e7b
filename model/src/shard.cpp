#include "cutune/model/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <vector>

#include "cutune/model/errors.hpp"

namespace cutune {

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(std::string_view text, std::string_view option) {
  const auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {}", option, text, why));
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) throw bad("expected i/N, e.g. 0/4");
  const auto number = [&](std::string_view part) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) throw bad("expected i/N, e.g. 0/4");
    return v;
  };
  Shard s{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (s.count < 1) throw bad("N must be at least 1");
  if (s.index >= s.count) throw bad(fmt::format("i must be below N (0..{})", s.count - 1));
  return s;
}

Space shard_of(const Space& space, const Shard& shard) {
  // for_each_valid visits in lexicographic index order, which is Config's order: the kept
  // configurations are sorted as they come, for binary search.
  auto members = std::make_shared<std::vector<Config>>();
  std::uint64_t position = 0;
  space.for_each_valid([&](const Config& c) {
    if (position++ % shard.count == shard.index) members->push_back(c);
    return true;
  });
  Space out = space;
  // Every member passed the space's own checks when it was enumerated, so the membership
  // test replaces any earlier one (a recorded space's) without losing it.
  out.set_membership([members](const Config& c) { return std::binary_search(members->begin(), members->end(), c); });
  return out;
}

}  // namespace cutune
