#pragma once
// Simulation: a strategy tuned against a recorded space instead of a GPU. Each
// evaluation returns the recorded result and costs its recorded compile + benchmark
// (+ verification) time in simulated time, through the same Session as a real run.
#include <cstddef>
#include <string>
#include <vector>

#include "cutune/search/recorded_space.hpp"
#include "cutune/search/session.hpp"

namespace cutune::search {

struct SimulationOptions {
  SessionOptions session;
  std::size_t batch = 8;  ///< configurations asked at a time, as the real tuning loop asks
};

struct SimulationResult {
  std::vector<TraceEntry> trace;
  std::uint64_t revisits = 0;
  SessionEnd end = SessionEnd::Running;
};

/// Runs `strategy` (made over recorded.space()) to the end of its session. Throws
/// std::logic_error if the strategy proposes a configuration that is not recorded.
SimulationResult simulate(const RecordedSpace& recorded, Strategy& strategy,
                          const SimulationOptions& options,
                          const std::vector<std::pair<Config, RecordedResult>>& stored = {});

/// Another tool's run (e.g. Kernel Tuner's) as a trace: the configurations it evaluated,
/// in order, each unique one costing its recorded time; repeats are revisits (free).
/// Throws InputError naming `what` for a configuration that is not recorded.
std::vector<TraceEntry> replay_trace(const RecordedSpace& recorded, const std::vector<Config>& evaluated,
                                     const std::string& what);

}  // namespace cutune::search
