// Sum of n float32 values in ONE launch, with Harris's optimisation steps ("Optimizing
// Parallel Reduction in CUDA") as tunable parameters:
//   addressing 0: interleaved, divergent branch `tid % (2*s) == 0`           (step 1)
//   addressing 1: interleaved, strided index `2*s*tid` (bank conflicts)      (step 2)
//   addressing 2: sequential addressing `tid < s`                            (step 3)
//   elements_per_thread 2: first add during the global load                  (step 4)
//   warp_tail 1: the last warp reduces with __shfl_down_sync                 (step 5; the
//                volatile-shared-memory warp trick of the original is unsafe since Volta)
//   unroll 1: tree loops completely unrolled (block size is a compile-time constant)
//             versus `#pragma unroll 1` runtime loops                        (step 6)
//   elements_per_thread > 2, vector_width 2/4: more work per thread, float2/float4
//             loads                                                          (step 7)
//
// One launch computes the whole sum: every block writes its partial sum to workspace[],
// then the last block to finish (__threadfence + atomicInc-style ticket, the CUDA samples'
// threadFenceReduction pattern) sums the gridDim.x partials in a fixed order, writes
// out[0] and resets the counter to 0, so repeated launches need no host-side reset.
// The result is deterministic: no floating-point atomics, fixed summation order.
//
// Parameters arrive as -D defines; the defaults equal the "Default" values of
// reduction.json, so the file also compiles alone.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef addressing
#define addressing 2
#endif
#ifndef elements_per_thread
#define elements_per_thread 8
#endif
#ifndef vector_width
#define vector_width 4
#endif
#ifndef warp_tail
#define warp_tail 1
#endif
#ifndef unroll
#define unroll 1
#endif

#if (block_size_x & (block_size_x - 1)) != 0 || block_size_x < 32 || block_size_x > 1024
#error "block_size_x must be a power of two in [32, 1024]"
#endif
#if vector_width != 1 && vector_width != 2 && vector_width != 4
#error "vector_width must be 1, 2 or 4"
#endif
#if elements_per_thread < 1
#error "elements_per_thread must be at least 1"
#endif
#if addressing < 0 || addressing > 2
#error "addressing must be 0, 1 or 2"
#endif

#if unroll
#define CUTUNE_TREE_UNROLL _Pragma("unroll")
#else
#define CUTUNE_TREE_UNROLL _Pragma("unroll 1")
#endif

