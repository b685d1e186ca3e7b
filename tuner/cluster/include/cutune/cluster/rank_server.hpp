#pragma once
// What every rank but 0 does: waits for rank 0's Setup, starts one GPU worker per GPU of
// its own (`devices`), says how many, and relays each worker's messages to and from rank 0
// until told to shut down. It opens no DB and runs no strategy.
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "cutune/cluster/world.hpp"
#include "cutune/runner/evaluation_lanes.hpp"
#include "cutune/worker/messages.hpp"

namespace cutune::cluster {

/// Returns the process's exit code: 0 after a Shutdown (also when rank 0 refused its input
/// and started nothing).
int serve_rank(World& world, const std::vector<int>& devices);

/// Rank 0's side of the other ranks: start() sends them the Setup and returns their lanes as
/// factories for runner::TuneOptions::start_remote_lanes; a Ranks destroyed before start()
/// (rank 0 refused its input) sends them Shutdown instead, so that every rank ends.
class Ranks {
 public:
  explicit Ranks(World& world) : world_(world) {}
  ~Ranks();
  Ranks(const Ranks&) = delete;  // one start or refusal per job
  Ranks& operator=(const Ranks&) = delete;
  /// `silence`: how long beyond the evaluation timeout a rank may stay silent before its
  /// lanes count as lost (RemoteLane).
  std::vector<std::function<std::unique_ptr<runner::Lane>()>> start(const worker::Setup& setup,
                                                                     std::chrono::milliseconds silence);

 private:
  void refuse();
  World& world_;
  bool started_ = false;
};

}  // namespace cutune::cluster
