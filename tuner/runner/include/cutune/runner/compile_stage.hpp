#pragma once
// The compile stage: compiles configurations with NVRTC ahead of the GPU stage, in the
// order they were submitted, on a background thread, holding at most `capacity` finished
// cubins (bounded memory). Issue 5 turns the single worker into a pool.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::runner {

struct CompiledConfig {
  Config config;
  jit::CompileResult result;
};

class CompileStage {
 public:
  CompileStage(const KernelProblem& problem, std::string arch, std::size_t capacity = 8);
  ~CompileStage();  ///< stops the worker; pending work is dropped
  CompileStage(const CompileStage&) = delete;  // owns a thread bound to `this`
  CompileStage& operator=(const CompileStage&) = delete;

  void submit(const Config& config);
  /// The next compiled configuration in submission order; nullopt when nothing is pending.
  std::optional<CompiledConfig> next();
  std::size_t pending() const;

 private:
  void work();

  const KernelProblem& problem_;
  std::string arch_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Config> todo_;
  std::deque<CompiledConfig> done_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread worker_;
};

/// The NVRTC request for one configuration of a problem.
jit::CompileRequest compile_request(const KernelProblem& problem, const Config& config,
                                    const std::string& arch);

}  // namespace cutune::runner
