#include "verify_borrowed.hpp"

#include <algorithm>

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/output_compare.hpp"
#include "cutune/model/host_data.hpp"

namespace cutune::loader::detail {
namespace {

/// The arguments of one run on the device: fresh copies of `inputs`, WriteOnly ones
/// poisoned (so an element the kernel never writes shows), the others with their data.
struct DeviceRun {
  std::vector<cuda::DeviceBuffer> buffers;
  std::vector<bool> poisoned;
};

/// Runs `kernel` once on fresh copies of `inputs`; the outputs stay on the device.
DeviceRun run_once(const TunedKernel& kernel, const std::vector<HostArgument>& inputs) {
  DeviceRun run{std::vector<cuda::DeviceBuffer>(inputs.size()), std::vector<bool>(inputs.size(), false)};
  std::vector<CUdeviceptr> pointers(inputs.size());
  std::vector<HostArgument> scalars = inputs;  // launch parameters point into these
  std::vector<void*> args(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spec->is_vector) {
      args[i] = scalars[i].bytes.data();
      continue;
    }
    HostArgument initial = inputs[i];
    if (initial.spec->access == AccessType::WriteOnly) {
      poison(initial);
      run.poisoned[i] = true;
    }
    run.buffers[i] = cuda::DeviceBuffer(initial.bytes.size());
    run.buffers[i].upload(initial.bytes.data(), initial.bytes.size());
    pointers[i] = run.buffers[i].get();
    args[i] = &pointers[i];
  }
  kernel.launch(args);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  return run;
}

}  // namespace

CheckResult compare_with_default(const KernelProblem& problem, const ProblemInstance& instance,
                                 const TunedKernel& reference, const TunedKernel& candidate) {
  const std::vector<HostArgument> inputs = make_host_arguments(problem, instance, /*seed=*/1);
  const DeviceRun expected = run_once(reference, inputs);
  const DeviceRun got = run_once(candidate, inputs);
  // The tuner's comparison (output_compare.hpp), on the device: nothing is downloaded
  // unless an element differs.
  cuda::OutputComparator comparator;
  CheckResult r;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spec->output) continue;
    const VerifyResult v = comparator.compare(*inputs[i].spec, expected.buffers[i].get(), got.buffers[i].get(),
                                              inputs[i].count, problem.tolerance_of(i), got.poisoned[i]);
    r.max_error = std::max(r.max_error, v.max_error);
    if (!v.ok) {
      r.ok = false;
      r.message = v.message;
      break;
    }
  }
  return r;
}

}  // namespace cutune::loader::detail
