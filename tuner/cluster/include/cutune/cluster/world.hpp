#pragma once
// The MPI world of a tuning started by mpirun or srun: plain point-to-point messages of
// whole buffers (worker::to_bytes), nothing of our own on the wire. MPI_THREAD_MULTIPLE:
// each lane's thread sends and receives on its own tag.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cutune::cluster {

/// Tags: kControl carries the start (Setup, or Shutdown when rank 0 refused its input) and
/// each rank's lane count; lane i of a rank talks on kLaneBase + i.
constexpr int kControl = 1;
constexpr int kLaneBase = 100;

/// The longest sleep between two looks for a message (World::send, World::receive).
constexpr std::chrono::microseconds kLongestPause{1000};

/// How long a lane's polls may sleep, from how often its answers come. With every pause
/// allowed to grow to 1 ms, an MPI rank's GPU worker idled about 1 ms per evaluation when
/// evaluations took 1.5 ms (BAT's MD5Hash, 5000 configurations, H100s: the remote GPU idle
/// 39% of the search with 2 ranks, 24% with 4, against 1-2% for a GPU of rank 0). Waking 50
/// times per answer bounds that loss at about 2%; answers every 50 ms or more keep the 1 ms.
class PollPace {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kLooksPerAnswer = 50;
  static constexpr std::chrono::microseconds kShortestPause{10};

  /// An answer came at `now`.
  void answered(Clock::time_point now);
  /// The longest pause between polls now: kLongestPause until two answers have come.
  std::chrono::microseconds longest_pause() const;

 private:
  std::optional<Clock::time_point> last_;
  double interval_us_ = -1;  ///< moving average of the time between answers; < 0: none yet
};

/// Whether this process is one of several ranks started by mpirun or srun (their
/// environment says so): only then is MPI started.
bool launched_as_ranks();
/// Whether this cutune was built against MPI.
bool built_with_mpi();
/// The rank's index among the ranks of its node (for its default GPU).
int node_local_rank();
/// A warning when this process may run on fewer cores than its node has ("" otherwise).
/// mpirun binds each rank to one core by default with two ranks or fewer: a rank's GPU
/// worker then computed matmul's CPU reference in 58 s instead of 7.8 s (H100 host, 16
/// cores), and rank 0's compile pool would share that one core.
std::string binding_warning();

class World {
 public:
  /// MPI_Init_thread with MPI_THREAD_MULTIPLE; throws std::runtime_error when MPI cannot
  /// give it (or this build has no MPI).
  World();
  ~World();  ///< MPI_Finalize
  World(const World&) = delete;  // one MPI world per process
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Sends `bytes`; throws std::runtime_error when `dest` has not taken them by `deadline`
  /// (a large message waits for its receiver: a stopped rank would block the sender for ever).
  void send(int dest, int tag, std::vector<char> bytes,
            std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
            std::chrono::microseconds longest_pause = kLongestPause);
  /// The next message from `source` on `tag`; nullopt when none came by `deadline` (none:
  /// waits for ever). Polls, sleeping between polls (growing to `longest_pause`): a waiting
  /// rank costs no core.
  std::optional<std::vector<char>> receive(int source, int tag,
                                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                                           std::chrono::microseconds longest_pause = kLongestPause);
  /// A message already there, or nullopt at once.
  std::optional<std::vector<char>> try_receive(int source, int tag);
  void send_int(int dest, int tag, std::int64_t value);
  std::int64_t receive_int(int source, int tag);

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace cutune::cluster
