#include "verify_borrowed.hpp"

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/output_compare.hpp"

namespace cutune::loader::detail {
namespace {

/// The arguments of one run on the device: fresh copies of the inputs, WriteOnly ones
/// poisoned (cuda::upload_for_verification), and the launch parameters pointing at them.
/// Neither copyable nor movable: the parameters point into its own members.
class DeviceRun {
 public:
  explicit DeviceRun(const std::vector<HostArgument>& inputs)
      : buffers_(inputs.size()), pointers_(inputs.size()), scalars_(inputs.size()), args_(inputs.size()) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].spec->is_vector) {
        scalars_[i] = inputs[i];
        args_[i] = scalars_[i].bytes.data();
        continue;
      }
      buffers_[i] = cuda::upload_for_verification(inputs[i]);
      pointers_[i] = buffers_[i].buffer.get();
      args_[i] = &pointers_[i];
    }
  }
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  const std::vector<void*>& args() const { return args_; }
  const cuda::VerificationBuffer& buffer(std::size_t i) const { return buffers_[i]; }

 private:
  std::vector<cuda::VerificationBuffer> buffers_;
  std::vector<CUdeviceptr> pointers_;
  std::vector<HostArgument> scalars_;  ///< scalar parameters point into these
  std::vector<void*> args_;
};

}  // namespace

VerifyResult compare_with_default(const KernelProblem& problem, const ProblemInstance& instance,
                                  const TunedKernel& reference, const TunedKernel& candidate) {
  const std::vector<HostArgument> inputs = make_host_arguments(problem, instance, /*seed=*/1);
  const DeviceRun expected(inputs);
  reference.launch(expected.args());
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const DeviceRun got(inputs);
  // The tuner's verification (cuda::verify_run): on the device, nothing is downloaded
  // unless an element differs.
  std::vector<cuda::OutputCheck> checks;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].spec->output) continue;
    checks.push_back({inputs[i].spec, inputs[i].count, problem.tolerance_of(i), expected.buffer(i).buffer.get(),
                      got.buffer(i).buffer.get(), got.buffer(i).poisoned, {}});
  }
  std::optional<cuda::OutputComparator> comparator;
  return cuda::verify_run(comparator, [&] { candidate.launch(got.args()); }, checks);
}

}  // namespace cutune::loader::detail
