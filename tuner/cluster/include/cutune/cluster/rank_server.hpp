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

/// Rank 0: sends every other rank the Setup (or, `refused`, a Shutdown) and returns the
/// lanes of all of them as factories for runner::TuneOptions::remote_lanes.
/// `silence`: how long beyond the evaluation timeout a rank may stay silent before its lanes
/// count as lost (RemoteLane).
std::vector<std::function<std::unique_ptr<runner::Lane>()>> start_ranks(World& world, const worker::Setup& setup,
                                                                         std::chrono::milliseconds silence);
void refuse_ranks(World& world);

}  // namespace cutune::cluster
