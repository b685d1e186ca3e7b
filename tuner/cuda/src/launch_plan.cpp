#include "cutune/cuda/launch_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cutune/cuda/function_resources.hpp"

namespace cutune::cuda {
namespace {

// The problem's arguments against the kernel's own parameter list, as the driver reports it
// (cuFuncGetParamInfo, CUDA 12.4+): a count or size that differs would be launched anyway and
// read garbage. BAT's pnpoly file passes 4 arguments to cn_pnpoly(int*, float2*, int n): n was
// the low half of a device pointer, and the tuning "measured" 0.005 ms where the kernel,
// launched as written, takes 4.7 ms (H100). "" when they agree or the driver cannot tell.
std::string argument_mismatch(CUfunction f, const KernelProblem& problem, const LaunchSpec& spec, const Config& config) {
  const auto get = Driver::get().cuFuncGetParamInfo;
  if (!get) return "";
  std::size_t count = 0, offset = 0, size = 0;
  std::vector<std::size_t> sizes;
  while (get(f, count, &offset, &size) == CUDA_SUCCESS) {
    sizes.push_back(size);
    ++count;
    if (count > 4096) return "";  // not a parameter list: the driver answered nonsense
  }
  if (count != spec.arguments.size())
    return fmt::format("kernel {} takes {} parameters, the problem passes {} arguments", spec.kernel_name, count,
                       spec.arguments.size());
  for (std::size_t i = 0; i < count; ++i) {
    const ArgumentSpec& a = problem.data()[problem.data_for(config, spec.arguments[i])];  // a Tunable's selected variant
    const std::size_t want = a.is_vector ? sizeof(CUdeviceptr) : element_size(a.type);
    if (sizes[i] != want)
      return fmt::format("kernel {}'s parameter {} is {} bytes, argument '{}' ({} {}) is {}", spec.kernel_name, i,
                         sizes[i], a.name, a.is_vector ? "Vector of" : "Scalar", element_type_name(a.type), want);
  }
  return "";
}

}  // namespace

ResolvedLaunches resolve_launches(const Module& module, const KernelProblem& problem, const Config& config,
                                  const ProblemInstance& instance, const DeviceLimits& limits,
                                  const std::vector<std::string>& lowered_names) {
  ResolvedLaunches out;
  const std::vector<std::string> names = problem.kernel_names();
  if (!lowered_names.empty() && lowered_names.size() != names.size())
    throw std::logic_error(fmt::format("resolve_launches: {} lowered names for {} kernels", lowered_names.size(),
                                       names.size()));
  for (const PlannedLaunch& planned : problem.plan(config, instance)) {
    const LaunchGeometry& g = planned.geometry;
    // A C++ kernel's symbol is its mangled name (`_Z6matmulIfLi16EEvPfS0_S0_`), NVRTC's lowering.
    const auto at = std::find(names.begin(), names.end(), planned.spec->kernel_name) - names.begin();
    CUfunction f = module.function(lowered_names.empty() ? planned.spec->kernel_name
                                                         : lowered_names[static_cast<std::size_t>(at)]);
    if (std::string m = argument_mismatch(f, problem, *planned.spec, config); !m.empty()) {
      out.refused = std::move(m);
      return out;
    }
    const std::uint64_t threads = std::uint64_t{g.block[0]} * g.block[1] * g.block[2];
    KernelResources used = function_resources(f, static_cast<unsigned>(threads), g.dynamic_shared_bytes);
    auto record = [&out](const KernelResources& r) {
      if (out.resources) out.resources->combine(r);
      else out.resources = r;
    };
    const int max_threads = Module::attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    if (threads > static_cast<std::uint64_t>(max_threads)) {
      record(used);
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
        record(used);
        out.refused = fmt::format("too many resources requested for launch of {}: {} bytes of shared memory, "
                                  "the device allows {}",
                                  planned.spec->kernel_name, total, limits.max_shared_per_block_optin);
        return out;
      }
      CUTUNE_CU(CU_FN(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(g.dynamic_shared_bytes)));
    }
    record(with_occupancy(used, f, limits));
    out.launches.push_back({f, g, planned.spec});
  }
  return out;
}

}  // namespace cutune::cuda
