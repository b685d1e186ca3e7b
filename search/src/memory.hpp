#pragma once
// What a strategy knows: results told so far and proposals still in flight. Ordered
// containers only, so nothing about iteration order leaks into proposals (determinism).
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cutune/search/strategy.hpp"

namespace cutune::search {

/// Lower is better; a failure (compile, runtime, correctness...) is +infinity, the worst.
double fitness_of(const Observation& observation);

class Memory {
 public:
  void mark_pending(const Config& c) { pending_.insert(c); }
  void record(const Config& c, const Observation& observation);

  bool is_told(const Config& c) const { return told_.count(c) != 0; }
  bool is_pending(const Config& c) const { return pending_.count(c) != 0; }
  bool seen(const Config& c) const { return is_told(c) || is_pending(c); }
  /// Fitness of a told configuration, nullopt if not told yet.
  std::optional<double> fitness(const Config& c) const;

  /// Told configurations in the order they were told (first tell of each).
  const std::vector<Config>& order() const { return order_; }
  std::size_t told_count() const { return order_.size(); }
  /// Best valid configuration so far (nullptr when none is valid yet) and its fitness.
  const Config* best() const { return best_ ? &*best_ : nullptr; }
  double best_fitness() const { return best_fitness_; }

 private:
  std::map<Config, double> told_;
  std::set<Config> pending_;
  std::vector<Config> order_;
  std::optional<Config> best_;
  double best_fitness_ = std::numeric_limits<double>::infinity();  // none valid yet
};

}  // namespace cutune::search
