#pragma once
// What the tuner and its worker processes say to each other: one struct per message, plain
// data. The compile worker (`cutune-worker compile`) answers each Compile with a Compiled.
// The GPU worker (`cutune-worker gpu`) answers Setup with Identified, then Ready (or a
// WorkerError instead of either), then
// each request with its one reply: Evaluate -> Evaluated, Remeasure -> Remeasured,
// BackToBack -> BackToBackTimed, CopyBandwidth -> CopyBandwidthMeasured, RunOnce -> RanOnce,
// and any of them
// with a WorkerError when it can go on no more; Shutdown has no reply.
//
// A request is self-contained (the configuration as indices, its cubin and kernel symbols,
// everything the worker needs to evaluate it), and a reply is one typed result, so that the
// same messages can travel between MPI ranks as they do over pipes (protocol.hpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/jit/compile_types.hpp"
#include "cutune/model/device_identity.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/model/space.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/worker/measure_options.hpp"

namespace cutune::worker {

// ---- the compile worker ----

struct Compile {
  static constexpr std::string_view kType = "compile";
  jit::CompileRequest request;
  friend bool operator==(const Compile&, const Compile&) = default;
};

struct Compiled {
  static constexpr std::string_view kType = "compiled";
  jit::CompileResult result;  ///< the cubin travels as a frame of its own
  friend bool operator==(const Compiled&, const Compiled&) = default;
};

// ---- the GPU worker ----

/// Sets the worker up for one problem on one GPU: context, argument data, expected outputs.
struct Setup {
  static constexpr std::string_view kType = "setup";
  std::string problem_json;  ///< the problem file, loaded by the worker
  std::string problem;       ///< "n=1000" overrides of its variables
  int device = 0;
  std::uint64_t data_seed = 0;
  MeasureOptions measure;
  friend bool operator==(const Setup&, const Setup&) = default;
};

/// The worker's first answer to Setup, as soon as the driver has started and before the
/// argument data and expected outputs: the GPU it runs on. The tuner compiles for its
/// architecture while the worker goes on setting up, and the tuner process itself never
/// starts the driver (several workers on several GPUs, or on other ranks, say which GPU
/// each is).
struct Identified {
  static constexpr std::string_view kType = "identified";
  DeviceIdentity device;
  friend bool operator==(const Identified&, const Identified&) = default;
};

/// The worker has set up.
struct Ready {
  static constexpr std::string_view kType = "ready";
  VerificationPlan verification;  ///< what each output is checked against
  L2Method l2;
  std::size_t total_argument_bytes = 0;
  /// Milliseconds per phase of the set-up, in order ("..._overlapped": beside the others).
  std::vector<std::pair<std::string, double>> setup_ms;
  friend bool operator==(const Ready&, const Ready&) = default;
};

/// The worker could not set up, or can go on no more (something the GPU stage did not turn
/// into a configuration's status); it exits after sending this.
struct WorkerError {
  static constexpr std::string_view kType = "error";
  bool input_error = false;  ///< bad input (the problem file, the GPU ordinal), not a failure of the worker
  bool no_driver = false;    ///< no CUDA driver or no GPU at all: `message` says why
  std::string message;
  friend bool operator==(const WorkerError&, const WorkerError&) = default;
};

/// One compiled configuration.
struct Candidate {
  Config config;
  std::vector<char> cubin;
  /// The cubin's symbol of each of the problem's kernel_names() (jit::CompileResult::
  /// lowered_names); empty: looked up by the names as written.
  std::vector<std::string> lowered_names;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

/// Verify, then measure one configuration.
struct Evaluate {
  static constexpr std::string_view kType = "evaluate";
  Candidate candidate;
  /// The best screening median so far: screening stops early once the configuration is
  /// clearly slower. None: screened in full.
  std::optional<double> best_ms;
  bool thorough = false;  ///< the thorough criterion instead of the screening one
  friend bool operator==(const Evaluate&, const Evaluate&) = default;
};

struct Evaluated {
  static constexpr std::string_view kType = "evaluated";
  GpuEvaluation evaluation;
  friend bool operator==(const Evaluated&, const Evaluated&) = default;
};

/// Re-measure verified candidates thoroughly, interleaved, back to back (the finalists).
struct Remeasure {
  static constexpr std::string_view kType = "remeasure";
  std::vector<Candidate> candidates;
  friend bool operator==(const Remeasure&, const Remeasure&) = default;
};

struct Remeasured {
  static constexpr std::string_view kType = "remeasured";
  std::vector<GpuEvaluation> evaluations;  ///< one per candidate, in order
  friend bool operator==(const Remeasured&, const Remeasured&) = default;
};

/// An independent timing: one event pair around `launches` back-to-back launch sequences.
struct BackToBack {
  static constexpr std::string_view kType = "back_to_back";
  Candidate candidate;
  std::size_t launches = 1;
  friend bool operator==(const BackToBack&, const BackToBack&) = default;
};

struct BackToBackTimed {
  static constexpr std::string_view kType = "back_to_back_timed";
  double ms_per_launch = 0.0;  ///< 0 when the configuration could not be loaded
  friend bool operator==(const BackToBackTimed&, const BackToBackTimed&) = default;
};

/// Device-to-device copy bandwidth (measure::copy_bandwidth_gbps).
struct CopyBandwidth {
  static constexpr std::string_view kType = "copy_bandwidth";
  std::size_t bytes = 0;
  friend bool operator==(const CopyBandwidth&, const CopyBandwidth&) = default;
};

struct CopyBandwidthMeasured {
  static constexpr std::string_view kType = "copy_bandwidth_measured";
  double gbps = 0.0;
  friend bool operator==(const CopyBandwidthMeasured&, const CopyBandwidthMeasured&) = default;
};

/// Run one configuration once on the arguments' initial data, unverified and untimed, and
/// send back every argument's contents after it (Kernel Tuner's run_kernel).
struct RunOnce {
  static constexpr std::string_view kType = "run_once";
  Candidate candidate;
  friend bool operator==(const RunOnce&, const RunOnce&) = default;
};

struct RanOnce {
  static constexpr std::string_view kType = "ran_once";
  Status status = Status::Ok;  ///< Ok, or Runtime / Constraints (error says why): then no outputs
  std::string error;
  bool context_lost = false;  ///< a sticky error: the worker exits after this reply
  /// Per argument of the problem, in order: its bytes after the run (a scalar's as given).
  /// Each travels as a binary frame of its own.
  std::vector<std::vector<char>> arguments;
  friend bool operator==(const RanOnce&, const RanOnce&) = default;
};

/// How long one evaluation may take before the worker is killed; no reply. For the tuner
/// on another rank, which keeps the GPU worker of that rank (tuner/cluster).
struct SetTimeout {
  static constexpr std::string_view kType = "set_timeout";
  std::int64_t ms = 0;
  friend bool operator==(const SetTimeout&, const SetTimeout&) = default;
};

/// Without a reference output, the configuration whose output defines a correct one: a GPU
/// worker that did not evaluate it first evaluates it before anything else (on another
/// rank; in this process GpuWorker::adopt_reference); no reply.
struct AdoptReference {
  static constexpr std::string_view kType = "adopt_reference";
  Candidate candidate;
  friend bool operator==(const AdoptReference&, const AdoptReference&) = default;
};

/// The worker exits (releasing its context on its own time); no reply.
struct Shutdown {
  static constexpr std::string_view kType = "shutdown";
  friend bool operator==(const Shutdown&, const Shutdown&) = default;
};

}  // namespace cutune::worker
