#include "cutune/worker/gpu_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <deque>
#include <future>
#include <thread>

#include "cutune/cuda/launch_plan.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/templates/references.hpp"

namespace cutune::worker {
namespace {

/// Rotated argument sets together span at least this many L2 sizes: a set is
/// then touched again only after twice the L2's worth of other sets has gone through it.
constexpr std::size_t kRotationFootprintL2s = 3;
/// At most this many argument sets (tiny problems would otherwise need tens of thousands).
constexpr std::size_t kMaxArgumentSets = 4096;
/// Slices of rotated arguments start on this boundary (the driver's allocation alignment).
constexpr std::size_t kSliceAlignment = 256;

// Inputs and the CPU reference's outputs: no GPU needed, so computed on a thread of their own
// while the driver creates the context (on the H200 the context took 345 ms and these 327 ms
// of a 770 ms start-up, results/nvidia-h200/throughput.json).
GpuStage::HostData prepare_host_data(const KernelProblem& problem, const ProblemInstance& instance,
                                     std::uint64_t data_seed, bool wants_reference) {
  using Clock = std::chrono::steady_clock;
  GpuStage::HostData d;
  auto t0 = Clock::now();
  d.initial = make_host_arguments(problem, instance, data_seed);
  auto t1 = Clock::now();
  d.host_data_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (!wants_reference) return d;  // every output verified against the default, or not at all
  if (problem.reference().empty()) {
    // No CPU reference: T1's ReferenceArguments, when given, are the expected outputs (an
    // output none of them names is not checked); else the default configuration's output is.
    d.expected = reference_outputs(problem, instance);
    return d;
  }
  templates::ReferenceFn ref = templates::find_reference(problem.reference());
  if (!ref)
    throw InputError(fmt::format("{}: cutune.Reference: no CPU reference named '{}'",
                                 problem.json_file().string(), problem.reference()));
  // The reference reads the inputs and writes the outputs: it borrows the inputs (moved
  // there and back: no copy of what may be gigabytes) and gets copies of the outputs.
  d.expected.resize(d.initial.size());
  for (std::size_t i = 0; i < d.initial.size(); ++i)
    d.expected[i] = d.initial[i].spec->output ? d.initial[i] : std::move(d.initial[i]);
  ref(instance, d.expected);
  for (std::size_t i = 0; i < d.initial.size(); ++i)
    if (!d.expected[i].spec->output) d.initial[i] = std::move(d.expected[i]);
  d.has_reference = true;
  d.reference_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  return d;
}

}  // namespace

GpuStage::GpuStage(const KernelProblem& problem, const ProblemInstance& instance, int ordinal,
                   MeasureOptions options, std::uint64_t data_seed)
    : problem_(problem), instance_(instance), plan_(plan_verification(problem, options.verify)),
      host_data_(std::async(std::launch::async, prepare_host_data, std::cref(problem), std::cref(instance),
                            data_seed, plan_.any(VerifyMode::Reference))),
      context_(ordinal), device_(cuda::identify(ordinal)), limits_(cuda::limits(ordinal)), options_(options),
      nvml_(device_.uuid) {
  auto t = std::chrono::steady_clock::now();
  auto phase = [&](const char* name) {  // where start-up time goes (TuneReport::gpu_setup_ms)
    const auto now = std::chrono::steady_clock::now();
    setup_ms_.emplace_back(name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  };
  {
    HostData d = host_data_.get();
    verification_source_ = plan_.describe(problem_);
    initial_ = std::move(d.initial);
    expected_ = std::move(d.expected);
    // Overlapped with the context: reported beside the phases, not added to them.
    overlapped_ms_ = {{"host_data", d.host_data_ms}, {"reference", d.reference_ms}};
  }
  phase("host_data_wait");
  buffers_.resize(initial_.size());
  expected_dev_.resize(initial_.size());
  pristine_.resize(initial_.size());
  poisoned_.resize(initial_.size());
  pointers_.resize(initial_.size());
  default_known_.assign(initial_.size(), false);
  active_.assign(initial_.size(), true);
  // Index i runs over the problem's data: every argument, and every variant of a Tunable
  // argument, each uploaded once (as Kernel Tuner uploads them); a configuration picks its
  // variants' pointers at load().
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    auto& a = initial_[i];
    const std::size_t argument = problem_.argument_of_data(i);
    if (a.spec->is_vector) {
      buffers_[i] = cuda::DeviceBuffer(a.bytes.size());
      pointers_[i] = buffers_[i].get();
      buffers_[i].upload(a.bytes.data(), a.bytes.size());
      params_.push_back(&pointers_[i]);
      // What the kernel may write: ReadWrite and WriteOnly arguments, and outputs. Only
      // WriteOnly ones are poisoned (an element left unwritten then shows); the others the
      // kernel may read, so they get their initial data before every launch, as Kernel
      // Tuner re-copies arguments before its check. An output with no AccessType (T1 names
      // no default; ArgumentSpec reads it as ReadOnly) counts as ReadWrite: poisoning what a
      // kernel reads, GEMM's C with beta != 0, failed every configuration (NaN in, NaN out).
      const bool written = a.spec->access != AccessType::ReadOnly || a.spec->output || plan_.checked(argument);
      if (written) {
        pristine_[i] = cuda::DeviceBuffer(a.bytes.size());
        pristine_[i].upload(a.bytes.data(), a.bytes.size());
      }
      if (a.spec->access == AccessType::WriteOnly) {
        poisoned_[i] = cuda::upload_for_verification(a).buffer;
      } else if (written) {
        read_write_.push_back(i);
      }
      if (plan_.modes[argument] == VerifyMode::Reference) {
        const HostArgument& e = expected_.at(i);
        if (e.bytes.size() != a.bytes.size())
          throw InputError(fmt::format("{}: output '{}' has no reference data", problem_.json_file().string(),
                                       a.spec->name));
        expected_dev_[i] = cuda::DeviceBuffer(e.bytes.size());
        expected_dev_[i].upload(e.bytes.data(), e.bytes.size());
      }
    } else {
      params_.push_back(a.bytes.data());
    }
  }

  expected_.clear();  // on the device now
  if (plan_.any(VerifyMode::Reference) || plan_.any(VerifyMode::Default)) comparator_.emplace();
  phase("upload");
  const std::size_t l2 = static_cast<std::size_t>(std::max(0, device_.l2_bytes));
  measure::SamplerSettings ss = options_.sampler;
  if (!options_.cold_l2) {
    ss.flush_l2 = false;
    l2_method_ = L2Method{L2Method::Kind::Warm, 1};
  } else {
    if (options_.rotate_when_fits) set_up_rotation(l2);
    ss.flush_l2 = extra_sets_ == 0;
    l2_method_ = extra_sets_ ? L2Method{L2Method::Kind::Rotate, argument_sets()} : L2Method{L2Method::Kind::Flush, 1};
  }
  phase("rotation");
  sampler_.emplace(l2, device_.sm_count, device_.sm_clock_khz / 1000.0, ss);
  if (!read_write_.empty()) sampler_->set_before_sample([this] { restore_read_write(); });
  if (nvml_.available()) nvml_monitor_.emplace(nvml_, std::chrono::milliseconds(50));
  phase("sampler");
  if (!options_.verifier.empty()) {
    std::vector<std::string> names;
    for (const ArgumentSpec& a : problem_.arguments()) names.push_back(a.name);
    verifier_.emplace(options_.verifier, names);
  }
}

void GpuStage::set_up_rotation(std::size_t l2_bytes) {
  // Data that fits in L2 would be served from it after the first sample. Input buffers are
  // rotated: several copies whose footprint is at least kRotationFootprintL2s x
  // the L2, so that a set is cold again when its turn comes. Only inputs: rotating the
  // outputs too left the earlier samples' outputs as dirty lines in L2, written back inside
  // the next samples; on an H100 that read 12% (vector_add 2^20) and 29% (transpose 2048^2)
  // longer than after a flush (results/nvidia-h100-80gb-hbm3/flush.json, session 5).
  auto rotates = [](const HostArgument& a) {
    return a.spec->is_vector && a.spec->access == AccessType::ReadOnly && !a.spec->output && !a.spec->constant_memory;
  };
  auto aligned = [](std::size_t bytes) { return (bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment; };
  std::size_t footprint = 0, inputs = 0;
  for (const auto& a : initial_) {
    if (!a.spec->is_vector) continue;
    footprint += aligned(a.bytes.size());
    if (rotates(a)) inputs += aligned(a.bytes.size());
  }
  if (l2_bytes == 0 || inputs == 0 || footprint > l2_bytes) return;
  // Read-write arguments get their initial data back before every sample; that copy leaves
  // them in L2 (dirty), so only a flush after it keeps the sample cold.
  if (!read_write_.empty()) return;
  const std::size_t sets = std::min(kMaxArgumentSets, (kRotationFootprintL2s * l2_bytes + inputs - 1) / inputs);
  if (sets < 2) return;
  extra_sets_ = sets - 1;
  rotated_.resize(initial_.size());
  stride_.assign(initial_.size(), 0);
  rotated_pointers_.assign(extra_sets_, pointers_);
  rotated_params_.assign(extra_sets_, params_);
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    if (!rotates(initial_[i])) continue;  // outputs and scratch: the one buffer, every set
    const std::size_t bytes = initial_[i].bytes.size();
    stride_[i] = aligned(std::max<std::size_t>(bytes, 1));
    rotated_[i] = cuda::DeviceBuffer(stride_[i] * extra_sets_);
    for (std::size_t s = 0; s < extra_sets_; ++s) {
      const CUdeviceptr slice = rotated_[i].get() + s * stride_[i];
      if (bytes) CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(slice, buffers_[i].get(), bytes, nullptr));
      rotated_pointers_[s][i] = slice;
    }
  }
  // Param i of set s points at that set's pointer (vector) or the shared scalar value.
  for (std::size_t s = 0; s < extra_sets_; ++s)
    for (std::size_t i = 0; i < initial_.size(); ++i)
      if (initial_[i].spec->is_vector) rotated_params_[s][i] = &rotated_pointers_[s][i];
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
}

