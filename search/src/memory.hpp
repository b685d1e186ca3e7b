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
  /// Proposed, not told yet (in flight on the evaluators, or waiting for one).
  const std::set<Config>& pending() const { return pending_; }
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

/// The point a trajectory (annealing, a local climb) moves from: its result is needed
/// before the next move, so a point not told yet is handed out once, then awaited.
class CurrentPoint {
 public:
  void set(const Config& c, const Memory& memory) {
    x_ = c;
    f_ = memory.fitness(c);
    handed_out_ = false;
  }
  /// Moves to a configuration whose result is known (an accepted step).
  void move(const Config& c, double f) {
    x_ = c;
    f_ = f;
  }
  /// True once the result is known; otherwise `propose` receives the point itself the
  /// first time and nullopt (wait) after that.
  bool ready(const Memory& memory, std::optional<Config>& propose) {
    if (!f_) f_ = memory.fitness(*x_);
    if (f_) return true;
    propose = handed_out_ ? std::nullopt : x_;
    handed_out_ = true;
    return false;
  }
  /// Takes a told result if it is the current point's; returns whether it was.
  bool learn(const Config& c, double f) {
    if (!x_ || c != *x_) return false;
    f_ = f;
    return true;
  }
  bool has() const { return x_.has_value(); }
  const Config& x() const { return *x_; }
  /// Known once ready() said so.
  std::optional<double> f() const { return f_; }

 private:
  std::optional<Config> x_;
  std::optional<double> f_;
  bool handed_out_ = false;
};

}  // namespace cutune::search
