#pragma once
// The GPU stage: owns the context, the problem's device buffers and the expected outputs;
// verifies and times one compiled configuration at a time. Issue 5 moves it into a worker
// process; its interface (config + cubin in, evaluation out) is already the one to ship.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/measure/benchmark.hpp"
#include "cutune/model/host_data.hpp"

namespace cutune::runner {

struct GpuEvaluation {
  db::Status status = db::Status::Ok;
  std::string error;
  std::vector<double> samples_ms;
  double median_ms = 0.0;
  double verify_ms = 0.0;
  bool context_lost = false;  ///< a sticky error: this process can do no more GPU work
};

class GpuStage {
 public:
  /// Allocates and fills the arguments, computes the reference outputs (CPU).
  /// Throws InputError when the problem names an unknown reference.
  GpuStage(const KernelProblem& problem, const ProblemInstance& instance, int ordinal,
           measure::TimingSettings timing, std::uint64_t data_seed);
  GpuStage(const GpuStage&) = delete;  // holds the context and raw argument pointers
  GpuStage& operator=(const GpuStage&) = delete;

  GpuEvaluation evaluate(const Config& config, const std::vector<char>& cubin);
  /// Whether outputs are checked against a CPU reference ("reference") or against the
  /// first configuration that ran ("default configuration"), as Kernel Tuner does.
  const std::string& verification_source() const { return verification_source_; }
  std::size_t total_argument_bytes() const;

 private:
  void restore_arguments(bool poison_outputs);

  const KernelProblem& problem_;
  ProblemInstance instance_;
  cuda::Context context_;
  cuda::DeviceLimits limits_;
  measure::TimingSettings timing_;
  std::vector<HostArgument> initial_;   ///< inputs as generated
  std::vector<HostArgument> expected_;  ///< outputs the reference computed (empty until known)
  std::vector<cuda::DeviceBuffer> buffers_;
  std::vector<cuda::DeviceBuffer> pristine_;  ///< initial contents of written arguments
  std::vector<cuda::DeviceBuffer> poisoned_;  ///< poisoned copies of outputs
  std::vector<CUdeviceptr> pointers_;
  std::vector<void*> params_;
  std::string verification_source_;
};

}  // namespace cutune::runner
