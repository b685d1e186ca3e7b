// Prefix sum (exclusive or inclusive, a run-time flag) of n float32 values, or of n int32
// values with wrap-around when compiled with -DCUTUNE_INT32=1 (scan_int32.json).
//
// Every tile of block_size_x * items_per_thread consecutive elements is scanned by one
// block in three levels:
//   1. load:    each thread gets items_per_thread CONSECUTIVE elements in registers
//               (a "blocked" arrangement), then scans them sequentially;
//               warp_transpose 0: direct loads of the thread's own run, float4/float2 vectors
//                           when items_per_thread allows (each warp instruction then
//                           touches 32 runs of 16 bytes apart by items_per_thread*4 bytes);
//               warp_transpose 1: warp-striped loads (every instruction reads 128 contiguous
//                           bytes per warp), transposed to blocked through shared memory,
//                           one padding word every 32 so that neither side has bank
//                           conflicts (CUB's BLOCK_LOAD_WARP_TRANSPOSE); stores likewise.
//   2. block:   an exclusive scan of the block_size_x per-thread totals:
//               block_scan 0: Hillis-Steele, double-buffered in shared memory
//                             (log2(block) steps of block_size_x adds, one barrier each);
//               block_scan 1: Blelloch work-efficient up-sweep / down-sweep in shared
//                             memory (2*(block-1) adds, 2*log2(block) barriers);
//                             padding 1 inserts a padding word every NUM_BANKS = 32 words
//                             (index i -> i + i/32, GPU Gems 3 ch. 39) against the 2-, 4-,
//                             ..., 32-way bank conflicts of the tree's strided indices;
//               block_scan 2: warp-shuffle scans (__shfl_up_sync) within each warp, one
//                             shared word per warp, the warp totals scanned by warp 0
//                             (two barriers; the modern way).
//   3. between tiles:
//               inter_block 0: single-pass decoupled look-back (Merrill & Garland 2016),
//                              kernel `scan`, one launch; see below.
//               inter_block 1: reduce-then-scan, three launches (cutune.Launches):
//                              `scan_reduce` (tile sums) -> `scan_spine` (one block scans
//                              the tile sums in place, any number of them, in chunks of a
//                              tile) -> `scan_downsweep` (each tile scanned again, offset by
//                              its tile's exclusive prefix). 3 n element moves instead of 2.
//
// Decoupled look-back. workspace[t] is tile t's status, one 64-bit word written and read
// atomically (relaxed, GPU scope): value bits << 32 | epoch << 2 | flag, flag 1 = the tile's
// aggregate, 2 = its inclusive prefix, anything else (or another epoch) = not yet. A block
// takes its tile index from an atomic ticket, so tiles start in ticket order and every
// predecessor a block waits for is running or done: forward progress without any
// assumption on the hardware's block scheduling order. counter[0] holds epoch << 32 |
// ticket: the block that draws the last ticket of the grid stores (epoch + 1) << 32, so the
// next launch (stream order) starts at ticket 0 with a new epoch and ignores every status
// left from this one; nothing has to be reset on the host between timed launches (epochs
// wrap after 2^30 launches). Warp 0 of a tile publishes its aggregate, then inspects 32
// predecessors at a time, spinning while any is unpublished, sums back to the nearest
// inclusive prefix and publishes its own inclusive prefix.
//
// Parameters arrive as #define lines; the defaults equal the "Default" values of scan.json,
// so the file also compiles alone. Problem variables (n, inclusive) are kernel arguments.

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef items_per_thread
#define items_per_thread 8
#endif
#ifndef block_scan
#define block_scan 2
#endif
#ifndef padding
#define padding 0
#endif
#ifndef inter_block
#define inter_block 0
#endif
#ifndef warp_transpose
#define warp_transpose 1
#endif
#ifndef CUTUNE_INT32
#define CUTUNE_INT32 0
#endif

#if (block_size_x & (block_size_x - 1)) != 0 || block_size_x < 32 || block_size_x > 1024
#error "block_size_x must be a power of two in [32, 1024]"
#endif
#if items_per_thread < 1 || items_per_thread > 32
#error "items_per_thread must be in [1, 32]"
#endif
#if block_scan < 0 || block_scan > 2
#error "block_scan must be 0, 1 or 2"
#endif
#if inter_block < 0 || inter_block > 1
#error "inter_block must be 0 or 1"
#endif
#if warp_transpose < 0 || warp_transpose > 1
#error "warp_transpose must be 0 or 1"
#endif

