#pragma once
// The compile pool: compiles configurations with NVRTC ahead of the GPU, in the
// order they were submitted, holding at most `capacity` compiled-but-not-taken results
// (bounded memory). Each of the N workers is a process by default: NVRTC serialises
// compiles inside one process, so threads do not scale (results/<gpu>/throughput.json,
// compile_scaling). Results come from the persistent cubin cache when it has them, and
// configurations whose source is identical (they differ only in launch-only parameters)
// share one compile.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::runner {

struct CompiledConfig {
  Config config;
  jit::CompileResult result;
  std::string key;        ///< jit::compile_key of its request
  bool shared = false;    ///< the result of an identical request compiled for another configuration
};

struct CompilePoolOptions {
  enum class Mode { Process, Thread };
  /// Worker count; 0: one per core, at most 16.
  std::size_t workers = 0;
  Mode mode = Mode::Process;
  /// The persistent cubin cache; nullopt: none (every configuration compiles).
  std::optional<std::filesystem::path> cache_dir;
  /// Compiled results held before the consumer takes them; 0: 4 per worker.
  std::size_t capacity = 0;
  /// A compile (one request in one worker process) taking longer is killed and recorded
  /// as a compile failure.
  std::chrono::seconds timeout{300};
};

/// "process" or "thread"; throws InputError otherwise.
CompilePoolOptions::Mode parse_compile_mode(const std::string& text);
std::size_t default_compile_workers();
/// Beside a tuning's GPU measurements: three quarters of default_compile_workers(), so that
/// the tuner and its GPU worker keep cores of their own. On an H100 host (16 cores) 12 workers
/// instead of 16 shortened the cold-cache tuning of the throughput space in 7 of 7 paired runs
/// (1.78-1.91 s against 1.96-2.07 s: a faster driver start and search loop;
/// results/nvidia-h100-80gb-hbm3/startup*.json), and the GPU waited no longer for compiles.
std::size_t tuning_compile_workers();

class CompilePool {
 public:
  CompilePool(const KernelProblem& problem, std::string arch, CompilePoolOptions options = {});
  ~CompilePool();  ///< stops the workers; pending work is dropped
  /// Stops the workers now (all at once: they hold nothing worth a graceful exit).
  void shutdown();
  /// Drops everything submitted and not yet taken, killing compiles in progress rather than
  /// waiting for them (a tuning out of time; one NVRTC compile of a large unrolled kernel
  /// took 16 s). The pool stays usable: the next submit() starts from an empty queue.
  void drop_pending();
  CompilePool(const CompilePool&) = delete;  // threads bound to `this`
  CompilePool& operator=(const CompilePool&) = delete;

  void submit(const Config& config);
  /// The first submission first, then any compiled configuration, lowest submission first
  /// (a slow compile does not hold back those behind it); nullopt when nothing is pending.
  std::optional<CompiledConfig> next();
  /// Submitted and not yet taken by next().
  std::size_t pending() const;
  std::size_t workers() const { return slots_.size(); }

  struct Stats {
    std::size_t compiled = 0;    ///< real NVRTC compiles
    std::size_t cache_hits = 0;  ///< taken from the persistent cache
    std::size_t shared = 0;      ///< identical requests compiled once for several configurations
    std::size_t worker_restarts = 0;
    double compile_ms = 0.0;     ///< sum over real compiles
  };
  Stats stats() const;

 private:
  struct Slot;
  void work(Slot& slot);
  /// One real compile in the slot's worker (or this thread); `worker_failure` is set when
  /// the worker died or timed out rather than NVRTC answering.
  jit::CompileResult compile_in(Slot& slot, const jit::CompileRequest& request, bool& worker_failure);

  const KernelProblem& problem_;
  std::string arch_;
  CompilePoolOptions options_;
  int nvrtc_version_;
  std::optional<jit::CubinCache> cache_;
  mutable std::mutex mutex_;
  /// Workers wait on work_cv_ (something to do and room for its result), next() on done_cv_:
  /// two, so that each change wakes one thread instead of all of them (with 16 workers the
  /// herd cost the tuner's main thread time between two GPU evaluations).
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::pair<std::uint64_t, Config>> todo_;
  std::map<std::uint64_t, CompiledConfig> done_;
  /// Requests being compiled right now, by key: a second configuration with the same key
  /// waits for the first instead of compiling again.
  std::map<std::string, std::shared_future<jit::CompileResult>> in_flight_;
  std::uint64_t next_in_ = 0, next_out_ = 0;
  std::size_t busy_ = 0;
  bool stop_ = false;
  Stats stats_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

/// The NVRTC request for one configuration of a problem (in jit, shared with the loader).
using jit::compile_request;

}  // namespace cutune::runner
