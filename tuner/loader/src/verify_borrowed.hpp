#pragma once
// The first-use check of a borrowed configuration (LoaderOptions::verify_borrowed): the
// candidate and the template default run on the same generated data (the T1 fills, seed
// 1) at the application's problem size; their outputs must agree within the kernel's
// tolerance. Generated data, not the application's buffers: the check must not write into
// memory the application owns, and the application's inputs may not exist yet.
#include "cutune/loader/loader.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::loader::detail {

/// ok, or the first output that differs with its worst element (argument, index, expected,
/// got); max_error over the outputs compared. Needs the device's context current. Throws
/// DriverError when a launch fails.
VerifyResult compare_with_default(const KernelProblem& problem, const ProblemInstance& instance,
                                  const TunedKernel& reference, const TunedKernel& candidate);

}  // namespace cutune::loader::detail
