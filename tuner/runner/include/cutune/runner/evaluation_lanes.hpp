#pragma once
// Several GPUs fed by one compile pool: each lane is one GPU worker (of this process, or of
// another MPI rank: tuner/cluster) driven by a thread of its own, which takes compiled
// configurations from the pool as it has room (two in flight, so that its GPU does not
// idle while answers and requests travel) and hands the answers to the tuning loop, the
// only thread that talks to the strategy and the store. One lane is what one GPU always
// was; N lanes keep N GPUs busy with every strategy, as far as it proposes ahead.
//
// Order: lane 0 alone takes the first configuration (the default: the baseline, and
// without a reference output the definition of a correct one). The others start once it
// has answered, and, when outputs are verified against the default configuration's, first
// evaluate the configuration that defined them (adopt_reference), so that every GPU checks
// against the same answer.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/runner/pipeline.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::runner {

/// One GPU worker, as a lane drives it. Called from its lane's thread only.
class Lane {
 public:
  virtual ~Lane() = default;
  /// "GPU 0", "rank 1 GPU 0": for progress lines and the report.
  virtual std::string name() const = 0;
  /// Waits for the worker's GPU (throws as GpuWorker::wait_identified).
  virtual const DeviceIdentity& wait_identified() = 0;
  virtual void wait_ready() = 0;
  /// Once ready: what its worker said (verification, L2 method, argument bytes, set-up times).
  virtual const worker::Ready& ready() const = 0;
  /// Evaluations it takes in flight.
  virtual std::size_t capacity() const = 0;
  virtual void submit(const worker::Evaluate& request) = 0;
  /// The answer to the oldest evaluation in flight; nullopt when the lane is lost (a rank
  /// that stopped answering): its evaluations in flight then go to the other lanes.
  virtual std::optional<GpuEvaluation> collect() = 0;
  virtual void adopt_reference(const worker::Candidate& candidate) = 0;
  virtual void set_timeout(std::chrono::milliseconds timeout) = 0;
  virtual std::size_t restarts() const = 0;
  /// Ends the worker without waiting for it to release its context.
  virtual void release() = 0;
  /// The GPU worker of this process behind the lane, for the finalists' re-measurement and
  /// the copy ceiling; nullptr for a lane on another rank.
  virtual GpuWorker* local() { return nullptr; }
};

/// A GPU worker of this process.
class LocalLane : public Lane {
 public:
  LocalLane(const KernelProblem& problem, std::string problem_text, int ordinal, const worker::MeasureOptions& options,
            std::uint64_t data_seed);
  std::string name() const override;
  const DeviceIdentity& wait_identified() override { return worker_.wait_identified(); }
  void wait_ready() override { worker_.wait_ready(); }
  const worker::Ready& ready() const override { return worker_.setup(); }
  std::size_t capacity() const override { return GpuWorker::kMaxInFlight; }
  void submit(const worker::Evaluate& r) override;
  std::optional<GpuEvaluation> collect() override { return worker_.collect(); }
  void adopt_reference(const worker::Candidate& c) override { worker_.adopt_reference(c); }
  void set_timeout(std::chrono::milliseconds t) override { worker_.set_timeout(t); }
  std::size_t restarts() const override { return worker_.restarts(); }
  void release() override { worker_.release(); }
  GpuWorker* local() override { return &worker_; }

 private:
  int ordinal_;
  GpuWorker worker_;
};

class EvaluationLanes {
 public:
  /// Makes a lane; called on that lane's own thread, which then owns it (a worker process
  /// dies with the thread that started it: PR_SET_PDEATHSIG).
  using LaneFactory = std::function<std::unique_ptr<Lane>()>;

  /// Starts one thread per factory; each starts its worker at once (its set-up overlaps
  /// the caller's), and takes work once attach()ed to a compile pool.
  explicit EvaluationLanes(std::vector<LaneFactory> factories);
  /// The pool the lanes take compiled configurations from (it needs the GPUs' architecture,
  /// known only from identities()).
  void attach(CompilePool& pool);
  ~EvaluationLanes();  ///< releases every worker and joins the threads
  EvaluationLanes(const EvaluationLanes&) = delete;  // threads bound to `this`
  EvaluationLanes& operator=(const EvaluationLanes&) = delete;

  std::size_t size() const { return slots_.size(); }
  /// Each lane's GPU, in lane order (waits; rethrows a lane's start-up error).
  std::vector<DeviceIdentity> identities();
  /// Waits until every lane has set up (rethrows the first error).
  void wait_ready();
  const worker::Ready& ready(std::size_t lane) const;
  std::string name(std::size_t lane) const;
  /// Evaluations all lanes take in flight; once identities() has returned.
  std::size_t capacity() const;

  /// The tuning loop submitted to the pool: lanes with room take from it.
  void fed();
  /// The screening's best so far (time objective), sent with each later evaluation.
  void set_best_ms(std::optional<double> best_ms);
  /// The hang timeout, applied by each lane before its next evaluation.
  void set_timeout(std::chrono::milliseconds timeout);
  /// The next answer; nullopt when nothing is in flight, nothing is being taken and the
  /// pool holds nothing (the loop must feed, or is done), or at `deadline`.
  std::optional<LaneOutcome> next(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  /// Out of time: lanes take nothing more; what is in flight still answers through next().
  void stop_taking();
  /// Runs `task` on lane `lane`'s thread once nothing is in flight there, and waits for it.
  void run_on(std::size_t lane, const std::function<void(Lane&)>& task);
  std::size_t restarts(std::size_t lane) const;
  bool lost(std::size_t lane) const;

 private:
  struct Slot;
  void run(Slot& slot);
  bool idle_locked() const;
  /// Releases the waiting lanes after the first answer (see the header comment).
  void release_others_locked(const std::optional<worker::Candidate>& reference);

  CompilePool* pool_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable lanes_cv_, loop_cv_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::deque<LaneOutcome> outcomes_;
  std::deque<CompiledConfig> retry_;  ///< taken by a lane that was lost: first to go again
  bool taking_ = false;               ///< a lane is in pool_.next()
  bool stop_taking_ = false, stop_ = false;
  bool others_released_ = false;
  std::optional<worker::Candidate> reference_;
  std::optional<double> best_ms_;
  std::optional<std::chrono::milliseconds> timeout_;
  std::uint64_t timeout_version_ = 0;
};

}  // namespace cutune::runner
