// cutune-worker: the processes the tuner delegates to.
//   cutune-worker compile   NVRTC compiles, one request at a time (a pool of these scales
//                           where threads of one process do not)
//   cutune-worker gpu       the GPU stage of one tuning session
// Both read requests from stdin and answer on stdout with the messages of messages.hpp
// (protocol.hpp), and exit when stdin closes. Diagnostics go to stderr, which the tuner shares.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <iostream>
#include <optional>
#include <type_traits>

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/nvml.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/measure/benchmark.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/worker/gpu_stage.hpp"
#include "cutune/worker/protocol.hpp"

using namespace cutune;
using namespace cutune::worker;

namespace {

constexpr int in_fd = STDIN_FILENO, out_fd = STDOUT_FILENO;

template <class M>
void reply(const M& m) {
  if (!write_message(out_fd, encode(m))) std::_Exit(0);  // the tuner is gone
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int compile_worker() {
  // Compiling is throughput work beside a latency-bound measurement loop: with as many
  // compile workers as cores, the tuner and its GPU worker waited for a core, 0.13 ms per
  // configuration on an H100 (cold against warm compile cache). A lower priority gives
  // them the core at once and costs the compiles nothing while a core is idle.
  if (::nice(10) == -1 && errno != 0) std::cerr << "cutune-worker: nice: " << std::strerror(errno) << '\n';
  // NVRTC's one-time start-up (~0.3 s: it loads its built-in headers) is paid now, while
  // the tuner is still setting up the GPU, not inside the first configuration's compile.
  try {
    jit::CompileRequest warm;
    warm.source = "extern \"C\" __global__ void cutune_warm_up() {}";
    warm.source_name = "warm_up.cu";
    jit::compile(warm);
  } catch (const std::exception&) {  // a real request will report the problem
  }
  while (true) {
    Compiled out;
    try {
      const auto message = read_message(in_fd);
      if (!message) return 0;
      out.result = jit::compile(decode<Compile>(*message).request);
    } catch (const std::exception& e) {
      out.result = jit::CompileResult{};
      out.result.error = e.what();
    }
    if (!write_message(out_fd, encode(out))) return 0;
  }
}

/// No driver or no GPU at all: the tuner says so as it does without a GPU.
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The set-up: the problem, the context, the GPU stage; with the time of each phase.
struct Session {
  std::optional<KernelProblem> problem;
  std::optional<ProblemInstance> instance;
  std::optional<GpuStage> stage;
  Ready ready;
};

void set_up(const Setup& setup, Session& s) {
  const auto t0 = std::chrono::steady_clock::now();
  s.problem.emplace(KernelProblem::load(setup.problem_json));
  s.instance.emplace(s.problem->instantiate(setup.problem));
  // NVML's start-up (dlopen, nvmlInit) on a thread of its own, beside the driver's: the
  // device's identity and readings need it only after the context exists.
  auto nvml_ms = std::async(std::launch::async, [] {
    const auto t = std::chrono::steady_clock::now();
    cuda::nvml_driver_release();
    return ms_since(t);
  });
  std::string why_none;
  const int count = cuda::device_count(&why_none);  // cuInit
  if (count == 0) throw NoGpu(why_none);
  if (setup.device < 0 || setup.device >= count)
    throw InputError(fmt::format("GPU {}: there are {} GPU(s) (0..{})", setup.device, count, count - 1));
  // The tuner compiles for this GPU's architecture while the rest is set up.
  // (NVML's start first: the identity includes its driver release string.)
  const double nvml_start_ms = nvml_ms.get();
  Identified identified{cuda::identify(setup.device)};
  identified.device.nvrtc_version = jit::nvrtc_version();
  reply(identified);
  const auto t1 = std::chrono::steady_clock::now();
  s.stage.emplace(*s.problem, *s.instance, setup.device, setup.measure, setup.data_seed);
  auto& phases_ms = s.ready.setup_ms;
  phases_ms.emplace_back("load_and_cuinit", std::chrono::duration<double, std::milli>(t1 - t0).count());
  double phases = 0;
  for (const auto& [name, ms] : s.stage->setup_ms()) {
    phases_ms.emplace_back(name, ms);
    phases += ms;
  }
  phases_ms.emplace_back("context", ms_since(t1) - phases);
  for (const auto& [name, ms] : s.stage->overlapped_ms()) phases_ms.emplace_back(name + "_overlapped", ms);
  phases_ms.emplace_back("nvml_overlapped", nvml_start_ms);
  s.ready.verification = s.stage->verification();
  s.ready.l2 = s.stage->l2_method();
  s.ready.total_argument_bytes = s.stage->total_argument_bytes();
}

/// A configuration from the tuner, checked against the space before anything of it runs.
const Config& checked(const Space& space, const Config& config) {
  bool ok = config.index.size() == space.parameters().size();
  for (std::size_t i = 0; ok && i < config.index.size(); ++i)
    ok = config.index[i] < space.parameters()[i].values.size();
  if (!ok) throw std::invalid_argument("a configuration that is not of this problem's space");
  return config;
}

int gpu_worker() {
  Session s;
  try {
    const auto message = read_message(in_fd);
    if (!message) return 0;
    set_up(decode<Setup>(*message), s);
  } catch (const NoGpu& e) {
    reply(WorkerError{false, true, e.what()});
    return 1;
  } catch (const InputError& e) {
    reply(WorkerError{true, false, e.what()});
    return 2;
  } catch (const std::exception& e) {
    reply(WorkerError{false, false, e.what()});
    return 1;
  }
  reply(s.ready);
  const Space& space = s.problem->space();
  GpuStage& stage = *s.stage;
  // Idle time between answering and the next evaluation's start: what the pipe and the
  // tuner's own work between two configurations cost the GPU.
  auto replied = std::chrono::steady_clock::now();
  while (true) {
    try {
      const auto message = read_message(in_fd);
      if (!message) return 0;
      const GpuRequest request = decode_one_of<Evaluate, Remeasure, BackToBack, CopyBandwidth, RunOnce, Shutdown>(*message);
      // Anything that returns here ends the worker: a lost context (sticky error) or Shutdown.
      const std::optional<int> exit_code = std::visit(
          [&](const auto& r) -> std::optional<int> {
            using R = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<R, Evaluate>) {
              const double idle_ms = ms_since(replied);
              const Candidate& c = r.candidate;
              GpuEvaluation ev = stage.evaluate(checked(space, c.config), c.cubin, c.lowered_names, r.best_ms, r.thorough);
              ev.idle_before_ms = idle_ms;
              const bool lost = ev.context_lost;
              reply(Evaluated{std::move(ev)});
              replied = std::chrono::steady_clock::now();
              if (lost) return 3;  // a sticky error: this process can do no more GPU work
            } else if constexpr (std::is_same_v<R, Remeasure>) {
              for (const Candidate& c : r.candidates) checked(space, c.config);
              Remeasured out{stage.remeasure(r.candidates)};
              bool lost = false;
              for (const auto& ev : out.evaluations) lost = lost || ev.context_lost;
              reply(out);
              if (lost) return 3;
            } else if constexpr (std::is_same_v<R, BackToBack>) {
              const Candidate& c = r.candidate;
              reply(BackToBackTimed{stage.back_to_back_ms(checked(space, c.config), c.cubin, c.lowered_names, r.launches)});
            } else if constexpr (std::is_same_v<R, RunOnce>) {
              const Candidate& c = r.candidate;
              RanOnce out = stage.run_once(checked(space, c.config), c.cubin, c.lowered_names);
              const bool lost = out.context_lost;
              reply(out);
              if (lost) return 3;
            } else if constexpr (std::is_same_v<R, CopyBandwidth>) {
              reply(CopyBandwidthMeasured{measure::copy_bandwidth_gbps(r.bytes)});
            } else {
              static_assert(std::is_same_v<R, Shutdown>);
              return 0;
            }
            return std::nullopt;
          },
          request);
      if (exit_code) return *exit_code;
    } catch (const std::exception& e) {
      // Anything GpuStage did not turn into a status leaves the context in an unknown state;
      // a request that cannot be read leaves the conversation in one.
      reply(WorkerError{false, false, e.what()});
      return 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (::isatty(in_fd)) {
    std::cerr << "cutune-worker is started by cutune, not by hand\n";
    return 2;
  }
  if (mode == "compile") return compile_worker();
  if (mode == "gpu") return gpu_worker();
  std::cerr << "usage: cutune-worker compile|gpu\n";
  return 2;
}
