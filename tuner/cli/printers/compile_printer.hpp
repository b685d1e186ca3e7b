#pragma once
// What `cutune compile --all` reports once the whole space is compiled: a line for people,
// and the throughput figures as JSON (--json).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cutune/runner/compile_pool.hpp"

namespace cutune::cli {

/// One compile of a whole space through the compile pool.
struct CompileRunSummary {
  std::string kernel, arch;
  /// The compiler that compiled it as said to people ("NVRTC", "nvcc (...)") and as a key
  /// ("nvrtc", "nvcc").
  std::string compiler_text, compiler;
  std::uint64_t configs = 0, failed = 0;
  runner::CompilePool::Stats stats;
  std::size_t workers = 0;
  std::string mode;  ///< the workers: "process" or "thread"
  double wall_s = 0;

  double configs_per_s() const { return wall_s > 0 ? static_cast<double>(configs) / wall_s : 0.0; }
  /// Over real compiles (cache hits and shared compiles left out); 0 without any.
  double compile_ms_mean() const {
    return stats.compiled ? stats.compile_ms / static_cast<double>(stats.compiled) : 0.0;
  }
};

void print_compile_summary(std::ostream& out, const CompileRunSummary& summary);
nlohmann::ordered_json compile_summary_json(const CompileRunSummary& summary);

}  // namespace cutune::cli
