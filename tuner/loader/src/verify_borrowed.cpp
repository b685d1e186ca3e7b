#include "verify_borrowed.hpp"

#include <algorithm>

#include "cutune/cuda/device.hpp"
#include "cutune/model/host_data.hpp"

namespace cutune::loader::detail {
namespace {

/// Runs `kernel` once on fresh copies of `inputs` (outputs poisoned, so an element the
/// kernel never writes shows) and returns the output arguments.
std::vector<HostArgument> run_once(const TunedKernel& kernel, const std::vector<HostArgument>& inputs) {
  std::vector<cuda::DeviceBuffer> buffers(inputs.size());
  std::vector<CUdeviceptr> pointers(inputs.size());
  std::vector<HostArgument> scalars = inputs;  // launch parameters point into these
  std::vector<void*> args(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spec->is_vector) {
      args[i] = scalars[i].bytes.data();
      continue;
    }
    HostArgument initial = inputs[i];
    if (initial.spec->output) poison(initial);
    buffers[i] = cuda::DeviceBuffer(initial.bytes.size());
    buffers[i].upload(initial.bytes.data(), initial.bytes.size());
    pointers[i] = buffers[i].get();
    args[i] = &pointers[i];
  }
  kernel.launch(args);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  std::vector<HostArgument> outputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spec->output) continue;
    HostArgument out = inputs[i];
    buffers[i].download(out.bytes.data(), out.bytes.size());
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace

CheckResult compare_with_default(const KernelProblem& problem, const ProblemInstance& instance,
                                 const TunedKernel& reference, const TunedKernel& candidate) {
  const std::vector<HostArgument> inputs = make_host_arguments(problem, instance, /*seed=*/1);
  const auto expected = run_once(reference, inputs);
  const auto got = run_once(candidate, inputs);
  CheckResult r;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const VerifyResult v = compare(expected[i], got[i], problem.tolerance());
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
