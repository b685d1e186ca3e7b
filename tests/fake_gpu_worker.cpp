// A stand-in for `cutune-worker gpu` that needs no GPU: it speaks the worker protocol
// (cutune::worker_protocol, as worker_main.cpp does) and answers each evaluation as
// FAKE_GPU_WORKER_SCRIPT says, so that GpuWorker's handling of crashes, hangs and sticky
// errors with requests queued behind them, and the tuning loop over several GPU workers
// (and MPI ranks), are tested in CI. Script: "config_key=action;..." with action ok
// (default), die (exit without answering), hang (never answer), sticky (a lost context:
// answer, then exit) or names (answer ok with the request's lowered kernel names,
// space-separated, as the error). As the real GPU stage does, the first evaluation that
// succeeds defines the expected output when an output is verified against the default
// configuration's.
//
// Times: from a recorded space when FAKE_GPU_WORKER_TIMES names a Kernel Tuner cache file
// (its "time", or its error string as a runtime failure; a configuration it lacks fails),
// else a fixed function of the configuration's key. Each evaluation takes
// FAKE_GPU_WORKER_SLEEP_MS of wall time (default 0), so that several workers overlap.
// FAKE_GPU_WORKER_DEVICE names the GPU it pretends to be (default "Fake GPU", sm_90); "A,B"
// makes GPU 0 an A and GPU 1 a B.
// FAKE_GPU_WORKER_DIE_AFTER=N: the worker process exits without answering its N+1-th
// evaluation (a GPU worker dying mid-run, whichever configuration it holds).
// Each evaluation it starts is appended to FAKE_GPU_WORKER_LOG as "pid config_key".
// RunOnce runs nothing: every argument comes back as the problem's data made it (the action
// "die" of its configuration exits instead), so that `cutune run` and the package's
// run_kernel are tested up to the files without a GPU. With a verifier (MeasureOptions::
// verifier) every configuration that would pass is sent there too, with the arguments as the
// problem's data made them, and a rejection makes it a correctness failure; what the verifier
// observed comes back with the evaluation.
// FAKE_GPU_WORKER_NVML=1 adds NVML readings to every measurement (fake_nvml).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/worker/external_verifier.hpp"
#include "cutune/worker/protocol.hpp"

using namespace cutune;
using namespace cutune::worker;

