// A stand-in for `cutune-worker gpu` that needs no GPU: it speaks the worker protocol
// (cutune::worker_protocol, as worker_main.cpp does) and answers each evaluation as
// FAKE_GPU_WORKER_SCRIPT says, so that GpuWorker's handling of crashes, hangs and sticky
// errors with requests queued behind them is tested in CI. Script: "config_key=action;..."
// with action ok (default), die (exit without answering), hang (never answer), sticky (a
// lost context: answer, then exit) or names (answer ok with the request's lowered kernel
// names, space-separated, as the error). As the real GPU stage does, the first evaluation
// that succeeds defines the expected output when an output is verified against the default
// configuration's. Each evaluation it starts is appended to FAKE_GPU_WORKER_LOG as
// "pid config_key".
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "cutune/model/problem.hpp"
#include "cutune/model/verification.hpp"
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

template <class M>
bool reply(const M& m) {
  return write_message(STDOUT_FILENO, encode(m));
}

}  // namespace

int main() {
  const auto actions = script();
  const auto setup_message = read_message(STDIN_FILENO);
  if (!setup_message) return 0;
  const Setup setup = decode<Setup>(*setup_message);
  const KernelProblem problem = KernelProblem::load(setup.problem_json);  // for the configurations' keys
  Ready ready;
  ready.verification = plan_verification(problem, setup.measure.verify);
  if (!reply(ready)) return 0;
  bool expected_known = !ready.verification.any(VerifyMode::Default);
  while (const auto message = read_message(STDIN_FILENO)) {
    const auto request = decode_one_of<Evaluate, Shutdown>(*message);
    if (std::holds_alternative<Shutdown>(request)) return 0;
    const Evaluate& evaluate = std::get<Evaluate>(request);
    const std::string key = problem.space().key(evaluate.candidate.config);
    if (const char* log = std::getenv("FAKE_GPU_WORKER_LOG"))
      std::ofstream(log, std::ios::app) << ::getpid() << ' ' << key << '\n';
    const auto it = actions.find(key);
    const std::string action = it == actions.end() ? "ok" : it->second;
    if (action == "die") std::_Exit(1);
    if (action == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    GpuEvaluation ev;
    if (action == "sticky") {
      ev.status = Status::Runtime;
      ev.error = "an illegal memory access was encountered";
      ev.context_lost = true;
    } else if (action == "names") {
      for (const auto& n : evaluate.candidate.lowered_names) ev.error += (ev.error.empty() ? "" : " ") + n;
    }
    if (ev.status == Status::Ok && !expected_known) ev.defined_expected = expected_known = true;
    if (!reply(Evaluated{ev})) return 0;
    if (ev.context_lost) return 3;
  }
  return 0;
}
