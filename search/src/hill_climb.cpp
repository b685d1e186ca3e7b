#include "hill_climb.hpp"

#include <algorithm>

#include "neighbourhood.hpp"

namespace cutune::search {

void HillClimb::move_to(const Config& x, std::optional<double> fx, std::mt19937_64& rng) {
  x_ = x;
  fx_ = fx;
  neighbours_ = neighbourhood_ == Neighbourhood::hamming ? hamming_neighbours(space_, x_)
                                                         : adjacent_neighbours(space_, x_);
  std::shuffle(neighbours_.begin(), neighbours_.end(), rng);  // no bias towards low parameters
  next_ = 0;
  at_optimum_ = false;
}

void HillClimb::start(const Config& x, std::mt19937_64& rng) {
  started_ = true;
  x_handed_out_ = false;
  move_to(x, std::nullopt, rng);
}

std::optional<Config> HillClimb::propose(const Memory& memory, std::mt19937_64& rng) {
  if (!started_ || at_optimum_) return std::nullopt;
  if (!fx_) {
    if (auto f = memory.fitness(x_)) {
      fx_ = f;
    } else {
      if (x_handed_out_) return std::nullopt;  // waiting for the starting point
      x_handed_out_ = true;
      return x_;
    }
  }
  if (next_ < neighbours_.size()) return neighbours_[next_++];
  // Every neighbour handed out: decide once all are told.
  const Config* best = nullptr;
  double best_f = *fx_;
  for (const auto& n : neighbours_) {
    auto f = memory.fitness(n);
    if (!f) return std::nullopt;
    if (*f < best_f) {
      best_f = *f;
      best = &n;
    }
  }
  if (move_ == Move::best && best) {
    move_to(Config(*best), best_f, rng);
    return propose(memory, rng);
  }
  at_optimum_ = true;
  return std::nullopt;
}

void HillClimb::learn(const Config& c, double fitness, std::mt19937_64& rng) {
  if (!started_) return;
  if (c == x_) {
    fx_ = fitness;
    return;
  }
  if (move_ == Move::first && fx_ && fitness < *fx_ &&
      std::find(neighbours_.begin(), neighbours_.end(), c) != neighbours_.end())
    move_to(c, fitness, rng);
}

}  // namespace cutune::search