void GpuStage::set_active(const std::vector<const Config*>& configs) {
  if (!problem_.has_variants()) return;  // every datum is every configuration's
  std::fill(active_.begin(), active_.end(), false);
  for (const Config* c : configs)
    for (std::size_t a = 0; a < problem_.arguments().size(); ++a) active_[problem_.data_for(*c, a)] = true;
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
    if (!active_[i]) continue;  // a variant this configuration does not pass: untouched
    const cuda::DeviceBuffer* from = nullptr;
    if (poison_outputs && poisoned_[i].bytes())
      from = &poisoned_[i];
    else if (pristine_[i].bytes())
      from = &pristine_[i];
    if (from)
      CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(buffers_[i].get(), from->get(), from->bytes(), nullptr));
  }
}

void GpuStage::restore_read_write() {
  for (std::size_t i : read_write_)
    if (active_[i])
      CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(buffers_[i].get(), pristine_[i].get(), pristine_[i].bytes(), nullptr));
}

void GpuStage::restore_rotated_scratch() {
  // Outputs are overwritten by every launch; only read-write scratch carries state from
  // one configuration to the next.
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    const auto& spec = *initial_[i].spec;
    if (!active_[i] || !spec.is_vector || spec.output || spec.access != AccessType::ReadWrite || !pristine_[i].bytes() ||
        i >= rotated_.size() || !rotated_[i].bytes())
      continue;
    for (std::size_t s = 0; s < extra_sets_; ++s)
      CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(rotated_pointers_[s][i], pristine_[i].get(),
                                         pristine_[i].bytes(), nullptr));
  }
}

