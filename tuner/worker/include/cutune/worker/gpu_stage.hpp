#pragma once
// The GPU stage: owns the context, the problem's device buffers (and, when the data fits
// in L2, rotated copies of them), the expected outputs and the sampler; verifies and
// measures compiled configurations. It runs in the GPU worker process (`cutune-worker gpu`,
// worker_main.cpp), which a sticky CUDA error may end without taking the tuner with it;
// the vendor benchmark and `cutune measure` use it in their own process.
#include <array>
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/nvml.hpp"
#include "cutune/cuda/output_compare.hpp"
#include "cutune/measure/sampler.hpp"
#include "cutune/measure/statistics.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/status.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/worker/external_verifier.hpp"
#include "cutune/worker/measure_options.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::worker {

class GpuStage {
 public:
  /// Allocates and fills the arguments, computes the reference outputs (CPU).
  /// Throws InputError when the problem names an unknown reference.
  GpuStage(const KernelProblem& problem, const ProblemInstance& instance, int ordinal,
           MeasureOptions options, std::uint64_t data_seed);
  GpuStage(const GpuStage&) = delete;  // holds the context and raw argument pointers
  GpuStage& operator=(const GpuStage&) = delete;

  /// Verifies, then screens: samples until the screening criterion stops, stopping early
  /// once the configuration is clearly slower than `best_ms` (the best screening median
  /// so far). `thorough` measures with the thorough criterion instead.
  /// `lowered_names`: the cubin's symbol of each of the problem's kernel_names()
  /// (jit::CompileResult::lowered_names); empty: looked up by the names as written.
  /// Without a reference for some output, the first configuration that runs correctly
  /// defines its expected output (GpuEvaluation::defined_expected).
  GpuEvaluation evaluate(const Config& config, const std::vector<char>& cubin,
                         const std::vector<std::string>& lowered_names, std::optional<double> best_ms,
                         bool thorough = false);

  /// Re-measures verified candidates thoroughly, interleaved, back to back (the finalists
  /// of a search). One evaluation per candidate, in order.
  std::vector<GpuEvaluation> remeasure(const std::vector<Candidate>& candidates);

  /// An independent timing: one event pair around `launches` back-to-back launch sequences
  /// on the same (warm) data, after a warm-up; milliseconds per sequence.
  double back_to_back_ms(const Config& config, const std::vector<char>& cubin,
                         const std::vector<std::string>& lowered_names, std::size_t launches);

  /// Kernel Tuner's run_kernel: one launch sequence on the arguments' initial data (as
  /// uploaded, whatever earlier runs left), unverified and untimed; every argument's bytes
  /// after it. The arguments stay as the run left them: for a stage that does nothing else
  /// (`cutune run`), not between evaluations.
  RanOnce run_once(const Config& config, const std::vector<char>& cubin,
                   const std::vector<std::string>& lowered_names);

  /// What each output is checked against.
  const VerificationPlan& verification() const { return plan_; }
  /// The same for the log and the report: VerificationPlan::describe ("reference",
  /// "ReferenceArguments", "default configuration", "none", or per output).
  const std::string& verification_source() const { return verification_source_; }
  std::size_t total_argument_bytes() const;
  /// Flush, Rotate (argument_sets() sets) or Warm.
  const L2Method& l2_method() const { return l2_method_; }
  std::size_t argument_sets() const { return 1 + extra_sets_; }
  /// The event pair's interval around no work (measure::Sampler::timer_floor_ms).
  double timer_floor_ms() { return sampler_->timer_floor_ms(); }
  /// Milliseconds per phase of the constructor after the context: waiting for the host
  /// data, upload, rotation, sampler.
  const std::vector<std::pair<std::string, double>>& setup_ms() const { return setup_ms_; }
  /// Host data and reference, in milliseconds: computed while the context was created.
  const std::vector<std::pair<std::string, double>>& overlapped_ms() const { return overlapped_ms_; }

  /// What the CPU prepares before any GPU work: inputs, and the reference's outputs.
  struct HostData {
    std::vector<HostArgument> initial, expected;
    bool has_reference = false;
    double host_data_ms = 0.0, reference_ms = 0.0;
  };

