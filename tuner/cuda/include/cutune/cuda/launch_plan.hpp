#pragma once
// A configuration's launch sequence resolved in a loaded module: the planned launches
// (model) with their CUfunction, checked against the kernel's and the device's limits
// before anything is launched. One definition for the tuner's GPU stage and the loader
//, so an application launches a configuration exactly as it was measured.
#include <optional>
#include <string>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::cuda {

struct ResolvedLaunch {
  CUfunction function = nullptr;
  LaunchGeometry geometry;
  const LaunchSpec* spec = nullptr;  ///< its arguments: indices into KernelProblem::arguments()
};

struct ResolvedLaunches {
  std::vector<ResolvedLaunch> launches;
  /// Non-empty when a launch cannot run: more threads per block than the kernel allows,
  /// or more shared memory than the device's opt-in limit ("too many resources ...").
  std::string refused;
  /// What the launches' kernels cost the GPU (KernelResources::combine over them), the one
  /// refused included; none when no launch was looked up.
  std::optional<KernelResources> resources;
};

/// Plans the launches whose Condition holds (KernelProblem::plan), looks their kernels up
/// in `module`, refuses what the limits forbid and opts in to the dynamic shared memory
/// the launches need. An empty `launches` with an empty `refused`: no Condition holds.
/// `lowered_names`: the module's symbol of each of problem.kernel_names(), in that order
/// (jit::CompileResult::lowered_names); empty: each kernel is looked up by its own name.
/// Throws InputError (a grid beyond CUDA's limits) and DriverError.
ResolvedLaunches resolve_launches(const Module& module, const KernelProblem& problem, const Config& config,
                                  const ProblemInstance& instance, const DeviceLimits& limits,
                                  const std::vector<std::string>& lowered_names = {});

}  // namespace cutune::cuda
