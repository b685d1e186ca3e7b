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
//
// Single-pass tuning parameters (inter_block 0 only; 0 = the behaviour described above).
// They exist because the single-pass kernel is not bandwidth-bound but latency-bound: its
// time falls with the bytes each SM holds in flight (resident blocks x tile) and with the
// dead time of a block (ticket round trip, barriers before the aggregate is published,
// waiting for predecessors) during which that block issues no memory traffic.
//   lookback     0: as above: the block scan finishes (3 barriers) before warp 0 publishes
//                   the aggregate; warp 0 waits until ALL 32 inspected predecessors are
//                   published, __nanosleep(32) after 4 spins.
//                1: early publish: warp totals -> ONE barrier -> warp 0 sums them, publishes
//                   the aggregate at once and looks back, while the other warps finish the
//                   in-tile scan from the warp totals themselves (2 barriers in all, the
//                   look-back overlapped with the block's remaining work). Partial-window
//                   wait: warp 0 proceeds as soon as every predecessor up to the NEAREST
//                   inclusive prefix is published (a slow tile further back no longer
//                   stalls it). Same __nanosleep back-off as 0. Needs block_scan 2.
//                2: as 1, spinning without __nanosleep (status polls are L2 round trips
//                   of ~0.5 us anyway; sleeping only adds latency to the critical chain).
//   tile_order   0: tile index from the atomic ticket (no scheduling assumption).
//                1: tile index = blockIdx.x (what CUB does: relies on the hardware starting
//                   blocks in increasing index order, true for NVIDIA's block dispatcher),
//                   so the loads are issued at once; the ticket is still drawn (for the
//                   epoch and the counter reset) but its round trip overlaps the loads.
//                   Needs lookback >= 1.
//   cache_hints  0: plain loads (__ldg) and stores.
//                1: streaming: loads ld.global.cs (__ldcs; cp.async/TMA with an L2
//                   evict_first policy), stores st.global.cs (__stcs), so the 2n streaming
//                   bytes do not push the status words out of L2. Needs lookback >= 1.
//   stage        0: the tile travels through registers (items_per_thread registers per
//                   thread for the block's whole life: resident data per SM is bounded by
//                   the register file, ~24K elements at 512 x 16 with 40 registers).
//                1: the tile is copied global -> shared memory with cp.async (LDGSTS, 16 B
//                   per thread per copy, warp-striped and coalesced), bypassing registers;
//                   the scan runs out of shared memory (each thread walks its own run of
//                   items_per_thread words, rotated by lane * gcd(items, 32) / 32 so that the
//                   32 lanes always hit 32 distinct banks), the in-tile result is written
//                   back in place, and after the look-back all threads stream it out as
//                   16-byte vector stores plus the tile offset. ~30 registers whatever the
//                   tile, so residency is bounded by shared memory instead (228 KB per SM:
//                   e.g. 6 blocks of 256 x 32 = 48K elements in flight, twice stage 0).
//                2: as 1, but the whole tile is ONE bulk copy (cp.async.bulk, the TMA unit
//                   of sm_90) issued by thread 0 and completed on an mbarrier: no load
//                   instructions at all in the other threads.
//                   The tile buffer is DYNAMIC shared memory (cutune.Launches SharedMemory =
//                   4 * tile bytes), so tiles of up to 16384 elements (64 KB) are allowed.
//                   Stages 1 and 2 need lookback >= 1; tail tiles are loaded by plain loads.
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
#ifndef lookback
#define lookback 0
#endif
#ifndef tile_order
#define tile_order 0
#endif
#ifndef cache_hints
#define cache_hints 0
#endif
#ifndef stage
#define stage 0
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
#if lookback < 0 || lookback > 2
#error "lookback must be 0, 1 or 2"
#endif
#if lookback != 0 && block_scan != 2
#error "lookback 1 and 2 need block_scan 2"
#endif
#if tile_order < 0 || tile_order > 1 || cache_hints < 0 || cache_hints > 1
#error "tile_order and cache_hints must be 0 or 1"
#endif
#if (tile_order != 0 || cache_hints != 0) && lookback == 0
#error "tile_order 1 and cache_hints 1 need lookback >= 1"
#endif
#if stage < 0 || stage > 2
#error "stage must be 0, 1 or 2"
#endif
#if stage != 0 && lookback == 0
#error "stage 1 and 2 need lookback >= 1"
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
// (stage 1/2 use no exchange buffer: their tile, up to 64 KB, lives in dynamic shared memory.)
[[maybe_unused]] constexpr int kExchangeWords = (warp_transpose && stage == 0) ? kWarps * kWarpSlice : 1;