std::optional<GpuStage::Loaded> GpuStage::load(const Config& config, const std::vector<char>& cubin,
                                               const std::vector<std::string>& lowered_names, GpuEvaluation& ev) {
  Loaded l{cuda::Module(cubin), std::vector<measure::LaunchSequence>(argument_sets())};
  // Kernel Tuner's constant memory (T1 "MemType": "Constant"): the argument's data goes to
  // the module's __constant__ symbol of the same name, once per loaded module.
  for (const HostArgument& a : initial_) {
    if (!a.spec->constant_memory) continue;
    const auto symbol = l.module.global(a.spec->name);
    if (!symbol || symbol->second < a.bytes.size()) {
      ev.status = Status::Runtime;
      ev.error = fmt::format("constant-memory argument '{}': the module has no __constant__ symbol '{}' of at least "
                             "{} bytes", a.spec->name, a.spec->name, a.bytes.size());
      return std::nullopt;
    }
    CUTUNE_CU(CU_FN(cuMemcpyHtoD)(symbol->first, a.bytes.data(), a.bytes.size()));
  }
  cuda::ResolvedLaunches resolved = cuda::resolve_launches(l.module, problem_, config, instance_, limits_, lowered_names);
  ev.resources = resolved.resources;
  if (!resolved.refused.empty()) {
    ev.status = Status::Runtime;
    ev.error = std::move(resolved.refused);
    return std::nullopt;
  }
  // Known only now that the module is loaded, and checked before any launch: a configuration
  // the user ruled out for its registers, spills or occupancy costs a compile and a load, no
  // GPU time.
  if (resolved.resources) {
    if (std::string v = problem_.violated_resource_restriction(instance_, config, *resolved.resources); !v.empty()) {
      ev.status = Status::Constraints;
      ev.error = std::move(v);
      return std::nullopt;
    }
  }
  for (const cuda::ResolvedLaunch& r : resolved.launches) {
    const LaunchGeometry& g = r.geometry;
    for (std::size_t s = 0; s < argument_sets(); ++s) {
      const auto& params = s == 0 ? params_ : rotated_params_[s - 1];
      measure::Launch launch{r.function, g.grid, g.block, g.dynamic_shared_bytes, {}};
      for (std::size_t a : r.spec->arguments) launch.params.push_back(params[problem_.data_for(config, a)]);
      l.rotation[s].push_back(std::move(launch));
    }
  }
  if (l.rotation.front().empty()) {
    ev.status = Status::Constraints;
    ev.error = "no launch's Condition holds for this configuration";
    return std::nullopt;
  }
  return l;
}

