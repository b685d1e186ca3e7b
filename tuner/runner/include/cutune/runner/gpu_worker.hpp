#pragma once
// The GPU stage in a worker process (ARCHITECTURE.md decision 5). Same calls as
// worker::GpuStage, which lives in `cutune-worker gpu`; they travel as the messages of
// worker/messages.hpp. A configuration that kills the worker (a sticky error such as an
// illegal address, or a crash) is recorded as a runtime failure, one that does not answer
// within the timeout is killed and recorded as a timeout; either way a fresh worker is
// started and tuning goes on.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/process/subprocess.hpp"
#include "cutune/worker/messages.hpp"
#include "cutune/worker/protocol.hpp"

namespace cutune::runner {

/// A worker's WorkerError as the exception the tuner raises for it: cuda::NoDriver without
/// a driver or GPU, InputError for bad input, std::runtime_error otherwise. `where` ("rank 1
/// GPU 0") prefixes the message when the worker is not this process's.
[[noreturn]] void raise_worker_error(const worker::WorkerError& e, const std::string& where = "");

class GpuWorker {
 public:
  /// Starts the worker, which sets up the problem (context, arguments, reference outputs)
  /// while the caller goes on; wait_ready() (or the first request) waits for it.
  GpuWorker(const KernelProblem& problem, std::string problem_text, int ordinal,
            const worker::MeasureOptions& options, std::uint64_t data_seed);
  ~GpuWorker();
  /// Waits until the worker has started the driver and says which GPU it is on. Throws
  /// cuda::NoDriver without a driver or GPU, InputError for an ordinal that is not there.
  const DeviceIdentity& wait_identified();
  /// Waits until the worker has set up. Throws InputError / std::runtime_error with the
  /// worker's message if it could not.
  void wait_ready();
  GpuWorker(const GpuWorker&) = delete;
  GpuWorker& operator=(const GpuWorker&) = delete;

  /// Without a reference output: the configuration whose output defines a correct one, as
  /// evaluated on another worker (another GPU). This worker evaluates it before anything else
  /// (now if ready, else once ready, and again after every restart). Nothing in flight.
  void adopt_reference(worker::Candidate candidate);
  /// The candidate that defined the expected outputs on this worker, if one did.
  const std::optional<worker::Candidate>& reference() const { return reference_; }

  /// As GpuStage::evaluate, bounded by timeout(): submit() then collect().
  GpuEvaluation evaluate(const Config& config, const std::vector<char>& cubin,
                         const std::vector<std::string>& lowered_names, std::optional<double> best_ms,
                         bool thorough = false);
  /// Sends an evaluation and returns at once, so that the caller's bookkeeping (storing the
  /// previous result, feeding the compile pool) overlaps the worker's measurement.
  /// Up to kMaxInFlight: the next request then waits in the worker's pipe and the GPU does
  /// not idle while the answer travels back and the next request comes. More throws
  /// std::logic_error.
  void submit(const Config& config, const std::vector<char>& cubin, const std::vector<std::string>& lowered_names,
              std::optional<double> best_ms, bool thorough = false);
  static constexpr std::size_t kMaxInFlight = 2;
  std::size_t in_flight() const { return pending_.size(); }
  /// The answer to the oldest evaluation in flight. Its timeout counts from its submit() or,
  /// queued behind another, from the collect() of that one (no earlier than the worker could
  /// start it; later by however long the caller took to collect). When the
  /// worker dies or is killed, the evaluations behind it are sent again to its successor.
  GpuEvaluation collect();
  /// Asks the worker to exit and does not wait for it to release its context (hundreds of
  /// milliseconds with large allocations): for the end of a tuning, whose results are stored.
  void release();
  /// As GpuStage::remeasure; a failure fails every candidate with the same status.
  std::vector<GpuEvaluation> remeasure(const std::vector<worker::Candidate>& candidates);
  /// As GpuStage::back_to_back_ms, in the worker; 0 when the worker failed.
  double back_to_back_ms(const worker::Candidate& candidate, std::size_t launches);
  /// As GpuStage::run_once, in the worker, bounded by timeout(); a worker that dies or times
  /// out gives a RanOnce with that status and no arguments.
  worker::RanOnce run_once(const worker::Candidate& candidate);
  /// Device-to-device copy bandwidth in GB/s (measure::copy_bandwidth_gbps), in the worker.
  double copy_bandwidth_gbps(std::size_t bytes);

  /// How long one evaluation may take before the worker is killed.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  std::size_t restarts() const { return restarts_; }

  /// These are known once ready.
  const worker::Ready& setup() const { return setup_; }
  const VerificationPlan& verification() const { return setup_.verification; }
  /// VerificationPlan::describe of verification(), for the log and the report.
  const std::string& verification_source() const { return verification_source_; }
  const L2Method& l2_method() const { return setup_.l2; }
  std::size_t total_argument_bytes() const { return setup_.total_argument_bytes; }
  /// The worker's set-up, milliseconds per phase, as a JSON object.
  const std::string& setup_ms_json() const { return setup_ms_json_; }

 private:
  void start();
  /// Sends a request and waits for its reply, one of Replies or a WorkerError. nullopt when
  /// the worker died, timed out or gave up; `failure` then says which, and the worker is
  /// restarted.
  template <class Reply>
  std::optional<Reply> call(const worker::Envelope& request, std::chrono::milliseconds timeout,
                            GpuEvaluation& failure);
  /// The two halves of call(). send() false: the worker is gone (await then says why).
  bool send(const worker::Envelope& request);
  template <class Reply>
  std::optional<Reply> await(bool sent, std::chrono::steady_clock::time_point deadline,
                             std::chrono::milliseconds timeout, GpuEvaluation& failure);
  /// Evaluates reference_ first on a fresh worker; throws when it fails there.
  void establish_reference();
  /// A fresh worker after a lost one, counted in restarts().
  void restart();

  const KernelProblem& problem_;
  std::string problem_text_;
  int ordinal_;
  worker::MeasureOptions options_;
  std::uint64_t data_seed_;
  std::unique_ptr<process::Subprocess> proc_;
  std::chrono::milliseconds timeout_{std::chrono::seconds(120)};
  std::size_t restarts_ = 0;
  bool setup_sent_ = false, ready_ = false;
  worker::Ready setup_;  ///< what the worker said once it had set up
  std::optional<DeviceIdentity> identified_;
  std::string verification_source_, setup_ms_json_ = "{}";
  /// Without a CPU reference the first configuration that runs defines the answer: kept so
  /// that a restarted worker is given the same answer before anything else runs.
  std::optional<worker::Candidate> reference_;
  struct Pending {
    worker::Evaluate request;  ///< kept to send it again to a restarted worker
    bool sent = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::milliseconds timeout;
  };
  /// After a restart: the requests still in flight go to the new worker, deadlines anew.
  void resend_pending();
  std::deque<Pending> pending_;  ///< oldest first
};

}  // namespace cutune::runner
