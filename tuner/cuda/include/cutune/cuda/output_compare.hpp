#pragma once
// Output verification on the device: a configuration's output is compared with the expected
// output where both already are, on the GPU, instead of downloading them (a GEMM's 16M-float
// output cost 130 ms per configuration to download and compare on the CPU). The test per
// element is element_check.hpp's, the one the host's compare() uses, so the two agree;
// only a few bytes come back, and on a mismatch the worst element itself for the message.
// Shared by the GPU worker (runner::GpuStage) and the loader's first-use check.
#include <cstdint>

#include "cutune/cuda/device.hpp"
#include "cutune/model/host_data.hpp"

namespace cutune::cuda {

class OutputComparator {
 public:
  /// Loads the comparison kernels (embedded fatbinary); needs the context current.
  OutputComparator();
  OutputComparator(const OutputComparator&) = delete;  // owns the module and scratch buffers
  OutputComparator& operator=(const OutputComparator&) = delete;

  /// Compares `count` elements of `spec`'s type at `expected` and `got` (device addresses),
  /// as compare() does on the host. `poisoned`: `got` was poisoned before the run (an
  /// element still holding the float poison fails as never written). Synchronises.
  VerifyResult compare(const ArgumentSpec& spec, CUdeviceptr expected, CUdeviceptr got, std::int64_t count,
                       const Tolerance& tolerance, bool poisoned);

 private:
  Module module_;
  CUfunction finish_ = nullptr;
  DeviceBuffer partials_, result_;
};

}  // namespace cutune::cuda
