#pragma once
// Search strategies behind one small ask/tell interface over the index space of a Space
// (STYLE.md, convention 7). Strategies are seeded explicitly and never propose an invalid
// configuration or the same configuration twice.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/space.hpp"

namespace cutune::search {

struct Observation {
  bool valid = false;      ///< false for any failure status
  double objective = 0.0;  ///< lower is better (time in ms)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// Up to `max` configurations to evaluate next; empty when the search is over.
  virtual std::vector<Config> ask(std::size_t max) = 0;
  /// The result of a configuration that ask() proposed.
  virtual void tell(const Config& config, const Observation& observation) = 0;
};

struct StrategyOptions {
  std::string name = "brute_force";
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> budget;  ///< unique evaluations; none = the whole space
};

/// Names accepted by make_strategy.
std::vector<std::string> strategy_names();
/// Throws InputError naming an unknown strategy.
std::unique_ptr<Strategy> make_strategy(const Space& space, const StrategyOptions& options);

}  // namespace cutune::search
