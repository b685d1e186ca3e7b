#pragma once
// A share of a space for independent jobs (a Slurm job array, one process per GPU): shard i
// of N holds the valid configurations whose position in the space's enumeration order
// (Space::for_each_valid, lexicographic over value indices) is i mod N.
//
// Position rather than a hash of the key: the N shards differ in size by at most one (a hash
// splits binomially), and neighbours in the order, which differ in the fastest-varying
// parameter and tend to cost alike, land in different shards, so the jobs of an array take
// about as long. The price is one enumeration of the valid space per job, and that every job
// must see the same valid space: the same problem file, problem size and thread-block limit
// (the same GPU model), which is what makes its measurements comparable anyway.
#include <cstdint>
#include <string>
#include <string_view>

#include "cutune/model/space.hpp"

namespace cutune {

struct Shard {
  std::uint64_t index = 0;  ///< i, 0-based
  std::uint64_t count = 1;  ///< N
  std::string text() const;  ///< "i/N"
};

/// "i/N" with 0 <= i < N; throws InputError naming `option` and the text otherwise
/// (malformed, N < 1, i >= N).
Shard parse_shard(std::string_view text, std::string_view option = "--shard");

/// A copy of `space` narrowed (Space::set_membership) to the shard's configurations: they
/// are enumerated once, in the space as it is (its restrictions, block limit and membership),
/// and kept in enumeration order for lookups.
Space shard_of(const Space& space, const Shard& shard);

}  // namespace cutune