__device__ __forceinline__ int exchange_index(int i) { return i + (i >> 5); }

/// Global loads / stores of the streaming data (cache_hints: .cs = evict-first).
template <class T>
__device__ __forceinline__ T ld_stream(const T* p) {
#if cache_hints
  return __ldcs(p);
#else
  return __ldg(p);
#endif
}
template <class T>
__device__ __forceinline__ void st_stream(T* p, const T& v) {
#if cache_hints
  __stcs(p, v);
#else
  *p = v;
#endif
}

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
        const vec4_t v = ld_stream(reinterpret_cast<const vec4_t*>(p + k));
        items[k] = v.x; items[k + 1] = v.y; items[k + 2] = v.z; items[k + 3] = v.w;
      }
    } else if constexpr (kItems % 2 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 2) {
        const vec2_t v = ld_stream(reinterpret_cast<const vec2_t*>(p + k));
        items[k] = v.x; items[k + 1] = v.y;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) items[k] = ld_stream(p + k);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      items[k] = (tid * kItems + k < valid) ? ld_stream(p + k) : value_t(0);
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
    for (int k = 0; k < kItems; ++k) striped[k] = ld_stream(p + 32 * k);
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      striped[k] = (first + lane + 32 * k < valid) ? ld_stream(p + 32 * k) : value_t(0);
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
        st_stream(reinterpret_cast<vec4_t*>(p + k), v);
      }
    } else if constexpr (kItems % 2 == 0) {
#pragma unroll
      for (int k = 0; k < kItems; k += 2) {
        vec2_t v;
        v.x = items[k]; v.y = items[k + 1];
        st_stream(reinterpret_cast<vec2_t*>(p + k), v);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) st_stream(p + k, items[k]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (tid * kItems + k < valid) st_stream(p + k, items[k]);
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
    for (int k = 0; k < kItems; ++k) st_stream(p + 32 * k, slice[exchange_index(lane + 32 * k)]);
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (first + lane + 32 * k < valid) st_stream(p + 32 * k, slice[exchange_index(lane + 32 * k)]);
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


/// Warp 0's part of the decoupled look-back for tile `tile` (> 0 or 0) whose aggregate is
/// `total`: publishes the aggregate, walks back over the predecessors 32 at a time and
/// publishes the inclusive prefix; returns the exclusive prefix (sum of all earlier tiles)
/// in every lane. Called by all 32 lanes of warp 0 with the same arguments.
__device__ __forceinline__ value_t decoupled_lookback(unsigned long long* workspace, unsigned int tile,
                                                      unsigned int epoch, value_t total, int lane) {
  value_t exclusive = value_t(0);
  if (tile == 0) {
    if (lane == 0) store_status(workspace, make_status(total, epoch, kFlagPrefix));
    return exclusive;
  }
  if (lane == 0) store_status(workspace + tile, make_status(total, epoch, kFlagAggregate));
  long long window = (long long)tile - 1;  // the predecessor lane 0 inspects
  const unsigned int tag = (epoch & 0x3fffffffu) << 2;
  while (true) {
    const long long idx = window - lane;
    unsigned long long word;
    unsigned int flag;
    unsigned int prefixes;
#if lookback <= 1
    int spins = 0;
#endif
    while (true) {
      if (idx >= 0) {
        word = load_status(workspace + idx);
        flag = ((unsigned int)word & ~3u) == tag ? ((unsigned int)word & 3u) : 0u;
      } else {
        word = 0ull;  // before tile 0: an inclusive prefix of 0
        flag = kFlagPrefix;
      }
#if lookback == 0
      if (__all_sync(0xffffffffu, flag != 0u)) break;
#else
      // Only the lanes up to the nearest inclusive prefix (all 32 when there is none) are
      // needed: every one of them must have published something.
      const unsigned int missing = __ballot_sync(0xffffffffu, flag == 0u);
      const unsigned int pre = __ballot_sync(0xffffffffu, flag == kFlagPrefix);
      const unsigned int needed = pre != 0u ? (pre ^ (pre - 1u)) : 0xffffffffu;
      if ((missing & needed) == 0u) break;
#endif
#if lookback <= 1
      if (++spins > 4) __nanosleep(32);
#endif
    }
    const value_t v = value_from_bits((unsigned int)(word >> 32));
    prefixes = __ballot_sync(0xffffffffu, flag == kFlagPrefix);
    if (prefixes != 0u) {
      const int nearest = __ffs(prefixes) - 1;  // lowest lane = closest predecessor
      exclusive += warp_sum(lane <= nearest ? v : value_t(0));
      break;
    }
    exclusive += warp_sum(v);
    window -= 32;
  }
  if (lane == 0) store_status(workspace + tile, make_status(exclusive + total, epoch, kFlagPrefix));
  return exclusive;
}

#if lookback != 0
/// Block-level scan with early publication (lookback >= 1, block_scan 2). thread_total is
/// the sum of this thread's items; returns the sum of the items of the earlier threads of
/// the tile. Warp 0 publishes the tile aggregate right after the first (and only) barrier
/// inside, looks back and leaves the tile's exclusive prefix in *s_offset, which the
/// caller reads after its own __syncthreads() (work placed in between overlaps the
/// look-back). `epoch` need only be valid in thread 0.
__device__ __forceinline__ value_t early_block_scan(value_t* warp_totals, value_t* s_offset, value_t thread_total,
                                                    unsigned long long* workspace, unsigned int tile,
                                                    unsigned int epoch) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const value_t inclusive = warp_inclusive_scan(thread_total, lane);
  value_t exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) exclusive = value_t(0);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const value_t total = warp_sum(lane < kWarps ? warp_totals[lane] : value_t(0));
    const unsigned int ep = __shfl_sync(0xffffffffu, epoch, 0);
    const value_t offset = decoupled_lookback(workspace, tile, ep, total, lane);
    if (lane == 0) *s_offset = offset;
  }
  // Each warp sums the totals of the warps before it itself (no second barrier needed).
  return warp_sum(lane < warp ? warp_totals[lane] : value_t(0)) + exclusive;
}
#endif