namespace cutune_reduction {

template <int W> struct VecOf;
template <> struct VecOf<1> { using type = float; };
template <> struct VecOf<2> { using type = float2; };
template <> struct VecOf<4> { using type = float4; };
using vec_t = typename VecOf<vector_width>::type;

__device__ __forceinline__ float hsum(float v) { return v; }
__device__ __forceinline__ float hsum(float2 v) { return v.x + v.y; }
__device__ __forceinline__ float hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

/// This thread's share of the block's tile: vectors t, t + block_size_x, ... (coalesced),
/// plus the n % vector_width trailing floats for the one thread whose next vector would
/// start at them.
__device__ __forceinline__ float load_and_add(const float* __restrict__ in, int n) {
  constexpr long long vectors_per_block = (long long)block_size_x * elements_per_thread;
  const long long n_vectors = (long long)n / vector_width;
  const long long block_first = (long long)blockIdx.x * vectors_per_block;
  const long long in_block = n_vectors - block_first;  // whole vectors left; may be <= 0
  const vec_t* __restrict__ p = reinterpret_cast<const vec_t*>(in) + block_first + threadIdx.x;

  vec_t v[elements_per_thread];
  float sum = 0.0f;
  if (in_block >= vectors_per_block) {
    // Full tile (every block but the last one or two): no bounds checks. All loads are
    // issued before the first add.
#pragma unroll
    for (int k = 0; k < elements_per_thread; ++k) v[k] = __ldg(p + k * block_size_x);
#pragma unroll
    for (int k = 0; k < elements_per_thread; ++k) sum += hsum(v[k]);
    return sum;
  }
#pragma unroll
  for (int k = 0; k < elements_per_thread; ++k) {
    const long long local = (long long)threadIdx.x + k * block_size_x;
    if (local < in_block) {
      sum += hsum(__ldg(p + k * block_size_x));
    } else if (vector_width > 1 && local == in_block) {
#pragma unroll
      for (int j = 0; j < vector_width - 1; ++j) {
        const long long i = n_vectors * vector_width + j;
        if (i < n) sum += __ldg(in + i);
      }
    }
  }
  return sum;
}

/// Reduces one value per thread over the block; the result is valid in thread 0 only.
/// sdata may be reused after the caller's next __syncthreads().
__device__ __forceinline__ float block_reduce(float* sdata, float value) {
  const unsigned tid = threadIdx.x;
#if addressing == 2 && warp_tail
  if constexpr (block_size_x == 32) {
    // One warp: no shared memory at all.
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
  } else {
#endif
  sdata[tid] = value;
  __syncthreads();
#if addressing == 0
  // Step 1: interleaved addressing; half the threads of every warp diverge, and the
  // modulo is a real integer division.
  CUTUNE_TREE_UNROLL
  for (unsigned s = 1; s < block_size_x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  return sdata[0];
#elif addressing == 1
  // Step 2: interleaved addressing with a strided index; no divergence inside the active
  // warps, but 2-way and worse shared-memory bank conflicts.
  CUTUNE_TREE_UNROLL
  for (unsigned s = 1; s < block_size_x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < block_size_x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  return sdata[0];
#else
  // Step 3: sequential addressing, conflict-free, active threads contiguous.
#if warp_tail
  constexpr unsigned last_s = 64;  // stop with 64 partials; warp 0 takes over
#else
  constexpr unsigned last_s = 1;
#endif
  CUTUNE_TREE_UNROLL
  for (unsigned s = block_size_x / 2; s >= last_s; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
#if warp_tail
  // Step 5: the last 64 partials by warp 0 alone, no __syncthreads(); shuffles instead
  // of the (Volta-unsafe) implicit warp-synchronous shared-memory code.
  if (tid < 32) {
    value = sdata[tid] + sdata[tid + 32];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
  }  // if constexpr (block_size_x == 32) ... else
#else
  return sdata[0];
#endif
#endif
}

}  // namespace cutune_reduction
using namespace cutune_reduction;

extern "C" __global__ void __launch_bounds__(block_size_x)
reduction(float* __restrict__ out, const float* __restrict__ in, float* __restrict__ workspace,
          unsigned int* __restrict__ counter, int n) {
  __shared__ float sdata[block_size_x];
  __shared__ bool is_last_block;

  const float block_sum = block_reduce(sdata, load_and_add(in, n));
  if (threadIdx.x == 0) {
    workspace[blockIdx.x] = block_sum;
    // Release: the partial is visible device-wide before this block takes its ticket.
    __threadfence();
    const unsigned ticket = atomicAdd(counter, 1u);
    is_last_block = (ticket == gridDim.x - 1);
    // Acquire side: orders the other blocks' partials (released before their tickets)
    // before this block's reads below (the barrier extends it to the whole block).
    if (is_last_block) __threadfence();
  }
  __syncthreads();
  if (!is_last_block) return;

  // The last block: sum the gridDim.x partials in a fixed order. __ldcg reads through L2
  // (never a stale L1 line, never the non-coherent texture path). float4 loads and an
  // unrolled loop keep several loads in flight: with 256 threads and 32768 partials
  // (2^28 floats, the default tile) each thread reads 32 float4, ~2 us at L2 latency.
  const unsigned parts = gridDim.x;
  const unsigned parts4 = parts / 4;
  const float4* __restrict__ ws4 = reinterpret_cast<const float4*>(workspace);
  float sum = 0.0f;
#pragma unroll 8
  for (unsigned i = threadIdx.x; i < parts4; i += block_size_x) {
    const float4 q = __ldcg(ws4 + i);
    sum += (q.x + q.y) + (q.z + q.w);
  }
  if (threadIdx.x < parts - 4 * parts4) sum += __ldcg(workspace + 4 * parts4 + threadIdx.x);

  const float total = block_reduce(sdata, sum);
  if (threadIdx.x == 0) {
    out[0] = total;
    *counter = 0u;  // ready for the next launch (kernel boundaries order this write)
  }
}
