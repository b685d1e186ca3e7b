#pragma once
// Rank 0's side of a GPU worker on another rank: a runner::Lane whose requests and answers
// travel as MPI messages to that rank's relay (rank_server.hpp), which keeps the GPU worker
// process (restarts, hang timeouts) as a local lane does. A rank that does not answer within
// the evaluation timeout (plus a margin for the network) is lost: its evaluations go to the
// other lanes. A rank that dies makes mpirun end the job; the same command then resumes
// from the DB, losing only what was in flight.
#include <chrono>
#include <optional>
#include <string>

#include "cutune/cluster/world.hpp"
#include "cutune/runner/evaluation_lanes.hpp"

namespace cutune::cluster {

class RemoteLane : public runner::Lane {
 public:
  /// Lane `index` of rank `rank`, which was sent the Setup. `silence`: how long beyond the
  /// evaluation timeout the rank may stay silent before it counts as lost.
  RemoteLane(World& world, int rank, int index, std::chrono::milliseconds silence);
  std::string name() const override;
  const DeviceIdentity& wait_identified() override;
  void wait_ready() override;
  const worker::Ready& ready() const override { return ready_; }
  /// Two in the rank's GPU worker and one on its way, so that the relay has the next request
  /// at hand when an answer leaves.
  std::size_t capacity() const override { return 3; }
  void submit(const worker::Evaluate& request) override;
  std::optional<GpuEvaluation> collect() override;
  void adopt_reference(const worker::Candidate& candidate) override;
  void set_timeout(std::chrono::milliseconds timeout) override;
  std::size_t restarts() const override { return restarts_; }
  void release() override;

 private:
  World& world_;
  int rank_, index_;
  std::chrono::milliseconds silence_;
  std::optional<DeviceIdentity> identity_;
  worker::Ready ready_;
  bool is_ready_ = false, released_ = false;
  std::size_t in_flight_ = 0, restarts_ = 0;
  std::chrono::milliseconds timeout_{std::chrono::seconds(120)};
  std::string gpu_;  ///< "GPU n" on that rank, once identified
  PollPace pace_;    ///< how long the polls for its answers may sleep
};

}  // namespace cutune::cluster