namespace cutune_scan {

#if CUTUNE_INT32
// int32 data; the adds wrap (two's complement), done in uint32 to avoid signed overflow.
typedef unsigned int value_t;
__device__ __forceinline__ unsigned int value_bits(value_t v) { return v; }
__device__ __forceinline__ value_t value_from_bits(unsigned int b) { return b; }
typedef uint4 vec4_t;
typedef uint2 vec2_t;
#else
typedef float value_t;
__device__ __forceinline__ unsigned int value_bits(value_t v) { return __float_as_uint(v); }
__device__ __forceinline__ value_t value_from_bits(unsigned int b) { return __uint_as_float(b); }
typedef float4 vec4_t;
typedef float2 vec2_t;
#endif

constexpr int kThreads = block_size_x;
constexpr int kItems = items_per_thread;
constexpr int kTile = kThreads * kItems;
constexpr int kWarps = kThreads / 32;
// warp_transpose 1: each warp's slice of shared memory, 32 * items plus one word per 32.
constexpr int kWarpSlice = 32 * kItems + kItems;
constexpr int kExchangeWords = warp_transpose ? kWarps * kWarpSlice : 1;

__device__ __forceinline__ int exchange_index(int i) { return i + (i >> 5); }

/// This block's elements [base, base + valid) of `in`, blocked: items[k] = in[base + tid *
/// kItems + k]; elements past `valid` read as 0 (the identity), never touching memory.
__device__ __forceinline__ void load_tile(value_t (&items)[kItems], const value_t* __restrict__ in,
                                          long long base, int valid, value_t* ex) {
  const int tid = threadIdx.x;
#if warp_transpose == 0
  const value_t* p = in + base + (long long)tid * kItems;
  if (valid == kTile) {
    if constexpr (kItems % 4 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 4) {
        const vec4_t v = __ldg(reinterpret_cast<const vec4_t*>(p + k));
        items[k] = v.x; items[k + 1] = v.y; items[k + 2] = v.z; items[k + 3] = v.w;
      }
    } else if constexpr (kItems % 2 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 2) {
        const vec2_t v = __ldg(reinterpret_cast<const vec2_t*>(p + k));
        items[k] = v.x; items[k + 1] = v.y;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) items[k] = __ldg(p + k);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      items[k] = (tid * kItems + k < valid) ? __ldg(p + k) : value_t(0);
  }
  (void)ex;
#else
  const int warp = tid >> 5, lane = tid & 31;
  const int first = warp * 32 * kItems;  // the warp's first element within the tile
  const value_t* p = in + base + first + lane;
  value_t* slice = ex + warp * kWarpSlice;
  value_t striped[kItems];
  if (valid == kTile) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) striped[k] = __ldg(p + 32 * k);
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      striped[k] = (first + lane + 32 * k < valid) ? __ldg(p + 32 * k) : value_t(0);
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) slice[exchange_index(lane + 32 * k)] = striped[k];
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kItems; ++k) items[k] = slice[exchange_index(lane * kItems + k)];
  __syncwarp();  // the slice is free again (store_tile reuses it)
#endif
}

/// Writes the blocked items back to out[base + ...], only the first `valid` of the tile.
__device__ __forceinline__ void store_tile(const value_t (&items)[kItems], value_t* __restrict__ out,
                                           long long base, int valid, value_t* ex) {
  const int tid = threadIdx.x;
#if warp_transpose == 0
  value_t* p = out + base + (long long)tid * kItems;
  if (valid == kTile) {
    if constexpr (kItems % 4 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 4) {
        vec4_t v;
        v.x = items[k]; v.y = items[k + 1]; v.z = items[k + 2]; v.w = items[k + 3];
        *reinterpret_cast<vec4_t*>(p + k) = v;
      }
    } else if constexpr (kItems % 2 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 2) {
        vec2_t v;
        v.x = items[k]; v.y = items[k + 1];
        *reinterpret_cast<vec2_t*>(p + k) = v;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) p[k] = items[k];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (tid * kItems + k < valid) p[k] = items[k];
  }
  (void)ex;
