#pragma once
// Recorded spaces from Kernel Tuner's files: a cache file of any generation or T4
// results (.json or .json.gz) becomes a search::RecordedSpace. Here, not in db or search,
// because it needs both (db reads the files, search owns the model of a recording).
#include <filesystem>
#include <string>

#include "cutune/formats/kt_cache.hpp"
#include "cutune/search/recorded_space.hpp"

namespace cutune::replay {

/// Reads a Kernel Tuner cache file or T4 results file (told apart by a top-level
/// "results" or "cache"), named after the file without .json/.json.gz. Parameters and their
/// values come from the cache's tune_params (T4: the values seen, in first-seen order); the
/// objective is the file's first (time when none; a throughput objective such as GFLOP/s
/// is maximised, so it is negated: lower is better everywhere in search); a configuration's
/// cost is its compile + benchmark + verification time (T4 without a benchmark time: the
/// sum of its runtimes instead). Throws InputError naming the file
/// and entry for what cannot be read, a configuration outside tune_params, or a file with
/// no valid configuration.
/// Where a recording came from (for what a simulated run stores).
struct RecordingOrigin {
  std::string device_name;  ///< "NVIDIA A100-PCIE-40GB" ("" when the file does not say)
  std::string kernel_name;  ///< "" when the file does not say
  std::string problem;      ///< the cache's problem_size as JSON ("[4096,4096]"); "" when none
  /// The CUDA function's name where the file names the kernel otherwise (a cutune export of a
  /// BAT kernel: kernel_name "convolution", db::kt::kKernelFunctionField "convolution_kernel").
  std::string kernel_function{};
  /// The problem's key where the file names its variables (db::kt::kProblemField: a cutune
  /// export, "k=2048,m=2048,n=2048"); "" otherwise, when the problem is known by its size only.
  std::string problem_variables{};
};
search::RecordedSpace load_recorded_space(const std::filesystem::path& path, RecordingOrigin* origin = nullptr);

/// The same from a cache already read; `name` names the space in messages.
search::RecordedSpace recorded_space_from_cache(const db::kt::KtCache& cache, const std::string& name);

}  // namespace cutune::replay
