// SGEMM C = A * B in plain float32 (FFMA only: no TF32, no tensor cores), all row-major:
// A is m x k, B is k x n, C is m x n; m, n, k are run-time values of any size >= 1.
//
// One block computes a BM x BN tile of C (BM = block_size_y * work_per_thread_y,
// BN = block_size_x * work_per_thread_x) by sweeping K in slices of tile_k:
//   - shared-memory tiling: the A slice (BM x tile_k) and the B slice (tile_k x BN) are
//     staged in shared memory, A stored transposed (As[kk][row]) so that both operands of
//     the inner product are read as float4 rows;
//   - register blocking: each thread accumulates a work_per_thread_y x work_per_thread_x
//     tile of C in registers; per kk it reads one column of A and one row of B from shared
//     memory (float4 reads) and does WY*WX FFMAs. Its rows and columns are strided in
//     groups of four (column j of thread tx is (j/4)*(4*block_size_x) + 4*tx + j%4), so
//     that consecutive threads read consecutive float4s: no bank conflicts;
//   - padding 1: the transposed A tile gets 4 floats per row more (row stride BM + 4, which
//     keeps float4 alignment), so that the transposing scalar stores of one warp, which
//     write up to tile_k/4 different kk rows, fall in different banks;
//   - vector_loads 1: float4 global loads of A (when k % 4 == 0) and of B and float4 stores
//     of C (when n % 4 == 0), decided at run time; scalar loads otherwise;
//   - double_buffer 1: two shared buffers; the next slice is fetched from global memory
//     into registers before the current one is multiplied, and stored into the other
//     buffer afterwards (one __syncthreads per slice instead of two, global latency hidden
//     behind the FFMAs);
//   - unroll 1: the kk loop over a slice is fully unrolled (the compiler can then hoist
//     the shared reads of kk+1 above the FFMAs of kk), versus `#pragma unroll 1`;
//   - warp_tile 1: the 32 threads of a warp are laid out as an 8 x 4 patch of the thread
//     grid instead of row-major threadIdx order (two rows of 16 or one of 32): a warp then
//     reads 8 float4s of B and 4 of A per read instead of 16 or 32 of B, halving or
//     quartering the shared-memory wavefronts per FFMA (with block_size_x 8 the row-major
//     order already is that patch);
//   - blocks_per_sm 2: __launch_bounds__ minimum of 2 resident blocks, which caps 256-thread
//     blocks at 128 registers (the 128x128 8x8 tile otherwise takes ~160, one block per SM):
//     a second block overlaps the first one's barriers. Offered only where ptxas does not
//     spill (matmul.json).
//
// async_stages S > 0 (2, 3 or 4) replaces the register staging above by an S-stage
// cp.async (LDGSTS) pipeline in dynamic shared memory (its size: cutune.Launches
// SharedMemory in matmul.json; above 48 KB the runner raises the kernel's limit). Why: the
// register-staged path holds A_PER_THREAD + B_PER_THREAD staging registers next to the
// accumulators (the 128x128 tile then takes ~168 registers, one 256-thread block per SM,
// whose barriers stall the whole SM) and has only one slice in flight; cp.async copies
// global -> shared without registers and keeps S-1 slices in flight. Per slice t: wait
// until slice t has landed (cp.async.wait_group S-2), one __syncthreads (which also proves
// that every thread has finished slice t-1), issue the copies of slice t+S-1 into the
// stage of slice t-1, multiply slice t. Tails use the zero-fill form (src-size 0: nothing
// is read, zeros are written; the source address is then A or B itself, never an
// out-of-range one). Float4 copies (16 bytes, .cg: L2 only) when k % 4 == 0 and n % 4 == 0
// and A and B are 16-byte aligned, 4-byte copies (.ca) of both operands otherwise: two
// instances of the K loop, so that neither pays for the other's registers. The copy
// addresses are recomputed per slice from an opaque copy of threadIdx (a few integer ops
// per copy, against >= 512 FFMAs per thread per slice) rather than hoisted out of the K
// loop: hoisted, they pin ~40 registers and the 8x8 tile no longer fits in 128.
// cp.async cannot transpose, so in this path A stays row-major in shared memory,
// As[row][kk] with row stride tile_k + 4 * padding, and is read as float4s along k: one
// LDS.128 gives a row's values for 4 consecutive kk, so per 4 kk a thread does WY reads of
// A, as many as the transposed layout needs, but holds WY x 4 A values. Thread ty owns rows
// i * block_size_y + ty (i < WY), so with warp_tile the 4 rows a warp reads at once are
// consecutive, and with padding 1 the row strides 12, 20, 36 (tile_k 8, 16, 32) put those
// 4 float4s in distinct banks (one wavefront; padding 0 would conflict 2-/4-way at tile_k
// 16/32), while the float4 copies of a warp (8 rows of 4 float4s at tile_k 16) spread
// evenly over the banks. B is stored as is (Bs[kk][col]) and read as in the register path.
// matmul.json offers this path with vector_loads 1, padding 1, warp_tile 1 (or
// block_size_x 8, where row-major order is the 8 x 4 patch), unroll 1, double_buffer 1
// (meaningless here) and blocks_per_sm 1 only, 128 or 256 threads and 8 <= WX, WY with
// WX * WY <= 128: with 256 threads and 8x8 per thread ptxas (CUDA 13.0) uses <= 128
// registers without a launch bound, so two blocks (16 warps) share an SM where shared
// memory allows (S * (BM * (tile_k + 4) + tile_k * BN) * 4 bytes each, <= ~113 KB), and a
// bound of 2 would only duplicate configurations.
//   - work_per_thread 16 (async path only): per-thread tiles of 8x16 or 16x8 (128
//     accumulators, 255 registers, no spills): 128x128 tiles with 128 threads (two blocks
//     per SM) or 128x256 / 256x128 with 256 threads (one). Per 4 kk a thread issues
//     WY + WX LDS.128 for 4*WX*WY FFMAs (24 per 512 instead of 16 per 256): fewer shared
//     wavefronts and fewer non-FFMA issue slots per FFMA, more reuse per register. The
//     register path would spill them (its staging registers come on top).
//   - swizzle G > 0 (async path only): the launch grid is remapped so that consecutive
//     block ids walk a group of G tile rows column by column (the last group may be
//     shorter). The R blocks resident at one time then read G row panels of A and ~R/G
//     column panels of B (at 4096^3, 128x128 tiles, R = 132: 8 + 17 instead of 4 + 32),
//     for more L2 reuse when a wave of blocks is narrower than the grid.
//
// Tails: every global load is predicated (rows >= m, columns >= n, and k positions >= k
// read as 0, which adds exact zeros), every store is guarded. Whatever the configuration,
// every C element is one FFMA chain over k = 0, 1, ..., k-1 in order, so all
// configurations give the same bits. C is written, never accumulated into: launching
// again gives the same result. Index products are 64-bit (m * k can exceed 2^31).
//
// Parameters arrive as -D defines; the defaults equal the "Default" values of matmul.json,
// so the file also compiles alone.