#else
  const int warp = tid >> 5, lane = tid & 31;
  const int first = warp * 32 * kItems;
  value_t* p = out + base + first + lane;
  value_t* slice = ex + warp * kWarpSlice;
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kItems; ++k) slice[exchange_index(lane * kItems + k)] = items[k];
  __syncwarp();
  if (valid == kTile) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) p[32 * k] = slice[exchange_index(lane + 32 * k)];
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (first + lane + 32 * k < valid) p[32 * k] = slice[exchange_index(lane + 32 * k)];
  }
  __syncwarp();
#endif
}

/// Shared memory of the block-wide scan.
struct BlockScanStorage {
#if block_scan == 0
  value_t buffer[2][kThreads];  // Hillis-Steele double buffer
#elif block_scan == 1
  value_t tree[padding ? kThreads + kThreads / 32 : kThreads];
  value_t total;
#else
  value_t warp_totals[kWarps];
  value_t total;
#endif
};

#if block_scan == 1
__device__ __forceinline__ int tree_index(int i) { return padding ? i + (i >> 5) : i; }
#endif

__device__ __forceinline__ value_t warp_inclusive_scan(value_t v, int lane) {
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const value_t up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

__device__ __forceinline__ value_t warp_sum(value_t v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Exclusive scan of one value per thread over the block: returns the sum of the values of
/// the threads before this one (0 for thread 0) and sets `total` to the block's sum (in
/// every thread). Its first and last accesses to `s` are not fenced by a barrier inside,
/// so consecutive calls must be separated by a __syncthreads() (scan_spine does).
__device__ __forceinline__ value_t block_exclusive_scan(BlockScanStorage& s, value_t value, value_t& total) {
  const int tid = threadIdx.x;
#if block_scan == 0
  // Hillis & Steele (1986): log2(block) rounds; round d adds the value 2^d places back,
  // reading one buffer and writing the other.
  s.buffer[0][tid] = value;
  __syncthreads();
  int in = 0;
#pragma unroll
  for (int offset = 1; offset < kThreads; offset <<= 1) {
    const value_t mine = s.buffer[in][tid];
    s.buffer[in ^ 1][tid] = tid >= offset ? mine + s.buffer[in][tid - offset] : mine;
    in ^= 1;
    __syncthreads();
  }
  total = s.buffer[in][kThreads - 1];
  return tid > 0 ? s.buffer[in][tid - 1] : value_t(0);
#elif block_scan == 1
  // Blelloch (1990): up-sweep builds partial sums in a balanced tree in place, the root is
  // replaced by the identity, the down-sweep pushes prefixes back to the leaves.
  s.tree[tree_index(tid)] = value;
  int offset = 1;
#pragma unroll
  for (int d = kThreads >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      const int ai = offset * (2 * tid + 1) - 1;
      const int bi = offset * (2 * tid + 2) - 1;
      s.tree[tree_index(bi)] += s.tree[tree_index(ai)];
    }
    offset <<= 1;
  }
  __syncthreads();
  if (tid == 0) {
    s.total = s.tree[tree_index(kThreads - 1)];
    s.tree[tree_index(kThreads - 1)] = value_t(0);
  }
#pragma unroll
  for (int d = 1; d < kThreads; d <<= 1) {
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      const int ai = offset * (2 * tid + 1) - 1;
      const int bi = offset * (2 * tid + 2) - 1;
      const value_t t = s.tree[tree_index(ai)];
      s.tree[tree_index(ai)] = s.tree[tree_index(bi)];
      s.tree[tree_index(bi)] += t;
    }
  }
  __syncthreads();
  total = s.total;
  return s.tree[tree_index(tid)];
#else
  const int warp = tid >> 5, lane = tid & 31;
  const value_t inclusive = warp_inclusive_scan(value, lane);
  value_t exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) exclusive = value_t(0);
  if constexpr (kWarps == 1) {
    total = __shfl_sync(0xffffffffu, inclusive, 31);
    return exclusive;
  } else {
    if (lane == 31) s.warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
      const value_t t = lane < kWarps ? s.warp_totals[lane] : value_t(0);
      const value_t t_inclusive = warp_inclusive_scan(t, lane);
      value_t t_exclusive = __shfl_up_sync(0xffffffffu, t_inclusive, 1);
      if (lane == 0) t_exclusive = value_t(0);
      __syncwarp();  // every lane has read its total before any is overwritten
      if (lane < kWarps) s.warp_totals[lane] = t_exclusive;
      if (lane == kWarps - 1) s.total = t_inclusive;
    }
    __syncthreads();
    total = s.total;
    return s.warp_totals[warp] + exclusive;
  }
