#include "selector_choice.hpp"

#include <fmt/format.h>

#include "config_check.hpp"

namespace cutune::loader::detail {

const ShapeSelector* find_selector(const std::vector<ShapeSelector>& selectors, const std::string& kernel,
                                   const std::string& gpu_model, const std::string& objective) {
  for (const auto& s : selectors)
    if (s.kernel == kernel && s.gpu_model == gpu_model && s.objective == objective) return &s;
  return nullptr;
}

Config select_by(const KernelProblem& problem, const ShapeSelector& selector, const ProblemInstance& instance,
                 const std::string& source, Selection& s) {
  std::vector<Config> configs;
  for (std::size_t i = 0; i < selector.configs.size(); ++i)
    configs.push_back(checked_config(problem, selector.configs[i],
                                     fmt::format("{} (selector of {} on {}, configs[{}])", source, selector.kernel,
                                                 selector.gpu_model, i)));
  const std::size_t pick = selector.select(instance.variables);
  s.rung = Rung::Selector;
  s.source = source;
  s.tuned_gpu = selector.gpu_model;
  s.selector = fmt::format("config {} of {} ({}), within {:.3g}% of the best at {} tuned shapes (worst {:.3g}%)",
                           pick + 1, selector.configs.size(), selector.path(instance.variables),
                           selector.bound * 100, selector.shapes.size(), selector.worst_slowdown * 100);
  return configs[pick];
}

}  // namespace cutune::loader::detail