#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 16
#endif
#ifndef work_per_thread_x
#define work_per_thread_x 8
#endif
#ifndef work_per_thread_y
#define work_per_thread_y 8
#endif
#ifndef tile_k
#define tile_k 8
#endif
#ifndef padding
#define padding 1
#endif
#ifndef vector_loads
#define vector_loads 1
#endif
#ifndef double_buffer
#define double_buffer 1
#endif
#ifndef unroll
#define unroll 1
#endif
#ifndef warp_tile
#define warp_tile 1
#endif
#ifndef blocks_per_sm
#define blocks_per_sm 2
#endif
#ifndef async_stages
#define async_stages 0
#endif
#ifndef swizzle
#define swizzle 0
#endif

namespace cutune_matmul {

constexpr int BX = block_size_x;
constexpr int BY = block_size_y;
constexpr int WX = work_per_thread_x;
constexpr int WY = work_per_thread_y;
constexpr int BK = tile_k;
constexpr int THREADS = BX * BY;
constexpr int BM = BY * WY;                 // rows of C per block
constexpr int BN = BX * WX;                 // columns of C per block
// Shared-memory reads of the register fragments: float4 when the per-thread tile allows.
constexpr int SVX = WX % 4 == 0 ? 4 : (WX % 2 == 0 ? 2 : 1);
constexpr int SVY = WY % 4 == 0 ? 4 : (WY % 2 == 0 ? 2 : 1);
// Floats of each tile every thread loads (the same count for scalar and float4 loads).
constexpr int A_PER_THREAD = BM * BK / THREADS;
constexpr int B_PER_THREAD = BK * BN / THREADS;

static_assert(THREADS <= 1024, "at most 1024 threads per block");
static_assert(BM * BK % THREADS == 0 && BK * BN % THREADS == 0,
              "the A and B tiles must divide evenly among the threads");
static_assert(!vector_loads || (BM * BK % (4 * THREADS) == 0 && BK * BN % (4 * THREADS) == 0),
              "float4 loads: the tiles must divide into float4s evenly among the threads");
static_assert(!warp_tile || (BX % 8 == 0 && BY % 4 == 0), "warp_tile needs 8 | block_size_x, 4 | block_size_y");
static_assert(swizzle >= 0, "swizzle is a group height in tiles (0: off)");

template <int V> struct VecOf;
template <> struct VecOf<1> { using type = float; };
template <> struct VecOf<2> { using type = float2; };
template <> struct VecOf<4> { using type = float4; };

template <int V>
__device__ __forceinline__ void load_vec(float* dst, const float* src) {
  const typename VecOf<V>::type v = *reinterpret_cast<const typename VecOf<V>::type*>(src);
  if constexpr (V == 1) {
    dst[0] = v;
  } else if constexpr (V == 2) {
    dst[0] = v.x; dst[1] = v.y;
  } else {
    dst[0] = v.x; dst[1] = v.y; dst[2] = v.z; dst[3] = v.w;
  }
}

#if !async_stages
// ------------------------------------------------------------------ register-staged path

constexpr int AS_STRIDE = BM + 4 * padding;  // floats per kk row of the transposed A tile
constexpr int BS_STRIDE = BN;
constexpr int STAGES = double_buffer ? 2 : 1;

static_assert(BK % 4 == 0 && BN % 4 == 0 && AS_STRIDE % 4 == 0, "float4 alignment in shared memory");
static_assert(STAGES * BK * (AS_STRIDE + BS_STRIDE) * 4 <= 48 * 1024, "static shared memory <= 48 KB");

// Row of C (within the tile) of accumulator row i of thread ty.
__device__ __forceinline__ int tile_row(int i, int ty) { return (i / SVY) * BY * SVY + ty * SVY + i % SVY; }

struct Shared {
  float a[STAGES][BK][AS_STRIDE];  // A tile transposed: a[s][kk][row]
  float b[STAGES][BK][BS_STRIDE];  // B tile as is:      b[s][kk][col]
};

/// Global -> registers staging of one K slice, and registers -> shared.
struct Loader {
  // Row-major (within the tile) positions of this thread's loads; `vec` selects the
  // float4 layout (element e of slot s at float4 index s * THREADS + tid) or the scalar
  // layout (float index e * THREADS + tid).
  float a_reg[A_PER_THREAD];
  float b_reg[B_PER_THREAD];

