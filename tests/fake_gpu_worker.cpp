// A stand-in for `cutune-worker gpu` that needs no GPU: it speaks the worker protocol
// (worker_main.cpp) and answers each evaluation as FAKE_GPU_WORKER_SCRIPT says, so that
// GpuWorker's handling of crashes, hangs and sticky errors with requests queued behind
// them is tested in CI. Script: "config_key=action;..." with action ok (default), die (exit
// without answering), hang (never answer), sticky (a lost context: answer, then exit) or
// names (answer ok with the request's lowered kernel names, space-separated, as the error).
// Each evaluation it starts is appended to FAKE_GPU_WORKER_LOG as "pid config_key".
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "cutune/process/subprocess.hpp"

namespace {

std::map<std::string, std::string> script() {
  std::map<std::string, std::string> out;
  const char* env = std::getenv("FAKE_GPU_WORKER_SCRIPT");
  std::stringstream ss(env ? env : "");
  for (std::string item; std::getline(ss, item, ';');)
    if (auto eq = item.find('='); eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  return out;
}

bool reply(const nlohmann::json& j) { return cutune::process::write_frame(STDOUT_FILENO, j.dump()); }

}  // namespace

int main() {
  const auto actions = script();
  if (!cutune::process::read_frame(STDIN_FILENO)) return 0;  // the init request
  if (!reply({{"setup_ms", nlohmann::json::object()}, {"verification", "reference"}, {"l2_method", "flush"},
              {"total_argument_bytes", 0}}))
    return 0;
  while (auto frame = cutune::process::read_frame(STDIN_FILENO)) {
    const auto req = nlohmann::json::parse(*frame);
    if (req.at("op") != "evaluate") return 1;
    if (!cutune::process::read_frame(STDIN_FILENO)) return 0;  // the cubin
    const std::string key = req.at("config").get<std::string>();
    if (const char* log = std::getenv("FAKE_GPU_WORKER_LOG"))
      std::ofstream(log, std::ios::app) << ::getpid() << ' ' << key << '\n';
    const auto it = actions.find(key);
    const std::string action = it == actions.end() ? "ok" : it->second;
    if (action == "die") std::_Exit(1);
    if (action == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    const bool sticky = action == "sticky";
    std::string names;
    if (action == "names")
      for (const auto& n : req.at("lowered_names")) names += (names.empty() ? "" : " ") + n.get<std::string>();
    if (!reply({{"status", sticky ? "runtime" : "ok"},
                {"error", sticky ? "an illegal memory access was encountered" : names},
                {"verify_ms", 0.0},
                {"context_lost", sticky}}))
      return 0;
    if (sticky) return 3;
  }
  return 0;
}
