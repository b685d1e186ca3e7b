#pragma once
// One local search from a starting point: a component of greedy_ils, mls and
// dual_annealing (not a strategy by itself).
#include <optional>
#include <random>
#include <vector>

#include "memory.hpp"

namespace cutune::search {

class HillClimb {
 public:
  enum class Neighbourhood { hamming, adjacent };
  /// first: move as soon as a neighbour is better (neighbours in random order);
  /// best: evaluate the whole neighbourhood, then move to its best.
  enum class Move { first, best };

  HillClimb(const Space& space, Neighbourhood neighbourhood, Move move)
      : space_(space), neighbourhood_(neighbourhood), move_(move) {}

  /// Starts from `x` (told or not); the climb proposes it first if it is not told.
  void start(const Config& x, const Memory& memory, std::mt19937_64& rng);
  /// The next configuration to evaluate; nullopt while waiting or at a local optimum.
  std::optional<Config> propose(const Memory& memory, std::mt19937_64& rng);
  void learn(const Config& c, double fitness, std::mt19937_64& rng);
  /// Every neighbour of current() is told and none is better.
  bool at_optimum() const { return at_optimum_; }
  bool started() const { return started_; }
  const Config& current() const { return x_.x(); }

 private:
  /// The (shuffled) neighbours of a new current point.
  void neighbourhood_of(const Config& x, std::mt19937_64& rng);

  const Space& space_;
  Neighbourhood neighbourhood_;
  Move move_;
  bool started_ = false;
  bool at_optimum_ = false;
  CurrentPoint x_;
  std::vector<Config> neighbours_;
  std::size_t next_ = 0;
};

}  // namespace cutune::search
