#pragma once
// The vendor side of cutune-bench-vendor: CUB, cuBLAS and a device-to-device cudaMemcpy,
// compiled by nvcc (vendor_comparison.cu). Plain C++ types only, so that main.cpp (the
// host side: DB, NVRTC, GpuStage, JSON) builds with the host compiler alone.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cutune::bench {

/// A device address (a CUdeviceptr value) in the primary context of the GPU given to
/// vendor_init: cutune's driver-API buffers and the runtime share that context.
using DevicePtr = std::uint64_t;

/// Warm-up calls, then `samples` timed calls, each timed by `sample_one` (main.cpp passes
/// cutune's measure::Sampler::sample_call: L2 flush, blocking kernel, events), the same
/// method and numbers as the tuned kernel's, so both sides of a ratio are timed alike.
struct Timing {
  int warmup = 3;
  int samples = 20;
  /// Queues the call it is given between two events and returns their interval in ms.
  std::function<double(const std::function<void()>&)> sample_one;
};

/// A failing CUDA runtime or cuBLAS call: the call text, the error name and string.
/// sticky(): the context is unusable afterwards (illegal address, launch failure...).
class VendorError : public std::runtime_error {
 public:
  VendorError(const std::string& what, bool sticky) : std::runtime_error(what), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

/// Makes the runtime use GPU `ordinal` (its primary context, already current on this
/// thread through cutune's cuda::Context). Throws VendorError.
void vendor_init(int ordinal);

/// Each times a warm-up, then `timing.samples` calls (see time_calls in the .cu for the
/// method) and returns every sample in milliseconds. The output holds the result of the
/// last call (each call computes the same thing from the same inputs). Throws VendorError.
std::vector<double> time_cub_reduce_sum(DevicePtr in, DevicePtr out, std::int64_t n,
                                        const Timing& timing);
std::vector<double> time_cub_exclusive_sum(DevicePtr in, DevicePtr out, std::int64_t n,
                                           const Timing& timing);
/// Row-major C[m][n] = A[m][k] * B[k][n] in fp32, CUBLAS_PEDANTIC_MATH (no TF32).
std::vector<double> time_cublas_sgemm_row_major(DevicePtr a, DevicePtr b, DevicePtr c,
                                                std::int64_t m, std::int64_t n, std::int64_t k,
                                                const Timing& timing);
std::vector<double> time_memcpy_d2d(DevicePtr dst, DevicePtr src, std::size_t bytes,
                                    const Timing& timing);

struct VendorVersions {
  std::string cuda_runtime;  ///< "13.0"
  std::string cublas;        ///< "13.0.0"
  std::string cub;           ///< "3.0.0" (CUB_VERSION of the CCCL headers compiled against)
};
VendorVersions vendor_versions();

}  // namespace cutune::bench