  __device__ __forceinline__ void load(const float* __restrict__ A, const float* __restrict__ B,
                                       int m, int n, int k, int row0, int col0, int k0,
                                       bool vec_a, bool vec_b, int tid) {
    if (vector_loads && vec_a) {
#pragma unroll
      for (int s = 0; s < A_PER_THREAD / 4; ++s) {
        const int l = s * THREADS + tid;
        const int r = l / (BK / 4);
        const int c = (l % (BK / 4)) * 4;
        const int grow = row0 + r, gcol = k0 + c;  // k % 4 == 0: gcol < k => gcol + 3 < k
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (grow < m && gcol < k)
          v = __ldg(reinterpret_cast<const float4*>(A + (long long)grow * k + gcol));
        a_reg[4 * s + 0] = v.x; a_reg[4 * s + 1] = v.y;
        a_reg[4 * s + 2] = v.z; a_reg[4 * s + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int e = 0; e < A_PER_THREAD; ++e) {
        const int l = e * THREADS + tid;
        const int r = l / BK, c = l % BK;
        const int grow = row0 + r, gcol = k0 + c;
        a_reg[e] = (grow < m && gcol < k) ? __ldg(A + (long long)grow * k + gcol) : 0.f;
      }
    }
    if (vector_loads && vec_b) {
#pragma unroll
      for (int s = 0; s < B_PER_THREAD / 4; ++s) {
        const int l = s * THREADS + tid;
        const int r = l / (BN / 4);
        const int c = (l % (BN / 4)) * 4;
        const int grow = k0 + r, gcol = col0 + c;  // n % 4 == 0: gcol < n => gcol + 3 < n
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (grow < k && gcol < n)
          v = __ldg(reinterpret_cast<const float4*>(B + (long long)grow * n + gcol));
        b_reg[4 * s + 0] = v.x; b_reg[4 * s + 1] = v.y;
        b_reg[4 * s + 2] = v.z; b_reg[4 * s + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int e = 0; e < B_PER_THREAD; ++e) {
        const int l = e * THREADS + tid;
        const int r = l / BN, c = l % BN;
        const int grow = k0 + r, gcol = col0 + c;
        b_reg[e] = (grow < k && gcol < n) ? __ldg(B + (long long)grow * n + gcol) : 0.f;
      }
    }
  }

  __device__ __forceinline__ void store(Shared& sh, int stage, bool vec_a, bool vec_b, int tid) {
    if (vector_loads && vec_a) {
#pragma unroll
      for (int s = 0; s < A_PER_THREAD / 4; ++s) {
        const int l = s * THREADS + tid;
        const int r = l / (BK / 4);
        const int c = (l % (BK / 4)) * 4;
#pragma unroll
        for (int j = 0; j < 4; ++j) sh.a[stage][c + j][r] = a_reg[4 * s + j];
      }
    } else {
#pragma unroll
      for (int e = 0; e < A_PER_THREAD; ++e) {
        const int l = e * THREADS + tid;
        sh.a[stage][l % BK][l / BK] = a_reg[e];
      }
    }
    if (vector_loads && vec_b) {
#pragma unroll
      for (int s = 0; s < B_PER_THREAD / 4; ++s) {
        const int l = s * THREADS + tid;
        const int r = l / (BN / 4);
        const int c = (l % (BN / 4)) * 4;
        *reinterpret_cast<float4*>(&sh.b[stage][r][c]) =
            make_float4(b_reg[4 * s], b_reg[4 * s + 1], b_reg[4 * s + 2], b_reg[4 * s + 3]);
      }
    } else {
#pragma unroll
      for (int e = 0; e < B_PER_THREAD; ++e) {
        const int l = e * THREADS + tid;
        sh.b[stage][l / BN][l % BN] = b_reg[e];
      }
    }
  }
};

/// acc += A_tile * B_tile over one K slice held in shared stage `stage`.
__device__ __forceinline__ void multiply_slice(const Shared& sh, int stage, int tx, int ty,
                                               float (&acc)[WY][WX]) {
#if unroll
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int kk = 0; kk < BK; ++kk) {
    float a_frag[WY];
    float b_frag[WX];
#pragma unroll
    for (int g = 0; g < WY / SVY; ++g)
      load_vec<SVY>(&a_frag[g * SVY], &sh.a[stage][kk][g * BY * SVY + ty * SVY]);
#pragma unroll
    for (int g = 0; g < WX / SVX; ++g)
      load_vec<SVX>(&b_frag[g * SVX], &sh.b[stage][kk][g * BX * SVX + tx * SVX]);
#pragma unroll
    for (int i = 0; i < WY; ++i)
#pragma unroll
      for (int j = 0; j < WX; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
  }
}

#else
// ------------------------------------------------------------------ cp.async path

constexpr int STAGES = async_stages;
constexpr int AK = BK + 4 * padding;         // floats per row of the row-major A tile
constexpr int A_STAGE = BM * AK;             // floats of one stage's A tile
constexpr int STAGE_FLOATS = A_STAGE + BK * BN;
static_assert(THREADS % (BK / 4) == 0 && THREADS % (BN / 4) == 0,
              "async path: each thread's float4 copies keep one column");

static_assert(STAGES >= 2 && STAGES <= 8, "async_stages: 2 to 8 stages");
static_assert(BK % 4 == 0 && WX % 4 == 0 && BN % 4 == 0, "float4 alignment in shared memory");
static_assert(STAGES * STAGE_FLOATS * 4 <= 227 * 1024, "dynamic shared memory <= 227 KB");

// Row of C (within the tile) of accumulator row i of thread ty: rows strided by BY, so
// that the threads of a warp read consecutive rows of the row-major A tile.
__device__ __forceinline__ int tile_row(int i, int ty) { return i * BY + ty; }

// x, opaque to the optimiser: values derived from it are recomputed where used instead of
// being hoisted out of the K loop (the rarely taken 4-byte copy path would otherwise pin
// its per-element 64-bit addresses in registers for the whole loop).
__device__ __forceinline__ int opaque(int x) {
  int y;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}
__device__ __forceinline__ unsigned shared_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared, L2 only; src_bytes 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
// 4 bytes global -> shared; src_bytes 0 writes a zero and reads nothing.
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// Issues the copies of the K slice starting at k0 into the stage at byte address `dst`
/// (no commit). VEC: float4 copies of both operands (slot s of a thread copies A row
/// ra + s * A_ROW_STEP, columns ca..ca+3 of the slice, and B row rb + s * B_ROW_STEP,
/// columns cb..cb+3 of the tile: one column per thread, as THREADS is a multiple of the
/// float4s per row); otherwise 4-byte copies of both. All addresses derive from an opaque
/// tid: they are recomputed per slice (a few integer ops per copy) instead of being kept
/// in registers across the K loop, where the accumulators need them.
template <bool VEC>
__device__ __forceinline__ void async_load(unsigned dst, const float* __restrict__ A,
                                           const float* __restrict__ B, int m, int n, int k,
                                           int row0, int col0, int k0, int tid) {
  const int t = opaque(tid);
  if constexpr (VEC) {
    constexpr int A_ROW_STEP = THREADS / (BK / 4), B_ROW_STEP = THREADS / (BN / 4);
    const int ra = t / (BK / 4), ca = (t % (BK / 4)) * 4;
    const int rb = t / (BN / 4), cb = (t % (BN / 4)) * 4;
    const bool a_col_ok = k0 + ca < k;    // k % 4 == 0: k0 + ca < k => k0 + ca + 3 < k
    const bool b_col_ok = col0 + cb < n;  // n % 4 == 0 likewise
    const float* a_src = A + ((long long)(row0 + ra) * k + k0 + ca);
    const float* b_src = B + ((long long)(k0 + rb) * n + col0 + cb);
    const unsigned a_dst = dst + (ra * AK + ca) * 4;
    const unsigned b_dst = dst + (A_STAGE + rb * BN + cb) * 4;
#pragma unroll
    for (int s = 0; s < A_PER_THREAD / 4; ++s) {
      const bool ok = a_col_ok && row0 + ra + s * A_ROW_STEP < m;
      cp_async16(a_dst + s * A_ROW_STEP * AK * 4, ok ? a_src + (long long)(s * A_ROW_STEP) * k : A, ok ? 16 : 0);
    }
#pragma unroll
    for (int s = 0; s < B_PER_THREAD / 4; ++s) {
      const bool ok = b_col_ok && k0 + rb + s * B_ROW_STEP < k;
      cp_async16(b_dst + s * B_ROW_STEP * BN * 4, ok ? b_src + (long long)(s * B_ROW_STEP) * n : B, ok ? 16 : 0);
    }
  } else {
#pragma unroll 1
    for (int e = 0; e < A_PER_THREAD; ++e) {
      const int l = e * THREADS + t;
      const int r = l / BK, c = l % BK;
      const int grow = row0 + r, gcol = k0 + c;
      const bool ok = grow < m && gcol < k;
      cp_async4(dst + (r * AK + c) * 4, ok ? A + ((long long)grow * k + gcol) : A, ok ? 4 : 0);
    }
#pragma unroll 1
    for (int e = 0; e < B_PER_THREAD; ++e) {
      const int l = e * THREADS + t;
      const int r = l / BN, c = l % BN;
      const int grow = k0 + r, gcol = col0 + c;
      const bool ok = grow < k && gcol < n;
      cp_async4(dst + (A_STAGE + r * BN + c) * 4, ok ? B + ((long long)grow * n + gcol) : B, ok ? 4 : 0);
    }
  }
}

/// acc += A_tile * B_tile over the K slice in the stage at `st`: per 4 kk, one float4 of
/// A per accumulator row (4 kk values), then per kk WX/4 float4s of B.
__device__ __forceinline__ void async_multiply(const float* st, int tx, int ty, float (&acc)[WY][WX]) {
  const float* as = st + ty * AK;
  const float* bs = st + A_STAGE + tx * 4;
#if unroll
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int kq = 0; kq < BK; kq += 4) {
    float a_frag[WY][4];
#pragma unroll
    for (int i = 0; i < WY; ++i) load_vec<4>(a_frag[i], as + i * BY * AK + kq);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float b_frag[WX];
#pragma unroll
      for (int g = 0; g < WX / 4; ++g) load_vec<4>(&b_frag[4 * g], bs + (kq + q) * BN + g * BX * 4);
#pragma unroll
      for (int i = 0; i < WY; ++i)
#pragma unroll
        for (int j = 0; j < WX; ++j) acc[i][j] = fmaf(a_frag[i][q], b_frag[j], acc[i][j]);
    }
  }
}

/// The K loop of the cp.async path (see the header).
template <bool VEC>
__device__ __forceinline__ void async_main_loop(float* smem, const float* __restrict__ A,
                                                const float* __restrict__ B, int m, int n, int k,
                                                int row0, int col0, int tid, int tx, int ty,
                                                float (&acc)[WY][WX]) {
  const int ntiles = (k + BK - 1) / BK;
  const unsigned smem_base = shared_addr(smem);
  // Prologue: slices 0 .. S-2 in flight, one commit group each (empty groups past the
  // last slice keep the group count uniform).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ntiles)
      async_load<VEC>(smem_base + s * STAGE_FLOATS * 4, A, B, m, n, k, row0, col0, s * BK, tid);
    cp_async_commit();
  }
  int stage = 0;             // stage of slice t
  int fill = STAGES - 1;     // stage of slice t + S - 1 (= that of slice t - 1)
#pragma unroll 1
  for (int t = 0; t < ntiles; ++t) {
    // S - 1 + t groups committed, group j holding slice j: at most S - 2 pending means
    // slice t has landed (for this thread's copies; the barrier makes it all threads').
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    // Every thread is past slice t - 1: its stage can be refilled.
    if (t + STAGES - 1 < ntiles)
      async_load<VEC>(smem_base + fill * STAGE_FLOATS * 4, A, B, m, n, k, row0, col0,
                      (t + STAGES - 1) * BK, tid);
    cp_async_commit();
    async_multiply(smem + stage * STAGE_FLOATS, tx, ty, acc);
    stage = stage == STAGES - 1 ? 0 : stage + 1;
    fill = fill == STAGES - 1 ? 0 : fill + 1;
  }
  cp_async_wait<0>();  // only empty groups can remain; leave none behind
}
#endif

}  // namespace cutune_matmul
using namespace cutune_matmul;

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y, blocks_per_sm)
matmul(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
       int m, int n, int k) {
  const int tid = threadIdx.y * BX + threadIdx.x;
  // Logical thread coordinates in the BX x BY thread grid.
#if warp_tile
  // Warp w covers the 8 x 4 patch (w % (BX/8), w / (BX/8)) of thread coordinates.
  const int lane = tid & 31, warp = tid >> 5;
  const int tx = (warp % (BX / 8)) * 8 + (lane & 7);
  const int ty = (warp / (BX / 8)) * 4 + (lane >> 3);
#else
  const int tx = threadIdx.x, ty = threadIdx.y;
#endif

  // Tile of C of this block.
#if swizzle
  // Consecutive block ids walk a group of `swizzle` tile rows column by column (the last
  // group may have fewer rows): a bijection of the grid onto itself.
  int tile_x, tile_y;
  {
    const unsigned gx = gridDim.x, gy = gridDim.y;
    const unsigned pid = blockIdx.y * gx + blockIdx.x;  // < 2^31: gx, gy <= 65535
    const unsigned per_group = (unsigned)swizzle * gx;
    const unsigned group = pid / per_group;
    const unsigned first = group * (unsigned)swizzle;
    const unsigned rows = min(gy - first, (unsigned)swizzle);
    const unsigned in = pid - group * per_group;
    tile_y = (int)(first + in % rows);
    tile_x = (int)(in / rows);
  }
#else
  const int tile_x = blockIdx.x, tile_y = blockIdx.y;
#endif
  const int row0 = tile_y * BM;  // first row of C of this block
  const int col0 = tile_x * BN;  // first column
  // float4 paths need 16-byte aligned rows: uniform over the grid, decided once.
  const bool vec_a = vector_loads && (k % 4 == 0) && ((reinterpret_cast<unsigned long long>(A) & 15) == 0);
  const bool vec_b = vector_loads && (n % 4 == 0) && ((reinterpret_cast<unsigned long long>(B) & 15) == 0);

  float acc[WY][WX];
#pragma unroll
  for (int i = 0; i < WY; ++i)
#pragma unroll
    for (int j = 0; j < WX; ++j) acc[i][j] = 0.f;

#if async_stages
  extern __shared__ __align__(16) float smem[];  // STAGES * STAGE_FLOATS floats
  // Both operands float4 (k % 4 == 0, n % 4 == 0, aligned) or both 4-byte copies: two
  // copies of the main loop, so that neither pays for the other's registers.
  if (vec_a && vec_b)
    async_main_loop<true>(smem, A, B, m, n, k, row0, col0, tid, tx, ty, acc);
  else
    async_main_loop<false>(smem, A, B, m, n, k, row0, col0, tid, tx, ty, acc);
#else
  __shared__ __align__(16) Shared sh;
  Loader ld;
#if double_buffer
  ld.load(A, B, m, n, k, row0, col0, 0, vec_a, vec_b, tid);
  ld.store(sh, 0, vec_a, vec_b, tid);
  __syncthreads();
  int stage = 0;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const bool has_next = k0 + BK < k;
    if (has_next) ld.load(A, B, m, n, k, row0, col0, k0 + BK, vec_a, vec_b, tid);
    multiply_slice(sh, stage, tx, ty, acc);
    // The other stage was last read in the previous iteration, before its barrier.
    if (has_next) ld.store(sh, stage ^ 1, vec_a, vec_b, tid);
    __syncthreads();
    stage ^= 1;
  }