#if stage != 0
__device__ __forceinline__ unsigned int smem_u32(const void* p) {
  return (unsigned int)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long policy = 0ull;
#if cache_hints
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}
#if stage == 1
/// 16 bytes global -> shared, asynchronous (LDGSTS, not through L1 or registers).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, unsigned long long policy) {
#if cache_hints
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src),
               "l"(policy) : "memory");
#else
  (void)policy;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
__device__ __forceinline__ void mbar_init(unsigned int bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/// One bulk copy (TMA) of `bytes` (a multiple of 16, both addresses 16-byte aligned)
/// global -> shared; the mbarrier's phase 0 completes when all bytes have landed.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned int bytes, unsigned int bar,
                                          unsigned long long policy) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#if cache_hints
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::
          "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(bar), "l"(policy) : "memory");
#else
  (void)policy;
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
                   "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(bar) : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait_phase0(unsigned int bar) {
  unsigned int done;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done) : "r"(bar) : "memory");
  } while (!done);
}
#endif
// Staged scan: each thread walks its own run of kItems words of the shared tile, starting
// at a lane-dependent rotation so that the 32 lanes of a warp hit 32 distinct banks at
// every step: the run of lane l starts at bank l * kItems mod 32 (a multiple of g =
// gcd(kItems, 32), 32/g distinct starts), and the g lanes sharing a start get the
// rotations 0..g-1, i.e. distinct offsets mod g.
constexpr int kRotGcd = (kItems & -kItems) < 32 ? (kItems & -kItems) : 32;
__device__ __forceinline__ int stage_rotation(int lane) { return (lane * kRotGcd) >> 5; }
#endif

}  // namespace cutune_scan
using namespace cutune_scan;

