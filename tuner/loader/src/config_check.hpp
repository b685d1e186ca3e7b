#pragma once
// DB and wisdom values are data, never code (ARCHITECTURE.md, decision 9): a stored
// configuration becomes a Config only if every value is one its parameter declares and the
// restrictions hold. The #defines are then generated from the declared values, never from
// the stored text.
#include <string>

#include "cutune/model/problem.hpp"

namespace cutune::loader::detail {

/// `config_json` ({"block_size_x": 256, ...}) checked against problem.space(). Throws
/// InputError naming the kernel, the parameter and the value, and `origin` (where the
/// value came from), for a value not declared, a missing or unknown parameter, a value of
/// another type, or a violated restriction.
Config checked_config(const KernelProblem& problem, const std::string& config_json, const std::string& origin);

}  // namespace cutune::loader::detail
