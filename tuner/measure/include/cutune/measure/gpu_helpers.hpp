#pragma once
// The small GPU programs measurement needs besides the kernel under test, after
// nvbench's cold measurement (STYLE.md, convention 1):
//   - a blocking kernel that holds the stream until the host has queued start event,
//     launches and stop event, so that launch latency never lands inside a sample;
//   - a clock probe that measures the SM clock right after a sample (clock64 ticks over a
//     %globaltimer interval, on one SM);
//   - an L2 flush: a kernel that reads a buffer of 1.5x the L2's size (SamplerSettings), allocated once.
//     Reading, not nvbench's memset: a memset leaves the L2 full of dirty lines whose
//     write-back then lands inside the next sample (on the H200 it added 6-7 us to
//     every cold sample of a 20 us and of a 150 us kernel against ncu's
//     gpu__time_duration); after a read the L2 holds clean lines that cost nothing to evict.
// The kernels are PTX text JIT-compiled by the driver (cuModuleLoadData), so measurement
// needs neither NVRTC nor nvcc.
#include <cstddef>
#include <cstdint>

#include "cutune/cuda/device.hpp"

namespace cutune::measure {

/// Holds a stream until released, and probes the SM clock.
class GpuHelpers {
 public:
  GpuHelpers();
  GpuHelpers(const GpuHelpers&) = delete;
  GpuHelpers& operator=(const GpuHelpers&) = delete;

  /// Queues the blocking kernel: it spins until release() or a 100 ms timeout.
  void block(CUstream stream = nullptr);
  /// Lets the blocking kernel finish.
  void release();
  /// Whether the last blocking kernel ran into its timeout (the host took longer than
  /// 100 ms to queue the sample, so the sample may include launch latency). Valid after
  /// the stream synchronised.
  bool block_timed_out() const;

  /// Queues the clock probe: it spins for at least `interval_ns` of %globaltimer between
  /// two timer ticks and records the clock64 ticks in between.
  void probe_clock(CUstream stream = nullptr, std::uint64_t interval_ns = 4000);
  /// The SM clock the last probe measured, in MHz. Valid after the stream synchronised.
  double probed_clock_mhz() const;

 private:
  cuda::Module module_;
  CUfunction block_fn_ = nullptr, probe_fn_ = nullptr;
  cuda::PinnedHostBuffer flag_;   ///< [0] release flag, [1] timed-out flag (uint32)
  cuda::PinnedHostBuffer probe_;  ///< t0, t1, c0, c1 (uint64)
};

/// One device buffer of a multiple of the L2's size (1.5 by default), allocated once; flush() reads all of it so
/// that nothing the kernel under test touched stays in L2, and nothing dirty either.
class L2Flush {
 public:
  /// Reads `multiple` x `l2_bytes` (rounded up to 16 bytes).
  L2Flush(std::size_t l2_bytes, int sm_count, double multiple = 1.5);
  void flush(CUstream stream = nullptr);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  cuda::Module module_;
  CUfunction function_ = nullptr;
  cuda::DeviceBuffer buffer_;
  unsigned blocks_;
};

}  // namespace cutune::measure
