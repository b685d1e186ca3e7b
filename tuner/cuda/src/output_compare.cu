// The comparison kernels of output verification on the device (output_compare.cpp), built
// at build time into PTX by nvcc and from that into a fatbinary (tuner/cuda/CMakeLists.txt).
// Per element type: every thread checks elements grid-stride with element_check.hpp's test
// (the host's compare() uses the same function), a block reduces (failures, worst failure
// and its index, largest finite error) into one partial; cutune_compare_finish reduces the
// partials. Compiled with --fmad=false: the test must round like the host's.
#include <cstdint>

#include "cutune/model/element_check.hpp"

namespace ec = cutune::element_check;

struct Partial {
  double worst_error;                // -1: no failure
  unsigned long long worst_index;
  unsigned long long failures;
  double max_error;                  // largest finite error of any element
};

constexpr int kThreads = 256;

__device__ inline void merge(Partial& a, const Partial& b) {
  if (b.worst_error >= 0 && (a.worst_error < 0 || ec::worse(b.worst_error, b.worst_index, a.worst_error, a.worst_index))) {
    a.worst_error = b.worst_error;
    a.worst_index = b.worst_index;
  }
  a.failures += b.failures;
  a.max_error = a.max_error > b.max_error ? a.max_error : b.max_error;
}

__device__ inline void block_reduce_and_store(Partial mine, Partial* out) {
  __shared__ Partial shared[kThreads];
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) merge(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = shared[0];
}

__device__ inline void account(Partial& p, ec::Outcome o, unsigned long long i) {
  const double inf = __builtin_huge_val();
  if (o.error != inf && o.error > p.max_error) p.max_error = o.error;
  if (o.ok) return;
  ++p.failures;
  if (p.worst_error < 0 || ec::worse(o.error, i, p.worst_error, p.worst_index)) {
    p.worst_error = o.error;
    p.worst_index = i;
  }
}

__device__ inline Partial empty_partial() { return Partial{-1.0, 0ull, 0ull, 0.0}; }

// One kernel per element type, each a thin extern "C" name over element_check's test of
// that type. `poison` != 0: the output was poisoned before the run (the type's own pattern).
template <class T>
__device__ inline void compare_elements(const T* expected, const T* got, unsigned long long n, double atol,
                                        double rtol, unsigned long long poison, Partial* partials) {
  Partial p = empty_partial();
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += 1ull * gridDim.x * blockDim.x)
    account(p, ec::check_element(expected[i], got[i], poison != 0, atol, rtol), i);
  block_reduce_and_store(p, &partials[blockIdx.x]);
}

#define CUTUNE_COMPARE(NAME, T)                                                                      \
  extern "C" __global__ void __launch_bounds__(kThreads)                                            \
      NAME(const T* expected, const T* got, unsigned long long n, double atol, double rtol,          \
           unsigned long long poison, Partial* partials) {                                           \
    compare_elements<T>(expected, got, n, atol, rtol, poison, partials);                             \
  }

CUTUNE_COMPARE(cutune_compare_int8, std::int8_t)
CUTUNE_COMPARE(cutune_compare_uint8, std::uint8_t)
CUTUNE_COMPARE(cutune_compare_int16, std::int16_t)
CUTUNE_COMPARE(cutune_compare_uint16, std::uint16_t)
CUTUNE_COMPARE(cutune_compare_int32, std::int32_t)
CUTUNE_COMPARE(cutune_compare_uint32, std::uint32_t)
CUTUNE_COMPARE(cutune_compare_int64, std::int64_t)
CUTUNE_COMPARE(cutune_compare_uint64, std::uint64_t)
CUTUNE_COMPARE(cutune_compare_float32, float)
CUTUNE_COMPARE(cutune_compare_float64, double)
CUTUNE_COMPARE(cutune_compare_float16, cutune::Float16)
CUTUNE_COMPARE(cutune_compare_bfloat16, cutune::BFloat16)
CUTUNE_COMPARE(cutune_compare_complex64, cutune::Complex<float>)
CUTUNE_COMPARE(cutune_compare_complex128, cutune::Complex<double>)

extern "C" __global__ void __launch_bounds__(kThreads)
    cutune_compare_finish(const Partial* partials, unsigned int count, Partial* out) {
  Partial p = empty_partial();
  for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) merge(p, partials[i]);
  block_reduce_and_store(p, out);
}