#endif
}

/// Sum of one value per thread over the block, valid in every thread. `s` as above.
__device__ __forceinline__ value_t block_sum(value_t* warp_totals, value_t value) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  value = warp_sum(value);
  if constexpr (kWarps == 1) {
    return value;
  } else {
    if (lane == 0) warp_totals[warp] = value;
    __syncthreads();
    value_t t = lane < kWarps ? warp_totals[lane] : value_t(0);
    return warp_sum(t);
  }
}

// ---- decoupled look-back status words
constexpr unsigned int kFlagAggregate = 1u;
constexpr unsigned int kFlagPrefix = 2u;

__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long make_status(value_t v, unsigned int epoch, unsigned int flag) {
  return ((unsigned long long)value_bits(v) << 32) | ((epoch & 0x3fffffffu) << 2) | flag;
}

}  // namespace cutune_scan
using namespace cutune_scan;

// ---------------------------------------------------------------------------------------
// inter_block 0: one launch, decoupled look-back. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
     unsigned long long* __restrict__ counter, int n, int inclusive) {
  __shared__ value_t ex[kExchangeWords];
  __shared__ BlockScanStorage s;
  __shared__ unsigned int s_tile, s_epoch;
  __shared__ value_t s_offset;

  const int tid = threadIdx.x;
  if (tid == 0) {
    const unsigned long long ticket = atomicAdd(counter, 1ull);
    const unsigned int tile = (unsigned int)ticket;
    const unsigned int epoch = (unsigned int)(ticket >> 32);
    // The last ticket of the grid: every block has drawn its ticket, so the counter can be
    // made ready for the next launch right away.
    if (tile == gridDim.x - 1) atomicExch(counter, (unsigned long long)(epoch + 1u) << 32);
    s_tile = tile;
    s_epoch = epoch;
  }
  __syncthreads();
  const unsigned int tile = s_tile;
  const unsigned int epoch = s_epoch;
  const long long base = (long long)tile * kTile;
  const long long left = (long long)n - base;
  const int valid = left < kTile ? (int)left : kTile;

  value_t items[kItems];
  load_tile(items, in, base, valid, ex);
  // Thread-sequential inclusive scan of the items, then the block-wide exclusive scan of
  // the thread totals; thread_prefix (the sum of the earlier threads' items) is kept for
  // the exclusive result of item 0.
#pragma unroll
  for (int k = 1; k < kItems; ++k) items[k] += items[k - 1];
  value_t total;
  const value_t thread_prefix = block_exclusive_scan(s, items[kItems - 1], total);
#pragma unroll
  for (int k = 0; k < kItems; ++k) items[k] = thread_prefix + items[k];

  if (tid < 32) {
    const int lane = tid;
    value_t exclusive = value_t(0);
    if (tile == 0) {
      if (lane == 0) store_status(workspace, make_status(total, epoch, kFlagPrefix));
    } else {
      if (lane == 0) store_status(workspace + tile, make_status(total, epoch, kFlagAggregate));
      long long window = (long long)tile - 1;  // the predecessor lane 0 inspects
      const unsigned int tag = (epoch & 0x3fffffffu) << 2;
      while (true) {
        const long long idx = window - lane;
        unsigned long long word;
        unsigned int flag;
        int spins = 0;
        while (true) {
          if (idx >= 0) {
            word = load_status(workspace + idx);
            flag = ((unsigned int)word & ~3u) == tag ? ((unsigned int)word & 3u) : 0u;
          } else {
            word = 0ull;  // before tile 0: an inclusive prefix of 0
            flag = kFlagPrefix;
          }
          if (__all_sync(0xffffffffu, flag != 0u)) break;
          if (++spins > 4) __nanosleep(32);
        }
        const value_t v = value_from_bits((unsigned int)(word >> 32));
        const unsigned int prefixes = __ballot_sync(0xffffffffu, flag == kFlagPrefix);
        if (prefixes != 0u) {
          const int nearest = __ffs(prefixes) - 1;  // lowest lane = closest predecessor
          exclusive += warp_sum(lane <= nearest ? v : value_t(0));
          break;
        }
        exclusive += warp_sum(v);
        window -= 32;
      }
      if (lane == 0) store_status(workspace + tile, make_status(exclusive + total, epoch, kFlagPrefix));
    }
    if (lane == 0) s_offset = exclusive;
  }
  __syncthreads();
  const value_t offset = s_offset;

  // Exclusive results need the value one place back: the previous thread's last inclusive
  // item, i.e. this thread's prefix within the tile.
  if (inclusive) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = offset + items[k];
  } else {
#pragma unroll
    for (int k = kItems - 1; k > 0; --k) items[k] = offset + items[k - 1];
    items[0] = offset + thread_prefix;
  }
  store_tile(items, out, base, valid, ex);
}

