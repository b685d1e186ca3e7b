#pragma once
// One factory per strategy, each defined in its own file of this folder; strategy.cpp
// registers them by name.
#include <memory>

#include "cutune/search/strategy.hpp"

namespace cutune::search {

std::unique_ptr<Strategy> make_brute_force(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_random(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_greedy_ils(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_mls(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_simulated_annealing(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_dual_annealing(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_genetic_algorithm(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_diff_evo(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_pso(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_tabu_greywolf(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_surrogate_vnd(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_pattern_search(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_bayes_opt(const Space& space, const StrategyOptions& options);
std::unique_ptr<Strategy> make_bandit_portfolio(const Space& space, const StrategyOptions& options);
/// bandit_portfolio's arm when options.prior is set (not empty): a local search ordered by the prior.
std::unique_ptr<Strategy> make_prior_local(const Space& space, const StrategyOptions& options);
/// `strategy` proposing options.prior's seeds first; `strategy` itself without a prior.
std::unique_ptr<Strategy> with_prior(std::unique_ptr<Strategy> strategy, const StrategyOptions& options);

}  // namespace cutune::search