 private:
  struct Loaded {
    cuda::Module module;
    std::vector<measure::LaunchSequence> rotation;  ///< one sequence per argument set
  };
  /// Loads the cubin and plans the launches; on a failure before any launch fills `ev`.
  std::optional<Loaded> load(const Config& config, const std::vector<char>& cubin,
                             const std::vector<std::string>& lowered_names, GpuEvaluation& ev);
  /// Runs once on fresh, poisoned outputs and compares; fills ev.status/error/verify_ms.
  void verify(const measure::LaunchSequence& seq, GpuEvaluation& ev);
  /// After verify() passed: the outputs it left to the external verifier; a rejection
  /// fills ev.status/error, the time counts in ev.verify_ms.
  void verify_externally(const Config& config, GpuEvaluation& ev);
  /// Marks the data `configs` pass (the variants they select) as active_.
  void set_active(const std::vector<const Config*>& configs);
  void restore_arguments(bool poison_outputs);
  /// Queues the copies that give read-write arguments their initial data again (before
  /// every sample, ahead of the L2 flush).
  void restore_read_write();
  /// Scratch (read-write) arguments of the rotated sets back to their initial contents.
  void restore_rotated_scratch();
  MeasuredStats finish(MeasurementLevel level, SampleSet set, const measure::LaunchSequence& seq,
                       bool energy);
  std::optional<double> energy_mj_per_launch(const measure::LaunchSequence& seq, double median_ms);
  void set_up_rotation(std::size_t l2_bytes);

  const KernelProblem& problem_;
  ProblemInstance instance_;
  VerificationPlan plan_;  ///< per argument: reference, default or none
  std::future<HostData> host_data_;  ///< started before the context: see prepare_host_data
  cuda::Context context_;
  DeviceIdentity device_;
  cuda::DeviceLimits limits_;
  MeasureOptions options_;
  cuda::NvmlDevice nvml_;
  std::optional<cuda::NvmlMonitor> nvml_monitor_;  ///< screening's readings, off the measurement's path
  std::optional<measure::Sampler> sampler_;
  /// Inputs as generated, per datum (KernelProblem::data()): the vectors below are indexed alike.
  std::vector<HostArgument> initial_;
  std::vector<HostArgument> expected_;  ///< outputs the reference computed (freed once on the device)
  std::optional<cuda::OutputComparator> comparator_;
  std::optional<ExternalVerifier> verifier_;  ///< MeasureOptions::verifier, connected at set-up
  /// Per argument: the expected output on the device (reference outputs from the start,
  /// default-mode outputs once the first configuration defined them); empty when unchecked.
  std::vector<cuda::DeviceBuffer> expected_dev_;
  /// Per datum: its expected output is defined (VerifyMode::Default).
  std::vector<bool> default_known_;
  /// Per datum: passed by the configuration(s) at hand (set_active); only these are restored,
  /// verified and returned. All true without Tunable arguments.
  std::vector<bool> active_;
  /// Arguments the kernel reads and writes (ReadWrite, and outputs that are not WriteOnly):
  /// given their initial data before every launch, verification and samples alike.
  std::vector<std::size_t> read_write_;
  std::vector<cuda::DeviceBuffer> buffers_;
  std::vector<cuda::DeviceBuffer> pristine_;  ///< initial contents of written arguments
  std::vector<cuda::DeviceBuffer> poisoned_;  ///< poisoned copies of WriteOnly arguments
  std::vector<CUdeviceptr> pointers_;
  std::vector<void*> params_;
  // Rotation: extra_sets_ more copies of every read-only input, slice s of rotated_[i] at
  // s * stride_[i] (rotated_[i] empty for the others, which every set shares); params of
  // set s+1 in rotated_params_[s].
  std::size_t extra_sets_ = 0;
  std::vector<cuda::DeviceBuffer> rotated_;
  std::vector<std::size_t> stride_;
  std::vector<std::vector<CUdeviceptr>> rotated_pointers_;
  std::vector<std::vector<void*>> rotated_params_;
  std::string verification_source_;
  L2Method l2_method_;
  std::vector<std::pair<std::string, double>> setup_ms_;
  std::vector<std::pair<std::string, double>> overlapped_ms_;
};

}  // namespace cutune::worker
