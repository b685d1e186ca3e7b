// cutune-worker: the processes the tuner delegates to (issue 5).
//   cutune-worker compile   NVRTC compiles, one request at a time (a pool of these scales
//                           where threads of one process do not)
//   cutune-worker gpu       the GPU stage of one tuning session
// Both read requests from stdin and answer on stdout in frames (cutune::process), and exit
// when stdin closes. Diagnostics go to stderr, which the tuner shares.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <iostream>
#include <optional>

#include "cutune/cuda/device.hpp"
#include "cutune/cuda/nvml.hpp"
#include "cutune/measure/benchmark.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/process/subprocess.hpp"
#include "cutune/runner/gpu_stage.hpp"
#include "cutune/runner/worker_protocol.hpp"

using namespace cutune;
namespace proto = cutune::runner::protocol;

namespace {

constexpr int in_fd = STDIN_FILENO, out_fd = STDOUT_FILENO;

void reply(const nlohmann::json& j) {
  if (!process::write_frame(out_fd, j.dump())) std::_Exit(0);  // the tuner is gone
}

std::vector<char> read_cubin() {
  auto f = process::read_frame(in_fd);
  if (!f) std::_Exit(0);
  return {f->begin(), f->end()};
}

int compile_worker() {
  // Compiling is throughput work beside a latency-bound measurement loop: with as many
  // compile workers as cores, the tuner and its GPU worker waited for a core, 0.13 ms per
  // configuration on an H100 (cold against warm compile cache, issue 5). A lower priority
  // gives them the core at once and costs the compiles nothing while a core is idle.
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
  while (auto frame = process::read_frame(in_fd)) {
    jit::CompileResult r;
    try {
      r = jit::compile(proto::compile_request_from_json(nlohmann::json::parse(*frame)));
    } catch (const std::exception& e) {
      r = jit::CompileResult{};
      r.error = e.what();
    }
    if (!process::write_frame(out_fd, proto::to_json(r).dump()) ||
        !process::write_frame(out_fd, process::Frame(r.cubin.begin(), r.cubin.end())))
      return 0;
  }
  return 0;
}

int gpu_worker() {
  auto frame = process::read_frame(in_fd);
  if (!frame) return 0;
  std::optional<KernelProblem> problem;
  std::optional<ProblemInstance> instance;
  std::optional<runner::GpuStage> stage;
  nlohmann::json setup_ms = nlohmann::json::object();
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const auto init = nlohmann::json::parse(*frame);
    problem.emplace(KernelProblem::load(init.at("problem_json").get<std::string>()));
    instance.emplace(problem->instantiate(init.at("problem").get<std::string>()));
    const int device = init.at("device").get<int>();
    // NVML's start-up (dlopen, nvmlInit) on a thread of its own, beside the driver's: the
    // device's identity and readings need it only after the context exists.
    auto nvml_ms = std::async(std::launch::async, [] {
      const auto t = std::chrono::steady_clock::now();
      cuda::nvml_driver_release();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    });
    cuda::device_count();  // cuInit
    const auto t1 = std::chrono::steady_clock::now();
    stage.emplace(*problem, *instance, device, proto::measure_options_from_json(init.at("measure")),
                  init.at("data_seed").get<std::uint64_t>());
    setup_ms["load_and_cuinit"] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    double phases = 0;
    for (const auto& [name, ms] : stage->setup_ms()) {
      setup_ms[name] = ms;
      phases += ms;
    }
    setup_ms["context"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() - phases;
    for (const auto& [name, ms] : stage->overlapped_ms()) setup_ms[name + "_overlapped"] = ms;
    setup_ms["nvml_overlapped"] = nvml_ms.get();
  } catch (const InputError& e) {
    reply({{"input_error", e.what()}});
    return 2;
  } catch (const std::exception& e) {
    reply({{"error", e.what()}});
    return 1;
  }
  reply({{"setup_ms", setup_ms},
         {"verification", stage->verification_source()},
         {"l2_method", stage->l2_method()},
         {"total_argument_bytes", stage->total_argument_bytes()}});
  const Space& space = problem->space();
  // Idle time between answering and the next evaluation's start: what the pipe and the
  // tuner's own work between two configurations cost the GPU (issue 5).
  auto replied = std::chrono::steady_clock::now();
  while ((frame = process::read_frame(in_fd))) {
    const auto req = nlohmann::json::parse(*frame);
    const std::string op = req.at("op").get<std::string>();
    try {
      if (op == "evaluate") {
        const Config c = space.parse_key(req.at("config").get<std::string>());
        const auto cubin = read_cubin();
        std::optional<double> best;
        if (req.contains("best_ms")) best = req["best_ms"].get<double>();
        const double idle_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - replied).count();
        const auto lowered = req.at("lowered_names").get<std::vector<std::string>>();
        runner::GpuEvaluation ev = stage->evaluate(c, cubin, lowered, best, req.at("thorough").get<bool>());
        ev.idle_before_ms = idle_ms;
        reply(proto::to_json(ev));
        replied = std::chrono::steady_clock::now();
        if (ev.context_lost) return 3;  // a sticky error: this process can do no more GPU work
      } else if (op == "remeasure") {
        std::vector<runner::GpuStage::Candidate> candidates;
        const auto& lowered = req.at("lowered_names");
        for (std::size_t i = 0; i < req.at("configs").size(); ++i)
          candidates.push_back({space.parse_key(req["configs"][i].get<std::string>()), {},
                                lowered.at(i).get<std::vector<std::string>>()});
        for (auto& c : candidates) c.cubin = read_cubin();
        nlohmann::json out{{"evaluations", nlohmann::json::array()}};
        bool lost = false;
        for (const auto& ev : stage->remeasure(candidates)) {
          out["evaluations"].push_back(proto::to_json(ev));
          lost = lost || ev.context_lost;
        }
        reply(out);
        if (lost) return 3;
      } else if (op == "copy_bandwidth") {
        reply({{"gbps", measure::copy_bandwidth_gbps(req.at("bytes").get<std::size_t>())}});
      } else {
        reply({{"fatal", "unknown request " + op}});
        return 1;
      }
    } catch (const std::exception& e) {
      // Anything GpuStage did not turn into a status leaves the context in an unknown state.
      reply({{"fatal", e.what()}});
      return 1;
    }
  }
  return 0;
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