#else
  for (int k0 = 0; k0 < k; k0 += BK) {
    ld.load(A, B, m, n, k, row0, col0, k0, vec_a, vec_b, tid);
    ld.store(sh, 0, vec_a, vec_b, tid);
    __syncthreads();
    multiply_slice(sh, 0, tx, ty, acc);
    __syncthreads();
  }
#endif
#endif

  // Epilogue: row i of this thread is row0 + tile_row(i, ty), column j is
  // col0 + (j/SVX)*BX*SVX + tx*SVX + j%SVX.
  const bool vec_c = vector_loads && SVX == 4 && (n % 4 == 0) &&
                     ((reinterpret_cast<unsigned long long>(C) & 15) == 0);
#pragma unroll
  for (int i = 0; i < WY; ++i) {
    const int row = row0 + tile_row(i, ty);
    if (row >= m) continue;
    float* __restrict__ c_row = C + (long long)row * n;
#pragma unroll
    for (int g = 0; g < WX / SVX; ++g) {
      const int col = col0 + g * BX * SVX + tx * SVX;
      if (vec_c) {
        if constexpr (SVX == 4) {
          if (col < n)  // n % 4 == 0 and col % 4 == 0: col + 3 < n
            *reinterpret_cast<float4*>(c_row + col) =
                make_float4(acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < SVX; ++j)
          if (col + j < n) c_row[col + j] = acc[i][g * SVX + j];
      }
    }
  }
}
