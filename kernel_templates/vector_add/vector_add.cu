// c[i] = a[i] + b[i] for float32: the bandwidth baseline (12 bytes moved per element),
// compared against a device-to-device memcpy.
//
// Tunable parameters arrive as -D defines (cutune and Kernel Tuner alike); the defaults
// below equal the "Default" values of vector_add.json, so the file also compiles alone.
//
// Work decomposition: a block owns block_size_x * elements_per_thread vectors of
// vector_width floats (the grid is ceil(n / (block_size_x * elements_per_thread *
// vector_width)), GridDivX in the JSON). Thread t handles the block's vectors t,
// t + block_size_x, t + 2 * block_size_x, ... so every load instruction of a warp reads
// one contiguous span (coalesced), and all of a thread's loads are issued before its
// stores (memory-level parallelism). The n % vector_width trailing floats are added by
// the one thread whose next vector would start at them.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef elements_per_thread
#define elements_per_thread 4
#endif
#ifndef vector_width
#define vector_width 4
#endif

#if vector_width != 1 && vector_width != 2 && vector_width != 4
#error "vector_width must be 1, 2 or 4"
#endif
#if elements_per_thread < 1
#error "elements_per_thread must be at least 1"
#endif

namespace cutune_vector_add {

template <int W> struct VecOf;
template <> struct VecOf<1> { using type = float; };
template <> struct VecOf<2> { using type = float2; };
template <> struct VecOf<4> { using type = float4; };
using vec_t = typename VecOf<vector_width>::type;

__device__ __forceinline__ float add(float x, float y) { return x + y; }
__device__ __forceinline__ float2 add(float2 x, float2 y) { return make_float2(x.x + y.x, x.y + y.y); }
__device__ __forceinline__ float4 add(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

}  // namespace cutune_vector_add
using namespace cutune_vector_add;

extern "C" __global__ void __launch_bounds__(block_size_x)
vector_add(float* __restrict__ c, const float* __restrict__ a, const float* __restrict__ b, int n) {
  constexpr long long vectors_per_block = (long long)block_size_x * elements_per_thread;
  // 64-bit: n is a signed 32-bit value, but the last block's range may pass 2^31 elements.
  const long long n_vectors = (long long)n / vector_width;  // whole vectors
  const long long block_first = (long long)blockIdx.x * vectors_per_block;
  const long long in_block = n_vectors - block_first;       // whole vectors from here on

  // cudaMalloc'ed buffers are 256-byte aligned, so vector k starts on a 4*W-byte boundary.
  const vec_t* __restrict__ a_v = reinterpret_cast<const vec_t*>(a) + block_first + threadIdx.x;
  const vec_t* __restrict__ b_v = reinterpret_cast<const vec_t*>(b) + block_first + threadIdx.x;
  vec_t* __restrict__ c_v = reinterpret_cast<vec_t*>(c) + block_first + threadIdx.x;

  if (in_block >= vectors_per_block) {
    // Full block (all but the last one or two): no bounds checks at all.
    vec_t va[elements_per_thread], vb[elements_per_thread];
#pragma unroll
    for (int k = 0; k < elements_per_thread; ++k) {
      va[k] = __ldg(a_v + k * block_size_x);
      vb[k] = __ldg(b_v + k * block_size_x);
    }
#pragma unroll
    for (int k = 0; k < elements_per_thread; ++k) c_v[k * block_size_x] = add(va[k], vb[k]);
    return;
  }

  // Partial block: whole vectors below in_block (which may be <= 0), then the scalar tail.
  vec_t va[elements_per_thread], vb[elements_per_thread];
#pragma unroll
  for (int k = 0; k < elements_per_thread; ++k) {
    if ((long long)threadIdx.x + k * block_size_x < in_block) {
      va[k] = __ldg(a_v + k * block_size_x);
      vb[k] = __ldg(b_v + k * block_size_x);
    }
  }
#pragma unroll
  for (int k = 0; k < elements_per_thread; ++k) {
    const long long local = (long long)threadIdx.x + k * block_size_x;
    if (local < in_block) {
      c_v[k * block_size_x] = add(va[k], vb[k]);
    } else if (vector_width > 1 && local == in_block) {
      // The first incomplete vector: its (n % vector_width) floats, one by one.
#pragma unroll
      for (int j = 0; j < vector_width - 1; ++j) {
        const long long i = n_vectors * vector_width + j;
        if (i < n) c[i] = __ldg(a + i) + __ldg(b + i);
      }
    }
  }
}
