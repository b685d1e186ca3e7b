#include "memory.hpp"

#include <limits>

namespace cutune::search {

double fitness_of(const Observation& observation) {
  return observation.valid ? observation.objective : std::numeric_limits<double>::infinity();
}

void Memory::record(const Config& c, const Observation& observation) {
  pending_.erase(c);
  const double f = fitness_of(observation);
  auto [it, fresh] = told_.insert_or_assign(c, f);
  if (fresh) order_.push_back(c);
  if (observation.valid && (!best_ || f < best_fitness_)) {
    best_ = c;
    best_fitness_ = f;
  }
}

std::optional<double> Memory::fitness(const Config& c) const {
  auto it = told_.find(c);
  if (it == told_.end()) return std::nullopt;
  return it->second;
}

}  // namespace cutune::search