namespace {

std::map<std::string, std::string> script() {
  std::map<std::string, std::string> out;
  const char* env = std::getenv("FAKE_GPU_WORKER_SCRIPT");
  std::stringstream ss(env ? env : "");
  for (std::string item; std::getline(ss, item, ';');)
    if (auto eq = item.find('='); eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

/// The recorded space's entries by configuration key, or null without one.
nlohmann::json recorded_space() {
  const std::string path = env_or("FAKE_GPU_WORKER_TIMES", "");
  if (path.empty()) return nullptr;
  std::ifstream in(path);
  return nlohmann::json::parse(in).at("cache");
}

/// One evaluation's answer: recorded, or a time made from the key.
/// FAKE_GPU_WORKER_NVML=1: NVML readings with every measurement (55 C, 250 W, 1980 MHz; and
/// 0.5 mJ per launch where energy is measured), so that what the tuner keeps of them is tested.
void fake_nvml(MeasuredStats& stats, bool energy) {
  if (!std::getenv("FAKE_GPU_WORKER_NVML")) return;
  stats.temperature_c = 55.0;
  stats.power_w = 250.0;
  stats.nvml_sm_clock_mhz = 1980.0;
  if (energy) stats.energy_mj_per_launch = 0.5;
}

GpuEvaluation answer_for(const std::string& key, const nlohmann::json& recorded, bool energy = false) {
  GpuEvaluation ev;
  double ms = 0.0;
  if (recorded.is_null()) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
    ms = 1.0 + static_cast<double>(h % 1000) / 1000.0;
  } else if (const auto it = recorded.find(key); it == recorded.end()) {
    ev.status = Status::Runtime;
    ev.error = "not in the recorded space";
    return ev;
  } else if (const auto& t = it->at("time"); !t.is_number()) {
    ev.status = Status::Runtime;
    ev.error = t.is_string() ? t.get<std::string>() : t.dump();
    return ev;
  } else {
    ms = t.get<double>();
  }
  MeasuredStats stats;
  stats.set.samples_ms = {ms, ms, ms};
  stats.set.wall_ms = 3 * ms;
  stats.summary.count = 3;
  stats.summary.median = stats.summary.mean = stats.summary.min = stats.summary.max = ms;
  stats.summary.ci_low = stats.summary.ci_high = ms;
  fake_nvml(stats, energy);
  ev.stats = stats;
  // What the GPU stage reads from the driver, made from the key so that a test can tell
  // each configuration's own resources from another's.
  KernelResources r;
  r.registers = 16 + static_cast<int>(key.size());
  r.static_shared_bytes = 1024;
  r.block_threads = 128;
  r.active_blocks_per_sm = 8;
  r.occupancy = 0.5;
  ev.resources = r;
  return ev;
}

template <class M>
bool reply(const M& m) {
  return write_message(STDOUT_FILENO, encode(m));
}

}  // namespace

int main() {
  const auto actions = script();
  const nlohmann::json recorded = recorded_space();
  const int sleep_ms = std::stoi(env_or("FAKE_GPU_WORKER_SLEEP_MS", "0"));
  const long die_after = std::stol(env_or("FAKE_GPU_WORKER_DIE_AFTER", "-1"));
  const auto setup_message = read_message(STDIN_FILENO);
  if (!setup_message) return 0;
  const Setup setup = decode<Setup>(*setup_message);
  const KernelProblem problem = KernelProblem::load(setup.problem_json);  // for the configurations' keys
  Identified identified;
  {
    // "A,B": GPU 0 is an A, GPU 1 a B (and the last one names the GPUs after it).
    std::stringstream names(env_or("FAKE_GPU_WORKER_DEVICE", "Fake GPU"));
    int ordinal = 0;
    for (std::string name; std::getline(names, name, ',') && ordinal <= setup.device; ++ordinal)
      identified.device.name = name;
  }
  identified.device.cc_major = 9;
  identified.device.uuid = "GPU-fake-" + std::to_string(setup.device);
  if (!reply(identified)) return 0;
  Ready ready;
  ready.verification = plan_verification(problem, setup.measure.verify);
  if (!reply(ready)) return 0;
  bool expected_known = !ready.verification.any(VerifyMode::Default);
  std::optional<ExternalVerifier> verifier;
  // The initial data of every datum (each variant of a Tunable argument too): nothing runs, so
  // a configuration's arguments are what it selects of these, as the GPU stage passes them.
  const auto data = make_host_arguments(problem, problem.instantiate(setup.problem), setup.data_seed);
  auto selected = [&](const Config& config, std::size_t argument) -> const HostArgument& {
    return data[problem.data_for(config, argument)];
  };
  if (!setup.measure.verifier.empty()) {
    std::vector<std::string> names;
    for (const ArgumentSpec& a : problem.arguments()) names.push_back(a.name);
    verifier.emplace(setup.measure.verifier, names);
  }
  long evaluations = 0;
  while (const auto message = read_message(STDIN_FILENO)) {
    const auto request = decode_one_of<Evaluate, Remeasure, CopyBandwidth, RunOnce, Shutdown>(*message);
    if (std::holds_alternative<Shutdown>(request)) return 0;
    if (const auto* r = std::get_if<RunOnce>(&request)) {
      const auto it = actions.find(problem.space().key(r->candidate.config));
      if (it != actions.end() && it->second == "die") std::_Exit(1);
      RanOnce out;
      for (std::size_t i = 0; i < problem.arguments().size(); ++i) {
        const HostArgument& a = selected(r->candidate.config, i);
        out.arguments.emplace_back(reinterpret_cast<const char*>(a.bytes.data()),
                                   reinterpret_cast<const char*>(a.bytes.data()) + a.bytes.size());
      }
      if (!reply(out)) return 0;
      continue;
    }
    if (std::holds_alternative<CopyBandwidth>(request)) {
      if (!reply(CopyBandwidthMeasured{1000.0})) return 0;
      continue;
    }
    if (const auto* r = std::get_if<Remeasure>(&request)) {
      Remeasured out;
      for (const Candidate& c : r->candidates) out.evaluations.push_back(answer_for(problem.space().key(c.config), recorded));
      if (!reply(out)) return 0;
      continue;
    }
    const Evaluate& evaluate = std::get<Evaluate>(request);
    const std::string key = problem.space().key(evaluate.candidate.config);
    if (const char* log = std::getenv("FAKE_GPU_WORKER_LOG"))
      std::ofstream(log, std::ios::app) << ::getpid() << ' ' << key << '\n';
    if (die_after >= 0 && evaluations++ >= die_after) std::_Exit(1);
    const auto it = actions.find(key);
    const std::string action = it == actions.end() ? "ok" : it->second;
    if (action == "die") std::_Exit(1);
    if (action == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    GpuEvaluation ev = answer_for(key, recorded, setup.measure.energy_every_config);
    if (action == "sticky") {
      ev = GpuEvaluation{};
      ev.status = Status::Runtime;
      ev.error = "an illegal memory access was encountered";
      ev.context_lost = true;
    } else if (action == "names") {
      ev.error.clear();
      for (const auto& n : evaluate.candidate.lowered_names) ev.error += (ev.error.empty() ? "" : " ") + n;
    }
    if (ev.status == Status::Ok && verifier) {
      std::vector<process::Frame> contents;
      for (std::size_t i : verifier->arguments()) {
        const HostArgument& a = selected(evaluate.candidate.config, i);
        contents.emplace_back(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
      }
      ExternalVerifier::Verdict v = verifier->check({key, evaluate.candidate.config.index, ev.resources}, contents);
      if (!v.ok) {
        ev = GpuEvaluation{};
        ev.status = Status::Correctness;
        ev.error = v.error;
      } else {
        ev.observed = std::move(v.observed);
      }
    }
    if (ev.status == Status::Ok && !expected_known) ev.defined_expected = expected_known = true;
    if (!reply(Evaluated{ev})) return 0;
    if (ev.context_lost) return 3;
  }
  return 0;
}
