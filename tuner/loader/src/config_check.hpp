#pragma once
// DB and wisdom values are data, never code (ARCHITECTURE.md, decision 9): a stored
// configuration becomes a Config only if every value is one its parameter declares and the
// restrictions hold. The #defines are then generated from the declared values, never from
// the stored text.
#include <string>

#include "cutune/model/problem.hpp"
#include "cutune/model/result.hpp"

namespace cutune::loader::detail {

/// A stored configuration's values checked against problem.space() (checked_configuration). Throws
/// InputError naming the kernel, the parameter and the value, and `origin` (where the
/// value came from), for a value not declared, a missing or unknown parameter, a value of
/// another type, or a violated restriction.
Config checked_config(const KernelProblem& problem, const ResultConfig& config, const std::string& origin);

}  // namespace cutune::loader::detail
