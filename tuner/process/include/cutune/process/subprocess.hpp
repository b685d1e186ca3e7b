#pragma once
// A child process spoken to through two pipes, with framed messages. The tuner
// keeps NVRTC and the GPU in children: NVRTC serialises inside one process (so parallel
// compiles need processes), and a sticky CUDA error or a hanging kernel must cost a
// worker, never the tuner or a committed measurement.
#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cutune::process {

/// One message: a length-prefixed byte string (JSON headers and raw cubins alike).
using Frame = std::string;

/// Writes one frame; false when the other end is gone (EPIPE) or on another write error.
bool write_frame(int fd, const Frame& frame);
/// Reads one frame. nullopt on end of file or a read error. `timeout`: give up after it
/// (sets *timed_out); nullopt for no limit.
std::optional<Frame> read_frame(int fd, std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                                bool* timed_out = nullptr);

class Subprocess {
 public:
  /// Starts `argv` (argv[0] is the executable's path) with its stdin and stdout on pipes
  /// and stderr inherited. The child gets SIGKILL when this process dies (kill -9 of the
  /// tuner leaves no worker behind). Throws std::runtime_error if it cannot start.
  explicit Subprocess(const std::vector<std::string>& argv);
  ~Subprocess();  ///< closes the pipes, kills the child if still running, reaps it
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool send(const Frame& frame) { return write_frame(to_child_, frame); }
  /// The next frame, or nullopt if the child closed its end (died) or the timeout passed
  /// (then timed_out() is true).
  std::optional<Frame> receive(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  bool timed_out() const { return timed_out_; }

  /// SIGKILL and reap. Idempotent.
  void kill();
  /// After the child has ended (or kill()): "exit 3", "signal 11 (Segmentation fault)".
  /// Reaps it, waiting up to a second if it has not ended yet (then kills it).
  std::string exit_description();
  pid_t pid() const { return pid_; }
  /// Closes the pipes (a worker then exits by itself) and lets the child finish on its own:
  /// it is reaped in the background, and the destructor then does nothing.
  void detach();

 private:
  void reap(bool block);
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  bool timed_out_ = false;
  std::optional<int> status_;  ///< waitpid status once reaped
};

/// The path of the running executable (/proc/self/exe).
std::string self_executable();

}  // namespace cutune::process
