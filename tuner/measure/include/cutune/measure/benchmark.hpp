#pragma once
// Timing of kernel launches, basic but honest (issue 2; the full nvbench-style engine is
// issue 4): a warm-up launch, then samples of one event-timed launch each, every sample
// after a synchronize so that launches never overlap or queue.
#include <array>
#include <cstdint>
#include <vector>

#include "cutune/cuda/device.hpp"

namespace cutune::measure {

struct Launch {
  CUfunction function = nullptr;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
  std::vector<void*> params;  ///< pointers to each argument's value
};

struct TimingSettings {
  int warmup_launches = 1;
  int samples = 10;
};

/// A configuration's launch sequence (one launch for most templates).
using LaunchSequence = std::vector<Launch>;

/// Launches once (asynchronously); throws DriverError if the launch is refused.
void launch(const Launch& l, CUstream stream = nullptr);
/// Every launch of the sequence, in order (asynchronously).
void launch(const LaunchSequence& seq, CUstream stream = nullptr);

/// Warm-up, then `samples` event-timed runs of the whole sequence; returns each sample in
/// milliseconds. Throws DriverError on any failure (checked after every sample).
std::vector<double> time_launches(const LaunchSequence& seq, const TimingSettings& settings);

/// Bandwidth of a device-to-device copy of `bytes`, counting read + write, in GB/s:
/// the median of `samples` event-timed cuMemcpyDtoD, after one warm-up copy.
double copy_bandwidth_gbps(std::size_t bytes, int samples = 20);

}  // namespace cutune::measure
