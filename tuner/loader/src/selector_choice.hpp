#pragma once
// The selector rung (loader.hpp): a distilled selector of this kernel, GPU model and objective,
// its configurations checked against the space like any stored value, the tree evaluated
// on the problem's variables. Pure CPU.
#include <string>
#include <vector>

#include "cutune/loader/loader.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/shape_selector.hpp"

namespace cutune::loader::detail {

/// The selector for exactly this kernel name, GPU model key and objective; nullptr when none.
const ShapeSelector* find_selector(const std::vector<ShapeSelector>& selectors, const std::string& kernel,
                                   const std::string& gpu_model, const std::string& objective);

/// The configuration `selector` picks for `instance`, filling in `s` (rung, provenance, the
/// decisions). Every configuration of the selector is checked first (checked_config): one the
/// space does not declare throws InputError naming `source`, the selector and the value,
/// whichever one the tree would pick.
Config select_by(const KernelProblem& problem, const ShapeSelector& selector, const ProblemInstance& instance,
                 const std::string& source, Selection& s);

}  // namespace cutune::loader::detail
