#pragma once
// GPU-side start and end timestamps of every kernel, memcpy and memset, from CUPTI's activity
// API (libcupti, loaded at run time with dlopen like the driver). What ncu reports as
// gpu__time_duration: the work's own execution, without the ~1-1.5 us that the event pair
// around a launch adds (measured on the H200: results/nvidia-h200/measurement.json).
#include <cstdint>
#include <string>
#include <vector>

namespace cutune::cuda {

/// One piece of GPU work as CUPTI recorded it. Timestamps in ns on CUPTI's clock.
struct GpuActivity {
  std::string name;  ///< kernel function name; "memcpy" or "memset" for those
  std::uint64_t start_ns = 0, end_ns = 0;
};

/// Process-wide (CUPTI's activity buffers and callbacks are global): recording of kernels,
/// memcpys and memsets is enabled by the first try_get() and stays on.
class ActivityTrace {
 public:
  /// nullptr, with `why` set, when libcupti cannot be loaded or refuses; never throws.
  /// Looked up as $CUTUNE_CUPTI, libcupti.so.<CUDA major>, libcupti.so, then the toolkit's
  /// lib64 and extras/CUPTI/lib64 folders.
  static ActivityTrace* try_get(std::string* why = nullptr);

  /// CUPTI's timestamp now (ns), comparable with GpuActivity's.
  std::uint64_t now_ns() const;
  /// Delivers all records of finished work (forced flush) and returns those that started at
  /// or after `since_ns`, dropping the rest. Call after the work synchronised.
  std::vector<GpuActivity> collect(std::uint64_t since_ns);

  ActivityTrace(const ActivityTrace&) = delete;
  ActivityTrace& operator=(const ActivityTrace&) = delete;

 private:
  ActivityTrace() = default;
};

}  // namespace cutune::cuda
