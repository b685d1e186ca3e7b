#pragma once
// Kernel launches as the measurement engine sees them (a configuration's launch sequence),
// and the device-to-device copy that gives the bandwidth ceiling. Timing is sampler.hpp's.
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

/// A configuration's launch sequence (one launch for most templates).
using LaunchSequence = std::vector<Launch>;

/// Launches once (asynchronously); throws DriverError if the launch is refused.
void launch(const Launch& l, CUstream stream = nullptr);
/// Every launch of the sequence, in order (asynchronously).
void launch(const LaunchSequence& seq, CUstream stream = nullptr);

/// Bandwidth of a device-to-device copy of `bytes`, counting read + write, in GB/s:
/// the median of `samples` event-timed cuMemcpyDtoD, after one warm-up copy.
double copy_bandwidth_gbps(std::size_t bytes, int samples = 20);

}  // namespace cutune::measure
