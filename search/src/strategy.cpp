#include "cutune/search/strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cutune/model/errors.hpp"
#include "strategies/strategies.hpp"

namespace cutune::search {
namespace {

using Factory = std::unique_ptr<Strategy> (*)(const Space&, const StrategyOptions&);
struct Entry {
  const char* name;
  Factory make;
};
// Names as Kernel Tuner's where it has the strategy.
constexpr Entry kStrategies[] = {
    {"brute_force", make_brute_force},
    {"random", make_random},
    {"greedy_ils", make_greedy_ils},
    {"mls", make_mls},
    {"simulated_annealing", make_simulated_annealing},
    {"dual_annealing", make_dual_annealing},
    {"genetic_algorithm", make_genetic_algorithm},
    {"diff_evo", make_diff_evo},
    {"pso", make_pso},
    {"tabu_greywolf", make_tabu_greywolf},
    {"surrogate_vnd", make_surrogate_vnd},
    {"bayes_opt", make_bayes_opt},
    {"bandit_portfolio", make_bandit_portfolio},
};

}  // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : kStrategies) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Strategy> make_strategy(const Space& space, const StrategyOptions& options) {
  for (const auto& e : kStrategies)
    if (options.name == e.name) return with_prior(e.make(space, options), options);
  throw InputError(fmt::format("unknown strategy '{}' (known: {})", options.name, fmt::join(strategy_names(), ", ")));
}

}  // namespace cutune::search
