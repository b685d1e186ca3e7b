// A stand-in for `cutune tune` in the loader's tests of tuning on first use (no GPU): it takes
// the arguments the loader passes (tune KERNEL [--problem P] --time-budget S --db DB --device D
// [--objective O]), prints them and its session and process group (the log shows whether it was
// started detached), and then, by $CUTUNE_FAKE_TUNE_MODE:
//   store (default): after $CUTUNE_FAKE_TUNE_SLEEP_S seconds (default 0.2), stores a winner of
//     the kernel's second valid configuration for the problem on GPU $CUTUNE_FAKE_TUNE_GPU
//     ("NVIDIA H200", sm_90), as a tuning stores it;
//   crash: aborts (SIGABRT) after the sleep, storing nothing;
//   nothing: exits 0, storing nothing.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cutune/db/store.hpp"
#include "cutune/model/problem.hpp"

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

void store_winner(const std::string& kernel_file, const std::string& problem, const std::string& db) {
  const cutune::KernelProblem p = cutune::KernelProblem::load(kernel_file);
  const cutune::ProblemInstance inst = p.instantiate(problem);
  cutune::Config second;
  int seen = 0;
  p.space().for_each_valid([&](const cutune::Config& c) {
    second = c;
    return ++seen < 2;
  });
  cutune::DeviceIdentity d;
  d.name = env_or("CUTUNE_FAKE_TUNE_GPU", "NVIDIA H200");
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  cutune::db::Store s = cutune::db::Store::open(db, true);
  cutune::db::RunSpec spec;
  spec.device = d;
  spec.kernel = p.name();
  spec.source_hash = "fake-tuner";
  spec.problem_key = inst.key();
  spec.problem_json = inst.json();
  spec.tool_version = "fake";
  spec.strategy = "fake";
  spec.command = "fake_cutune_tune";
  cutune::db::Run run = s.begin_run(spec);
  nlohmann::ordered_json j;
  for (const auto& [name, v] : p.space().assignments(second)) j[name] = v.to_int();
  cutune::db::WinnerChoice w;
  w.config = cutune::ResultConfig(p.space().key(second), cutune::parameter_values(j));
  w.median_ms = 0.5;
  w.default_ms = 1.0;
  run.set_winner(w);
  run.end();
  std::cout << "stored " << p.space().key(second) << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  std::cout << "args:";
  for (int i = 1; i < argc; ++i) std::cout << ' ' << argv[i];
  std::cout << "\npid=" << ::getpid() << " sid=" << ::getsid(0) << " pgrp=" << ::getpgrp() << std::endl;
  if (argc < 3 || std::string(argv[1]) != "tune") return 2;
  for (int i = 3; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  if (!opt.contains("--db") || !opt.contains("--time-budget")) return 2;
  std::this_thread::sleep_for(std::chrono::duration<double>(std::stod(env_or("CUTUNE_FAKE_TUNE_SLEEP_S", "0.2"))));
  const std::string mode = env_or("CUTUNE_FAKE_TUNE_MODE", "store");
  if (mode == "crash") std::abort();
  if (mode == "store") store_winner(argv[2], opt.contains("--problem") ? opt["--problem"] : "", opt["--db"]);
  return 0;
}