// ---------------------------------------------------------------------------------------
// inter_block 1: reduce-then-scan. workspace holds the tile sums as value_t.

/// Tile sums: workspace[t] = sum of tile t. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_reduce(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
            unsigned long long* __restrict__ counter, int n, int inclusive) {
  __shared__ value_t ex[kExchangeWords];
  __shared__ value_t warp_totals[kWarps];
  (void)out; (void)counter; (void)inclusive;
  const long long base = (long long)blockIdx.x * kTile;
  const long long left = (long long)n - base;
  const int valid = left < kTile ? (int)left : kTile;
  value_t items[kItems];
  load_tile(items, in, base, valid, ex);
  value_t sum = items[0];
#pragma unroll
  for (int k = 1; k < kItems; ++k) sum += items[k];
  sum = block_sum(warp_totals, sum);
  if (threadIdx.x == 0) reinterpret_cast<value_t*>(workspace)[blockIdx.x] = sum;
}

/// Exclusive scan of the ceil(n / tile) tile sums in place, by ONE block, a tile's worth
/// at a time with a running carry. Grid: 1.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_spine(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
           unsigned long long* __restrict__ counter, int n, int inclusive) {
  __shared__ value_t ex[kExchangeWords];
  __shared__ BlockScanStorage s;
  (void)out; (void)in; (void)counter; (void)inclusive;
  value_t* sums = reinterpret_cast<value_t*>(workspace);
  const long long tiles = ((long long)n + kTile - 1) / kTile;
  value_t carry = value_t(0);
  for (long long base = 0; base < tiles; base += kTile) {
    const long long left = tiles - base;
    const int valid = left < kTile ? (int)left : kTile;
    value_t items[kItems];
    load_tile(items, sums, base, valid, ex);
#pragma unroll
    for (int k = 1; k < kItems; ++k) items[k] += items[k - 1];
    value_t total;
    const value_t thread_prefix = block_exclusive_scan(s, items[kItems - 1], total);
#pragma unroll
    for (int k = kItems - 1; k > 0; --k) items[k] = carry + (thread_prefix + items[k - 1]);
    items[0] = carry + thread_prefix;
    store_tile(items, sums, base, valid, ex);
    carry += total;
    __syncthreads();  // the block scan's shared memory is reused by the next chunk
  }
}

/// Each tile scanned again, offset by its exclusive tile prefix. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_downsweep(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
               unsigned long long* __restrict__ counter, int n, int inclusive) {
  __shared__ value_t ex[kExchangeWords];
  __shared__ BlockScanStorage s;
  (void)counter;
  const long long base = (long long)blockIdx.x * kTile;
  const long long left = (long long)n - base;
  const int valid = left < kTile ? (int)left : kTile;
  const value_t offset = reinterpret_cast<const value_t*>(workspace)[blockIdx.x];
  value_t items[kItems];
  load_tile(items, in, base, valid, ex);
#pragma unroll
  for (int k = 1; k < kItems; ++k) items[k] += items[k - 1];
  value_t total;
  const value_t thread_prefix = block_exclusive_scan(s, items[kItems - 1], total);
  (void)total;
  if (inclusive) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = offset + (thread_prefix + items[k]);
  } else {
#pragma unroll
    for (int k = kItems - 1; k > 0; --k) items[k] = offset + (thread_prefix + items[k - 1]);
    items[0] = offset + thread_prefix;
  }
  store_tile(items, out, base, valid, ex);
}
