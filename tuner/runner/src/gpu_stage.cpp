#include "cutune/runner/gpu_stage.hpp"

#include <fmt/format.h>

#include <chrono>

#include "cutune/measure/statistics.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/templates/references.hpp"

namespace cutune::runner {

GpuStage::GpuStage(const KernelProblem& problem, const ProblemInstance& instance, int ordinal,
                   measure::TimingSettings timing, std::uint64_t data_seed)
    : problem_(problem), instance_(instance), context_(ordinal), limits_(cuda::limits(ordinal)),
      timing_(timing) {
  initial_ = make_host_arguments(problem, instance, data_seed);
  if (!problem.reference().empty()) {
    auto ref = templates::find_reference(problem.reference());
    if (!ref)
      throw InputError(fmt::format("{}: cutune.Reference: no CPU reference named '{}'",
                                   problem.json_file().string(), problem.reference()));
    expected_ = initial_;
    ref(instance_, expected_);
    verification_source_ = "reference";
  } else {
    verification_source_ = "default configuration";
  }
  buffers_.resize(initial_.size());
  pristine_.resize(initial_.size());
  poisoned_.resize(initial_.size());
  pointers_.resize(initial_.size());
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    auto& a = initial_[i];
    if (a.spec->is_vector) {
      buffers_[i] = cuda::DeviceBuffer(a.bytes.size());
      pointers_[i] = buffers_[i].get();
      buffers_[i].upload(a.bytes.data(), a.bytes.size());
      params_.push_back(&pointers_[i]);
      if (a.spec->access != AccessType::ReadOnly || a.spec->output) {
        pristine_[i] = cuda::DeviceBuffer(a.bytes.size());
        pristine_[i].upload(a.bytes.data(), a.bytes.size());
      }
      if (a.spec->output) {
        HostArgument p = a;
        poison(p);
        poisoned_[i] = cuda::DeviceBuffer(p.bytes.size());
        poisoned_[i].upload(p.bytes.data(), p.bytes.size());
      }
    } else {
      params_.push_back(a.bytes.data());
    }
  }
}

std::size_t GpuStage::total_argument_bytes() const {
  std::size_t n = 0;
  for (const auto& a : initial_) n += a.spec->is_vector ? a.bytes.size() : 0;
  return n;
}

void GpuStage::restore_arguments(bool poison_outputs) {
  // Device-to-device from copies made once: a previous configuration may have left
  // scratch state (counters, partial sums) behind, and outputs are poisoned before the
  // verification run so that an unwritten element shows.
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    const cuda::DeviceBuffer* from = nullptr;
    if (initial_[i].spec->output && poison_outputs && poisoned_[i].bytes())
      from = &poisoned_[i];
    else if (pristine_[i].bytes())
      from = &pristine_[i];
    if (from)
      CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(buffers_[i].get(), from->get(), from->bytes(), nullptr));
  }
}

GpuEvaluation GpuStage::evaluate(const Config& config, const std::vector<char>& cubin) {
  GpuEvaluation ev;
  try {
    cuda::Module module(cubin);
    measure::LaunchSequence launches;
    for (const PlannedLaunch& planned : problem_.plan(config, instance_)) {
      const LaunchGeometry& g = planned.geometry;
      CUfunction f = module.function(planned.spec->kernel_name);
      const std::uint64_t threads = std::uint64_t{g.block[0]} * g.block[1] * g.block[2];
      const int max_threads = cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      if (threads > static_cast<std::uint64_t>(max_threads)) {
        // Refused before launching: the kernel's registers (or the device) allow fewer threads.
        ev.status = db::Status::Runtime;
        ev.error = fmt::format("too many resources requested for launch of {}: {} threads per block, "
                               "the kernel allows {} ({} registers per thread)",
                               planned.spec->kernel_name, threads, max_threads,
                               cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS));
        return ev;
      }
      if (g.dynamic_shared_bytes > 48 * 1024)
        CUTUNE_CU(CU_FN(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(g.dynamic_shared_bytes)));
      measure::Launch launch{f, g.grid, g.block, g.dynamic_shared_bytes, {}};
      for (std::size_t a : planned.spec->arguments) launch.params.push_back(params_[a]);
      launches.push_back(std::move(launch));
    }
    if (launches.empty()) {
      ev.status = db::Status::Constraints;
      ev.error = "no launch's Condition holds for this configuration";
      return ev;
    }

    // Verification run: fresh scratch state, poisoned outputs, every element checked.
    auto t0 = std::chrono::steady_clock::now();
    restore_arguments(/*poison_outputs=*/true);
    measure::launch(launches);
    CUTUNE_CU(CU_FN(cuCtxSynchronize)());
    std::vector<HostArgument> got;
    for (std::size_t i = 0; i < initial_.size(); ++i) {
      if (!initial_[i].spec->output) continue;
      HostArgument out = initial_[i];
      buffers_[i].download(out.bytes.data(), out.bytes.size());
      got.push_back(std::move(out));
    }
    if (expected_.empty()) {
      // No CPU reference: the first configuration that runs (the default) defines the answer.
      expected_ = initial_;
      std::size_t k = 0;
      for (auto& e : expected_)
        if (e.spec->output) e = got[k++];
    } else {
      std::size_t k = 0;
      for (const auto& e : expected_) {
        if (!e.spec->output) continue;
        VerifyResult v = compare(e, got[k++], problem_.tolerance());
        if (!v.ok) {
          ev.status = db::Status::Correctness;
          ev.error = v.message;
          break;
        }
      }
    }
    ev.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ev.status != db::Status::Ok) return ev;

    restore_arguments(/*poison_outputs=*/false);
    ev.samples_ms = measure::time_launches(launches, timing_);
    ev.median_ms = measure::summarize(ev.samples_ms).median;
  } catch (const cuda::DriverError& e) {
    ev.status = db::Status::Runtime;
    ev.error = e.what();
    ev.context_lost = e.sticky();
    ev.samples_ms.clear();
  } catch (const InputError& e) {
    ev.status = db::Status::Runtime;
    ev.error = e.what();
  }
  return ev;
}

}  // namespace cutune::runner
