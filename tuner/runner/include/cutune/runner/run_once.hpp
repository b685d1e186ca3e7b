#pragma once
// One configuration run once, for its outputs rather than its time (Kernel Tuner's
// run_kernel): compiled here, run by a GPU worker process on the problem's argument data,
// every argument's contents after the run sent back (worker::RanOnce).
#include <cstdint>
#include <string>

#include "cutune/model/configuration.hpp"
#include "cutune/model/device_identity.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::runner {

struct RunOnceResult {
  explicit RunOnceResult(Configuration c) : config(std::move(c)) {}
  Configuration config;
  DeviceIdentity device;
  std::string compiler;  ///< "nvrtc" or "nvcc"
  double compile_ms = 0.0;
  /// status Compile (error: the compiler's log) when it did not compile; otherwise the
  /// worker's answer.
  worker::RanOnce ran;
};

/// Runs `config_text` ("k=v,...", others take their default; "" the default configuration)
/// of the problem once on GPU `device`. Throws InputError for bad input (the configuration,
/// the problem, the ordinal), cuda::NoDriver without a GPU.
RunOnceResult run_once(const KernelProblem& problem, const std::string& problem_text, const std::string& config_text,
                       int device, std::uint64_t data_seed = 42);

}  // namespace cutune::runner
