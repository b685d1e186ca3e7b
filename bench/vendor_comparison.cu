// The vendor references of cutune-bench-vendor (vendor_comparison.hpp): CUB
// DeviceReduce::Sum and DeviceScan::ExclusiveSum, cuBLAS SGEMM in pedantic fp32, and a
// device-to-device cudaMemcpy, each timed exactly as cutune times a tuned kernel.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
#include <string>
#include <utility>

#include "vendor_comparison.hpp"

namespace cutune::bench {
namespace {

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

void check(cudaError_t e, const char* call, int line) {
  if (e == cudaSuccess) return;
  throw VendorError(std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                        ") at vendor_comparison.cu:" + std::to_string(line),
                    is_sticky(e));
}

void check(cublasStatus_t s, const char* call, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  // A cuBLAS failure can hide a sticky runtime error (e.g. its kernel faulted).
  cudaError_t e = cudaPeekAtLastError();
  throw VendorError(std::string(call) + ": " + cublasGetStatusName(s) + " (" +
                        cublasGetStatusString(s) + ") at vendor_comparison.cu:" +
                        std::to_string(line),
                    is_sticky(e));
}

#define VENDOR_CHECK(call) check((call), #call, __LINE__)

/// Device scratch memory (CUB's temporary storage); not copyable (one cudaFree).
class Scratch {
 public:
  explicit Scratch(std::size_t bytes) : bytes_(bytes) {
    if (bytes_) VENDOR_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~Scratch() { cudaFree(ptr_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A cuBLAS handle; not copyable (one cublasDestroy).
class Cublas {
 public:
  Cublas() { VENDOR_CHECK(cublasCreate(&h_)); }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// The timing method: the warm-up calls (first-call costs: module loading, cuBLAS's
// heuristics and workspace), a synchronize; then per sample timing.sample_one(call), the
// very code that times the tuned kernel (measure::Sampler::sample_call: L2 flush,
// blocking kernel, events around the call, synchronize). Both sides of every ratio are
// timed this way on the legacy default stream with nothing else queued, so a ratio
// compares the work and not the method.
template <class Call>
std::vector<double> time_calls(Call&& call, const Timing& timing) {
  VENDOR_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < timing.warmup; ++i) {
    call();
    VENDOR_CHECK(cudaGetLastError());
  }
  VENDOR_CHECK(cudaDeviceSynchronize());
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(timing.samples));
  for (int i = 0; i < timing.samples; ++i) {
    samples.push_back(timing.sample_one([&] { call(); }));
    VENDOR_CHECK(cudaGetLastError());
  }
  return samples;
}

template <class T>
T* as(DevicePtr p) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(p));
}

// CUB picks 32- or 64-bit offsets from the type of num_items; a 64-bit count is what a user
// with more than 2^31 items needs but it is not what CUB users pass for smaller inputs, so
// use int whenever it fits (the templates take n as int32 too).
template <class Fn>
std::vector<double> with_count(std::int64_t n, Fn&& fn) {
  if (n <= INT_MAX) return fn(static_cast<int>(n));
  return fn(n);
}

}  // namespace

void vendor_init(int ordinal) {
  VENDOR_CHECK(cudaSetDevice(ordinal));
  VENDOR_CHECK(cudaFree(nullptr));  // initialises the runtime on the (primary) context
}

std::vector<double> time_cub_reduce_sum(DevicePtr in, DevicePtr out, std::int64_t n,
                                        const Timing& timing) {
  return with_count(n, [&](auto count) {
    const float* d_in = as<const float>(in);
    float* d_out = as<float>(out);
    std::size_t temp_bytes = 0;
    VENDOR_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_out, count));
    Scratch temp(temp_bytes);  // allocated once, outside the timed calls
    return time_calls(
        [&] {
          std::size_t bytes = temp.bytes();
          VENDOR_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes, d_in, d_out, count));
        },
        timing);
  });
}

std::vector<double> time_cub_exclusive_sum(DevicePtr in, DevicePtr out, std::int64_t n,
                                           const Timing& timing) {
  return with_count(n, [&](auto count) {
    const float* d_in = as<const float>(in);
    float* d_out = as<float>(out);
    std::size_t temp_bytes = 0;
    VENDOR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_in, d_out, count));
    Scratch temp(temp_bytes);
    return time_calls(
        [&] {
          std::size_t bytes = temp.bytes();
          VENDOR_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, d_in, d_out, count));
        },
        timing);
  });
}

std::vector<double> time_cublas_sgemm_row_major(DevicePtr a, DevicePtr b, DevicePtr c,
                                                std::int64_t m, std::int64_t n, std::int64_t k,
                                                const Timing& timing) {
  if (m <= 0 || n <= 0 || k <= 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    throw VendorError("cublasSgemm: m, n, k must be in 1..INT_MAX", false);
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  Cublas handle;
  // Pedantic: fp32 inputs, fp32 accumulation, no TF32 or other reduced-precision paths,
  // i.e. the arithmetic the tuned fp32 kernel does.
  VENDOR_CHECK(cublasSetMathMode(handle.get(), CUBLAS_PEDANTIC_MATH));
  VENDOR_CHECK(cublasSetPointerMode(handle.get(), CUBLAS_POINTER_MODE_HOST));
  const float alpha = 1.0f, beta = 0.0f;
  // cuBLAS is column-major. A row-major X[r][c] is the column-major X^T, so the row-major
  // C = A * B is the column-major C^T = B^T * A^T: pass B first, swap m and n, no transposes.
  const float* d_a = as<const float>(a);
  const float* d_b = as<const float>(b);
  float* d_c = as<float>(c);
  return time_calls(
      [&] {
        VENDOR_CHECK(cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &alpha, d_b,
                                 in, d_a, ik, &beta, d_c, in));
      },
      timing);
}

std::vector<double> time_memcpy_d2d(DevicePtr dst, DevicePtr src, std::size_t bytes,
                                    const Timing& timing) {
  void* d_dst = as<void>(dst);
  const void* d_src = as<const void>(src);
  return time_calls(
      [&] { VENDOR_CHECK(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, nullptr)); },
      timing);
}

VendorVersions vendor_versions() {
  VendorVersions v;
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
    v.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  v.cub = std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
          std::to_string(CUB_SUBMINOR_VERSION);
  return v;
}

}  // namespace cutune::bench
