// Sum of n float32 (or, compiled with -DCUTUNE_INT32, int32) values, with Harris's optimisation steps ("Optimizing
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
// combine 0: one launch computes the whole sum: every block writes its partial sum to
// workspace[], then the last block to finish (__threadfence + atomicInc-style ticket, the CUDA samples'
// threadFenceReduction pattern) sums the gridDim.x partials in a fixed order, writes
// out[0] and resets the counter to 0, so repeated launches need no host-side reset.
// combine 1: the classic two passes: the blocks write their partials and a second launch
// (reduction_final, one block; cutune.Launches in reduction.json) sums them.
// The result is deterministic either way: no floating-point atomics, fixed order.
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
#ifndef combine
#define combine 0
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

#if CUTUNE_INT32
using T = int;  // sums wrap around modulo 2^32, like the reference
using T2 = int2;
using T4 = int4;
#else
using T = float;
using T2 = float2;
using T4 = float4;
#endif

template <int W> struct VecOf;
template <> struct VecOf<1> { using type = T; };
template <> struct VecOf<2> { using type = T2; };
template <> struct VecOf<4> { using type = T4; };
using vec_t = typename VecOf<vector_width>::type;

__device__ __forceinline__ T hsum(T v) { return v; }
__device__ __forceinline__ T hsum(T2 v) { return v.x + v.y; }
__device__ __forceinline__ T hsum(T4 v) { return (v.x + v.y) + (v.z + v.w); }

/// This thread's share of the block's tile: vectors t, t + block_size_x, ... (coalesced),
/// plus the n % vector_width trailing floats for the one thread whose next vector would
/// start at them.
__device__ __forceinline__ T load_and_add(const T* __restrict__ in, int n) {
  constexpr long long vectors_per_block = (long long)block_size_x * elements_per_thread;
  const long long n_vectors = (long long)n / vector_width;
  const long long block_first = (long long)blockIdx.x * vectors_per_block;
  const long long in_block = n_vectors - block_first;  // whole vectors left; may be <= 0
  const vec_t* __restrict__ p = reinterpret_cast<const vec_t*>(in) + block_first + threadIdx.x;

  vec_t v[elements_per_thread];
  T sum = 0;
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
__device__ __forceinline__ T block_reduce(T* sdata, T value) {
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

/// Sums `parts` partials in a fixed order (one block): the last block of combine 0 and
/// reduction_final of combine 1. __ldcg reads through L2 (never a stale L1 line, never the
/// non-coherent texture path). T4 loads and an unrolled loop keep several loads in flight:
/// with 256 threads and 32768 partials (2^28 floats, the default tile) each thread reads
/// 32 T4, ~2 us at L2 latency. The result is valid in thread 0.
__device__ __forceinline__ T sum_partials(T* sdata, const T* __restrict__ workspace, unsigned parts) {
  const unsigned parts4 = parts / 4;
  const T4* __restrict__ ws4 = reinterpret_cast<const T4*>(workspace);
  T sum = 0;
#pragma unroll 8
  for (unsigned i = threadIdx.x; i < parts4; i += block_size_x) {
    const T4 q = __ldcg(ws4 + i);
    sum += (q.x + q.y) + (q.z + q.w);
  }
  if (threadIdx.x < parts - 4 * parts4) sum += __ldcg(workspace + 4 * parts4 + threadIdx.x);
  return block_reduce(sdata, sum);
}

}  // namespace cutune_reduction
using namespace cutune_reduction;

extern "C" __global__ void __launch_bounds__(block_size_x)
reduction(T* __restrict__ out, const T* __restrict__ in, T* __restrict__ workspace,
          unsigned int* __restrict__ counter, int n) {
  __shared__ T sdata[block_size_x];

  const T block_sum = block_reduce(sdata, load_and_add(in, n));
#if combine == 1
  if (threadIdx.x == 0) workspace[blockIdx.x] = block_sum;  // reduction_final adds them
  (void)counter;
  (void)out;
#else
  __shared__ bool is_last_block;
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

  const T total = sum_partials(sdata, workspace, gridDim.x);
  if (threadIdx.x == 0) {
    out[0] = total;
    *counter = 0u;  // ready for the next launch (kernel boundaries order this write)
  }
#endif  // combine
}

/// combine 1: the second pass, one block of block_size_x threads; as many partials as the
/// first launch had blocks (Kernel Tuner's grid: ceil(n / (block * elements * width))).
extern "C" __global__ void __launch_bounds__(block_size_x)
reduction_final(T* __restrict__ out, const T* __restrict__ workspace, int n) {
  __shared__ T sdata[block_size_x];
  constexpr long long per_block = (long long)block_size_x * elements_per_thread * vector_width;
  const unsigned parts = (unsigned)(((long long)n + per_block - 1) / per_block);
  const T total = sum_partials(sdata, workspace, parts < 1u ? 1u : parts);
  if (threadIdx.x == 0) out[0] = total;
}
