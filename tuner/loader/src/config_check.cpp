#include "config_check.hpp"

#include <fmt/format.h>

#include "cutune/model/errors.hpp"

namespace cutune::loader::detail {

Config checked_config(const KernelProblem& problem, const ResultConfig& config, const std::string& origin) {
  try {
    return checked_configuration(problem.space(), config.values()).index();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: kernel {}: {}; not compiled", origin, problem.name(), e.what()));
  }
}

}  // namespace cutune::loader::detail
