#pragma once
// Moves in the index space of a Space that always land on valid configurations: repair,
// neighbourhoods, mutation, rounding of continuous positions and random sampling. Written
// once here and shared by every strategy.
//
// "Nearest valid configuration" (repair): fewest parameters changed first, then the
// smallest summed |index difference| over the changed parameters (index space, per
// parameter: neighbouring values of a declared list are 1 apart), ties to the earlier
// parameter and the smaller index. Configurations that change up to two parameters are
// searched (at most kRepairChecks validity checks); beyond that the repair falls back to
// the next valid configuration in enumeration order (which keeps the leading parameters),
// wrapping around to the first.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "cutune/model/space.hpp"

namespace cutune::search {

inline constexpr std::size_t kNoParameter = std::numeric_limits<std::size_t>::max();
/// Bounds the cost of one repair: a few milliseconds even with slow restrictions.
inline constexpr std::size_t kRepairChecks = 2048;

/// The nearest valid configuration to `c` (indices in range, possibly invalid); `keep`
/// names a parameter the repair must not change (kNoParameter: none). nullopt only when no
/// valid configuration exists (with `keep`: none with that parameter's value, within reach).
std::optional<Config> repair(const Space& space, Config c, std::size_t keep = kNoParameter);

/// Kernel Tuner's "Hamming" neighbours: the valid configurations that differ from `c` in
/// one parameter. Where a ±1 step of a parameter is invalid on its own (a restriction
/// couples it to others, e.g. block_size_x * block_size_y <= 1024), the step with the other
/// parameters repaired is added, so constraint boundaries do not trap local searches.
std::vector<Config> hamming_neighbours(const Space& space, const Config& c);
/// Kernel Tuner's "adjacent" neighbours: per parameter and direction, the nearest valid
/// index along that axis; if there is none, the ±1 step with the others repaired.
std::vector<Config> adjacent_neighbours(const Space& space, const Config& c);

/// Each parameter of `c` takes a uniformly random value with probability `rate` (at least
/// one changes), then the result is repaired.
Config mutate(const Space& space, const Config& c, double rate, std::mt19937_64& rng);

/// Metropolis on the relative worsening (unit-free, as Kernel Tuner's annealing): a move from
/// a failure (`current` infinite) is always taken, a move to one never; else a better
/// `candidate` is taken, a worse one with probability exp(-(candidate - current) / |current| / T).
bool accept_relative(double current, double candidate, double temperature, std::mt19937_64& rng);

/// Uniform crossover: each parameter from `b` with probability 1/2, else from `a`; not
/// repaired (the caller mutates or repairs it).
Config uniform_crossover(const Config& a, const Config& b, std::mt19937_64& rng);

/// A continuous position in index coordinates (one real per parameter) rounded to the
/// nearest index, clamped into range and repaired.
Config round_to_config(const Space& space, const std::vector<double>& position);
std::vector<double> position_of(const Config& c);

/// Random valid configurations without enumerating the Cartesian product: rejection
/// sampling over the index space; once that fails (valid points are rare, or nearly all
/// are seen), the valid configurations are listed once (lazy enumeration with pruning) and
/// drawn from that list.
class Sampler {
 public:
  explicit Sampler(const Space& space) : space_(space) {}
  /// Uniform over the valid configurations (repeats possible).
  Config any(std::mt19937_64& rng);
  /// A valid configuration for which `seen` is false; nullopt when every one is seen.
  std::optional<Config> unseen(std::mt19937_64& rng, const std::function<bool(const Config&)>& seen);

 private:
  std::optional<Config> draw_valid(std::mt19937_64& rng, int attempts);
  const std::vector<Config>& valid();
  const Space& space_;
  bool enumerated_ = false, shuffled_ = false;
  std::vector<Config> valid_;      ///< every valid configuration, once enumerated
  std::vector<Config> remaining_;  ///< shuffled, not seen when listed
};

/// Uniform integer in [0, n).
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n);
double uniform01(std::mt19937_64& rng);

}  // namespace cutune::search