void GpuStage::verify(const measure::LaunchSequence& seq, GpuEvaluation& ev) {
  // Only what the configuration passes is checked: a Tunable output's other variants keep
  // whatever they hold.
  // Verification run (cuda::verify_run, the loader's too): initial data in what the kernel
  // reads, poison in what it only writes, then every checked output compared on the device.
  auto t0 = std::chrono::steady_clock::now();
  std::vector<cuda::OutputCheck> checks;
  for (std::size_t i = 0; i < initial_.size(); ++i) {
    const VerifyMode mode = plan_.modes[problem_.argument_of_data(i)];
    if (mode == VerifyMode::None || !active_[i]) continue;
    const HostArgument& a = initial_[i];
    cuda::OutputCheck c{a.spec, a.count, problem_.tolerance_of(problem_.argument_of_data(i)), expected_dev_[i].get(),
                        buffers_[i].get(), poisoned_[i].bytes() != 0, {}};
    if (mode == VerifyMode::Default && !default_known_[i]) {
      // This configuration is to define the answer: it must at least have written every
      // element (its output against itself fails only where the poison is left).
      c.expected = buffers_[i].get();
      c.prefix = "cannot define the expected output: ";
    } else if (mode == VerifyMode::Default) {
      c.prefix = kDiffersFromDefault;
    }
    checks.push_back(c);
  }
  const VerifyResult v = cuda::verify_run(comparator_, [&] {
    restore_arguments(/*poison_outputs=*/true);
    measure::launch(seq);
  }, checks);
  if (!v.ok) {
    ev.status = Status::Correctness;
    ev.error = v.message;
  }
  if (ev.status == Status::Ok && plan_.any(VerifyMode::Default)) {
    // No reference for these outputs: the first configuration that runs correctly (the
    // default, normally) defines them; its outputs stay on the device as the expected ones.
    // Each variant of a Tunable output is defined by the first configuration passing it.
    for (std::size_t i = 0; i < initial_.size(); ++i) {
      if (plan_.modes[problem_.argument_of_data(i)] != VerifyMode::Default || !active_[i] || default_known_[i]) continue;
      expected_dev_[i] = cuda::DeviceBuffer(buffers_[i].bytes());
      CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(expected_dev_[i].get(), buffers_[i].get(), buffers_[i].bytes(), nullptr));
      default_known_[i] = true;
      ev.defined_expected = true;
    }
    CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  }
  ev.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void GpuStage::verify_externally(const Config& config, GpuEvaluation& ev) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<process::Frame> contents;
  for (std::size_t argument : verifier_->arguments()) {
    const std::size_t i = problem_.data_for(config, argument);  // the variant it passed
    const HostArgument& a = initial_.at(i);
    process::Frame bytes(a.bytes.size(), '\0');
    if (!bytes.empty() && a.spec->is_vector)
      CUTUNE_CU(CU_FN(cuMemcpyDtoH)(bytes.data(), buffers_[i].get(), bytes.size()));
    else if (!bytes.empty())
      std::memcpy(bytes.data(), a.bytes.data(), bytes.size());
    contents.push_back(std::move(bytes));
  }
  ExternalVerifier::Verdict verdict =
      verifier_->check({problem_.space().key(config), config.index, ev.resources}, contents);
  if (!verdict.ok) {
    ev.status = Status::Correctness;
    ev.error = verdict.error.empty() ? "the external verifier rejected the outputs" : verdict.error;
  } else {
    ev.observed = std::move(verdict.observed);
  }
  ev.verify_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::optional<double> GpuStage::energy_mj_per_launch(const measure::LaunchSequence& seq, double median_ms) {
  if (!nvml_.available() || median_ms <= 0) return std::nullopt;
  const auto launches = static_cast<std::size_t>(
      std::clamp(options_.energy_window_s * 1e3 / median_ms, 1.0, 1e6));
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const auto before = nvml_.total_energy_mj();
  for (std::size_t i = 0; i < launches; ++i) measure::launch(seq);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const auto after = nvml_.total_energy_mj();
  // The counter did not advance (too coarse for the window): no figure rather than 0.
  if (!before || !after || *after <= *before) return std::nullopt;
  return static_cast<double>(*after - *before) / static_cast<double>(launches);
}