// ---------------------------------------------------------------------------------------
// inter_block 0: one launch, decoupled look-back. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
     unsigned long long* __restrict__ counter, int n, int inclusive) {
#if lookback == 0
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
    const value_t exclusive = decoupled_lookback(workspace, tile, epoch, total, tid);
    if (tid == 0) s_offset = exclusive;
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

#elif stage == 0
  // ---- lookback >= 1, tile in registers
  __shared__ value_t ex[kExchangeWords];
  __shared__ value_t s_warp_totals[kWarps];
  __shared__ value_t s_offset;
  const int tid = threadIdx.x;
  unsigned long long ticket = 0ull;  // valid in thread 0: epoch << 32 | ticket
#if tile_order == 0
  __shared__ unsigned int s_tile;
  if (tid == 0) {
    ticket = atomicAdd(counter, 1ull);
    s_tile = (unsigned int)ticket;
  }
  __syncthreads();
  const unsigned int tile = s_tile;
#else
  const unsigned int tile = blockIdx.x;
  if (tid == 0) ticket = atomicAdd(counter, 1ull);  // its round trip overlaps the loads
#endif
  const long long base = (long long)tile * kTile;
  const long long left = (long long)n - base;
  const int valid = left < kTile ? (int)left : kTile;

  value_t items[kItems];
  load_tile(items, in, base, valid, ex);
  const unsigned int epoch = (unsigned int)(ticket >> 32);
  // The last ticket of the grid resets the counter for the next launch (see above).
  if (tid == 0 && (unsigned int)ticket == gridDim.x - 1)
    atomicExch(counter, (unsigned long long)(epoch + 1u) << 32);
#pragma unroll
  for (int k = 1; k < kItems; ++k) items[k] += items[k - 1];
  const value_t thread_prefix = early_block_scan(s_warp_totals, &s_offset, items[kItems - 1], workspace, tile, epoch);
  // In-tile results while warp 0 looks back (exclusive: shifted by one place).
  if (inclusive) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = thread_prefix + items[k];
  } else {
#pragma unroll
    for (int k = kItems - 1; k > 0; --k) items[k] = thread_prefix + items[k - 1];
    items[0] = thread_prefix;
  }
  __syncthreads();
  const value_t offset = s_offset;
#pragma unroll
  for (int k = 0; k < kItems; ++k) items[k] = offset + items[k];
  store_tile(items, out, base, valid, ex);

#else
  // ---- lookback >= 1, tile staged in (dynamic) shared memory by cp.async (1) or TMA (2)
  extern __shared__ __align__(128) unsigned char cutune_stage_smem[];
  value_t* buf = reinterpret_cast<value_t*>(cutune_stage_smem);  // kTile values
  __shared__ value_t s_warp_totals[kWarps];
  __shared__ value_t s_offset;
  const int tid = threadIdx.x, lane = tid & 31;
  const unsigned long long policy = evict_first_policy();
#if stage == 2
  __shared__ __align__(8) unsigned long long s_bar;
  const unsigned int bar = smem_u32(&s_bar);
#endif
  unsigned long long ticket = 0ull;  // valid in thread 0: epoch << 32 | ticket
#if tile_order == 0
  __shared__ unsigned int s_tile;
  if (tid == 0) {
    ticket = atomicAdd(counter, 1ull);
    const unsigned int t = (unsigned int)ticket;
#if stage == 2
    mbar_init(bar);
    if ((long long)n - (long long)t * kTile >= kTile)
      bulk_load(buf, in + (long long)t * kTile, kTile * (unsigned int)sizeof(value_t), bar, policy);
#endif
    s_tile = t;
  }
  __syncthreads();
  const unsigned int tile = s_tile;
#else
  const unsigned int tile = blockIdx.x;
#if stage == 2
  if (tid == 0) {
    mbar_init(bar);
    if ((long long)n - (long long)tile * kTile >= kTile)
      bulk_load(buf, in + (long long)tile * kTile, kTile * (unsigned int)sizeof(value_t), bar, policy);
    ticket = atomicAdd(counter, 1ull);
  }
  __syncthreads();  // the mbarrier is initialised before anyone waits on it
