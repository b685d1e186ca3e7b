#pragma once
// The first-use check of a borrowed configuration (LoaderOptions::verify_borrowed): the
// candidate and the template default run on the same generated data (the T1 fills, seed
// 1) at the application's problem size; their outputs must agree within the kernel's
// tolerance. Generated data, not the application's buffers: the check must not write into
// memory the application owns, and the application's inputs may not exist yet.
#include <string>

#include "cutune/loader/loader.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::loader::detail {

struct CheckResult {
  bool ok = true;
  std::string message;  ///< the first mismatch: argument, index, expected, got
  double max_error = 0.0;
};

/// Needs the device's context current. Throws DriverError when a launch fails.
CheckResult compare_with_default(const KernelProblem& problem, const ProblemInstance& instance,
                                 const TunedKernel& reference, const TunedKernel& candidate);

}  // namespace cutune::loader::detail
