#include "cutune/cuda/launch_plan.hpp"

#include <fmt/format.h>

namespace cutune::cuda {

ResolvedLaunches resolve_launches(const Module& module, const KernelProblem& problem, const Config& config,
                                  const ProblemInstance& instance, const DeviceLimits& limits) {
  ResolvedLaunches out;
  for (const PlannedLaunch& planned : problem.plan(config, instance)) {
    const LaunchGeometry& g = planned.geometry;
    CUfunction f = module.function(planned.spec->kernel_name);
    const std::uint64_t threads = std::uint64_t{g.block[0]} * g.block[1] * g.block[2];
    const int max_threads = Module::attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    if (threads > static_cast<std::uint64_t>(max_threads)) {
      // Refused before launching: the kernel's registers (or the device) allow fewer threads.
      out.refused = fmt::format("too many resources requested for launch of {}: {} threads per block, "
                                "the kernel allows {} ({} registers per thread)",
                                planned.spec->kernel_name, threads, max_threads,
                                Module::attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS));
      return out;
    }
    if (g.dynamic_shared_bytes > 0) {
      // Static plus dynamic shared memory above 48 KiB needs the kernel's opt-in, and
      // above the device's opt-in limit cannot launch at all: say so before launching.
      const auto total = static_cast<std::uint64_t>(Module::attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)) +
                         g.dynamic_shared_bytes;
      if (total > static_cast<std::uint64_t>(limits.max_shared_per_block_optin)) {
        out.refused = fmt::format("too many resources requested for launch of {}: {} bytes of shared memory, "
                                  "the device allows {}",
                                  planned.spec->kernel_name, total, limits.max_shared_per_block_optin);
        return out;
      }
      CUTUNE_CU(CU_FN(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(g.dynamic_shared_bytes)));
    }
    out.launches.push_back({f, g, planned.spec});
  }
  return out;
}

}  // namespace cutune::cuda