#endif
#endif
  const long long base = (long long)tile * kTile;
  const long long left = (long long)n - base;
  const int valid = left < kTile ? (int)left : kTile;

  if (valid == kTile) {
#if stage == 1
    constexpr int kVecs = kTile * (int)sizeof(value_t) / 16;
#pragma unroll 4
    for (int i = tid; i < kVecs; i += kThreads) cp_async16(buf + 4 * i, in + base + 4 * i, policy);
#if tile_order == 1
    if (tid == 0) ticket = atomicAdd(counter, 1ull);  // its round trip overlaps the copies
#endif
    cp_async_wait_all();
    __syncthreads();  // every thread's copies have landed
#else
    mbar_wait_phase0(bar);  // completes with the bulk copy's bytes visible
#endif
  } else {
#if stage == 1 && tile_order == 1
    if (tid == 0) ticket = atomicAdd(counter, 1ull);
#endif
    for (int i = tid; i < kTile; i += kThreads) buf[i] = i < valid ? ld_stream(in + base + i) : value_t(0);
    __syncthreads();
  }
  const unsigned int epoch = (unsigned int)(ticket >> 32);
  if (tid == 0 && (unsigned int)ticket == gridDim.x - 1)
    atomicExch(counter, (unsigned long long)(epoch + 1u) << 32);

  // Pass 1: the thread's total, split into its items [rot, kItems) (visited first) and
  // [0, rot) (visited after the wrap).
  value_t* run = buf + tid * kItems;
  const int rot = stage_rotation(lane);
  value_t sum_hi = value_t(0), sum_lo = value_t(0);
#pragma unroll 4
  for (int k = 0; k < kItems; ++k) {
    int j = k + rot;
    if (j >= kItems) j -= kItems;
    const value_t v = run[j];
    if (j >= rot) sum_hi += v; else sum_lo += v;
  }
  const value_t thread_prefix = early_block_scan(s_warp_totals, &s_offset, sum_lo + sum_hi, workspace, tile, epoch);
  // Pass 2 (overlapping warp 0's look-back): in-tile results written back in place, in
  // the same rotated order; the running value restarts at thread_prefix at the wrap.
  value_t running = thread_prefix + sum_lo;
#pragma unroll 4
  for (int k = 0; k < kItems; ++k) {
    int j = k + rot;
    if (j >= kItems) j -= kItems;
    if (j == 0) running = thread_prefix;
    const value_t v = run[j];
    const value_t next = running + v;
    run[j] = inclusive ? next : running;
    running = next;
  }
  __syncthreads();
  const value_t offset = s_offset;
  if (valid == kTile) {
    constexpr int kVecs = kTile * (int)sizeof(value_t) / 16;
    const vec4_t* b4 = reinterpret_cast<const vec4_t*>(buf);
    vec4_t* o4 = reinterpret_cast<vec4_t*>(out + base);
#pragma unroll 4
    for (int i = tid; i < kVecs; i += kThreads) {
      vec4_t v = b4[i];
      v.x = offset + v.x; v.y = offset + v.y; v.z = offset + v.z; v.w = offset + v.w;
      st_stream(o4 + i, v);
    }
  } else {
    for (int i = tid; i < valid; i += kThreads) st_stream(out + base + i, offset + buf[i]);
  }
#endif
}

// ---------------------------------------------------------------------------------------
// inter_block 1: reduce-then-scan. workspace holds the tile sums as value_t.

/// Tile sums: workspace[t] = sum of tile t. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_reduce(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
            unsigned long long* __restrict__ counter, int n, int inclusive) {
#if stage == 0  // (inter_block 1 only: never launched with stage 1/2)
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
#else
  (void)out; (void)in; (void)workspace; (void)counter; (void)n; (void)inclusive;
#endif
}

/// Exclusive scan of the ceil(n / tile) tile sums in place, by ONE block, a tile's worth
/// at a time with a running carry. Grid: 1.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_spine(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
           unsigned long long* __restrict__ counter, int n, int inclusive) {
#if stage == 0  // (inter_block 1 only: never launched with stage 1/2)
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
#else
  (void)out; (void)in; (void)workspace; (void)counter; (void)n; (void)inclusive;
#endif
}

/// Each tile scanned again, offset by its exclusive tile prefix. Grid: one block per tile.
extern "C" __global__ void __launch_bounds__(block_size_x)
scan_downsweep(value_t* __restrict__ out, const value_t* __restrict__ in, unsigned long long* __restrict__ workspace,
               unsigned long long* __restrict__ counter, int n, int inclusive) {
#if stage == 0  // (inter_block 1 only: never launched with stage 1/2)
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
#else
  (void)out; (void)in; (void)workspace; (void)counter; (void)n; (void)inclusive;
#endif
}