MeasuredStats GpuStage::finish(MeasurementLevel level, SampleSet set, const measure::LaunchSequence& seq,
                               bool energy) {
  MeasuredStats st;
  st.level = level;
  st.l2 = l2_method_;
  // Throttled through and through: the discarded samples are all there is; say so by
  // keeping them as the data (stop reason and back_offs tell the story).
  if (set.samples_ms.empty()) set.samples_ms = set.discarded_ms;
  st.summary = measure::summarize(set.samples_ms, options_.thorough.confidence);
  st.set = std::move(set);
  // Thorough: fresh readings, counted in wall_ms (a reading costs up to a millisecond).
  // Screening: the monitor's latest, at most 50 ms old (temperature and power change over
  // tens of milliseconds), read on its own thread so that searching does not wait for them.
  if (level != MeasurementLevel::Screening || !nvml_monitor_) {
    const auto t0 = std::chrono::steady_clock::now();
    st.nvml_sm_clock_mhz = nvml_.sm_clock_mhz();
    st.temperature_c = nvml_.temperature_c();
    st.power_w = nvml_.power_w();
    st.set.wall_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    const cuda::NvmlMonitor::Reading r = nvml_monitor_->latest();
    st.nvml_sm_clock_mhz = r.sm_clock_mhz;
    st.temperature_c = r.temperature_c;
    st.power_w = r.power_w;
  }
  // Energy is a separate measurement (a window of back-to-back launches), not sampling.
  if (energy) st.energy_mj_per_launch = energy_mj_per_launch(seq, st.summary.median);
  return st;
}

GpuEvaluation GpuStage::evaluate(const Config& config, const std::vector<char>& cubin,
                                 const std::vector<std::string>& lowered_names, std::optional<double> best_ms,
                                 bool thorough) {
  GpuEvaluation ev;
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](auto t) { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count(); };
  try {
    set_active({&config});
    std::optional<Loaded> loaded = load(config, cubin, lowered_names, ev);
    ev.load_ms = since(t0);
    if (!loaded) return ev;
    verify(loaded->rotation.front(), ev);
    if (ev.status == Status::Ok && verifier_) verify_externally(config, ev);
    if (ev.status != Status::Ok) return ev;
    restore_arguments(/*poison_outputs=*/false);
    restore_rotated_scratch();
    // The verification launch was this configuration's warm-up: it loaded the module and
    // ran the same sequence on the same data (a second warm-up launch cost 0.26 ms per
    // configuration on the H200).
    SampleSet set;
    if (thorough) {
      measure::NoiseCriterion c(options_.thorough);
      set = sampler_->measure(loaded->rotation, c, /*warmed_up=*/true);
    } else {
      measure::ScreeningCriterion c(options_.screening, best_ms);
      set = sampler_->measure(loaded->rotation, c, /*warmed_up=*/true);
    }
    ev.stats = finish(thorough ? MeasurementLevel::Thorough : MeasurementLevel::Screening, std::move(set),
                      loaded->rotation.front(),
                      thorough || options_.energy_every_config);
    loaded.reset();  // the module's unload counts too
    ev.stage_ms = since(t0);
  } catch (const cuda::DriverError& e) {
    ev.status = Status::Runtime;
    ev.error = e.what();
    ev.context_lost = e.sticky();
    ev.stats.reset();
  } catch (const InputError& e) {
    ev.status = Status::Runtime;
    ev.error = e.what();
    ev.stats.reset();
  }
  return ev;
}

