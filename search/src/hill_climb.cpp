#include "hill_climb.hpp"

#include <algorithm>

#include "neighbourhood.hpp"

namespace cutune::search {

void HillClimb::neighbourhood_of(const Config& x, std::mt19937_64& rng) {
  neighbours_ = neighbourhood_ == Neighbourhood::hamming ? hamming_neighbours(space_, x)
                                                         : adjacent_neighbours(space_, x);
  std::shuffle(neighbours_.begin(), neighbours_.end(), rng);  // no bias towards low parameters
  next_ = 0;
  at_optimum_ = false;
}

void HillClimb::start(const Config& x, const Memory& memory, std::mt19937_64& rng) {
  started_ = true;
  x_.set(x, memory);
  neighbourhood_of(x, rng);
}

std::optional<Config> HillClimb::propose(const Memory& memory, std::mt19937_64& rng) {
  if (!started_ || at_optimum_) return std::nullopt;
  if (std::optional<Config> start; !x_.ready(memory, start)) return start;
  if (next_ < neighbours_.size()) return neighbours_[next_++];
  // Every neighbour handed out: decide once all are told.
  const Config* best = nullptr;
  double best_f = *x_.f();
  for (const auto& n : neighbours_) {
    auto f = memory.fitness(n);
    if (!f) return std::nullopt;
    if (*f < best_f) {
      best_f = *f;
      best = &n;
    }
  }
  if (move_ == Move::best && best) {
    x_.move(Config(*best), best_f);
    neighbourhood_of(x_.x(), rng);
    return propose(memory, rng);
  }
  at_optimum_ = true;
  return std::nullopt;
}

void HillClimb::learn(const Config& c, double fitness, std::mt19937_64& rng) {
  if (!started_) return;
  if (x_.learn(c, fitness)) return;
  if (move_ == Move::first && x_.f() && fitness < *x_.f() &&
      std::find(neighbours_.begin(), neighbours_.end(), c) != neighbours_.end()) {
    x_.move(c, fitness);
    neighbourhood_of(c, rng);
  }
}

}  // namespace cutune::search