double GpuStage::back_to_back_ms(const Config& config, const std::vector<char>& cubin,
                                 const std::vector<std::string>& lowered_names, std::size_t launches) {
  GpuEvaluation ev;
  set_active({&config});
  auto loaded = load(config, cubin, lowered_names, ev);
  if (!loaded) return 0.0;
  const auto& seq = loaded->rotation.front();
  restore_arguments(/*poison_outputs=*/false);
  measure::launch(seq);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  cuda::Event start, stop;
  start.record();
  for (std::size_t i = 0; i < launches; ++i) measure::launch(seq);
  stop.record();
  stop.synchronize();
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  return stop.elapsed_ms_since(start) / static_cast<double>(std::max<std::size_t>(launches, 1));
}

RanOnce GpuStage::run_once(const Config& config, const std::vector<char>& cubin,
                          const std::vector<std::string>& lowered_names) {
  RanOnce out;
  GpuEvaluation ev;
  try {
    set_active({&config});
    auto loaded = load(config, cubin, lowered_names, ev);
    if (!loaded) {
      out.status = ev.status;
      out.error = std::move(ev.error);
      return out;
    }
    // Every argument from its initial contents, as Kernel Tuner uploads them for the call.
    for (std::size_t i = 0; i < initial_.size(); ++i)
      if (active_[i] && initial_[i].spec->is_vector && !initial_[i].bytes.empty())
        CUTUNE_CU(CU_FN(cuMemcpyHtoD)(buffers_[i].get(), initial_[i].bytes.data(), initial_[i].bytes.size()));
    measure::launch(loaded->rotation.front());
    CUTUNE_CU(CU_FN(cuCtxSynchronize)());
    // One entry per kernel argument: a Tunable one's is the variant the configuration passed.
    out.arguments.resize(problem_.arguments().size());
    for (std::size_t argument = 0; argument < out.arguments.size(); ++argument) {
      const std::size_t i = problem_.data_for(config, argument);
      const HostArgument& a = initial_[i];
      auto& bytes = out.arguments[argument];
      bytes.resize(a.bytes.size());
      if (bytes.empty()) continue;
      if (a.spec->is_vector)
        CUTUNE_CU(CU_FN(cuMemcpyDtoH)(bytes.data(), buffers_[i].get(), bytes.size()));
      else
        std::memcpy(bytes.data(), a.bytes.data(), bytes.size());
    }
  } catch (const cuda::DriverError& e) {
    out = RanOnce{};
    out.status = Status::Runtime;
    out.error = e.what();
    out.context_lost = e.sticky();
  } catch (const InputError& e) {
    out = RanOnce{};
    out.status = Status::Runtime;
    out.error = e.what();
  }
  return out;
}

std::vector<GpuEvaluation> GpuStage::remeasure(const std::vector<Candidate>& candidates) {
  std::vector<GpuEvaluation> evs(candidates.size());
  std::deque<Loaded> loaded;  // modules stay loaded while the candidates are measured
  try {
    std::vector<std::vector<measure::LaunchSequence>> rotations;
    std::vector<std::size_t> index;  // candidate of each rotation
    std::vector<const Config*> configs;
    for (const Candidate& c : candidates) configs.push_back(&c.config);
    set_active(configs);  // interleaved: what any of them passes
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      auto l = load(candidates[c].config, candidates[c].cubin, candidates[c].lowered_names, evs[c]);
      if (!l) continue;
      loaded.push_back(std::move(*l));
      rotations.push_back(loaded.back().rotation);
      index.push_back(c);
    }
    if (rotations.empty()) return evs;
    restore_arguments(/*poison_outputs=*/false);
    restore_rotated_scratch();
    std::vector<measure::NoiseCriterion> criteria(rotations.size(), measure::NoiseCriterion(options_.thorough));
    auto sets = sampler_->measure_interleaved(rotations, criteria);
    for (std::size_t r = 0; r < rotations.size(); ++r)
      evs[index[r]].stats = finish(MeasurementLevel::Thorough, std::move(sets[r]), rotations[r].front(), true);
  } catch (const cuda::DriverError& e) {
    for (auto& ev : evs) {
      ev.status = Status::Runtime;
      ev.error = e.what();
      ev.context_lost = e.sticky();
      ev.stats.reset();
    }
  }
  return evs;
}

}  // namespace cutune::worker
