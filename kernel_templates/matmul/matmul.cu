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
//     quartering the shared-memory wavefronts per FFMA;
//   - blocks_per_sm 2: __launch_bounds__ minimum of 2 resident blocks, which caps 256-thread
//     blocks at 128 registers (the 128x128 8x8 tile otherwise takes ~160, one block per SM):
//     a second block overlaps the first one's barriers. Offered only where the staging
//     registers are few enough that ptxas does not spill (matmul.json).
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

namespace cutune_matmul {

constexpr int BX = block_size_x;
constexpr int BY = block_size_y;
constexpr int WX = work_per_thread_x;
constexpr int WY = work_per_thread_y;
constexpr int BK = tile_k;
constexpr int THREADS = BX * BY;
constexpr int BM = BY * WY;                 // rows of C per block
constexpr int BN = BX * WX;                 // columns of C per block
constexpr int AS_STRIDE = BM + 4 * padding;  // floats per kk row of the transposed A tile
constexpr int BS_STRIDE = BN;
constexpr int STAGES = double_buffer ? 2 : 1;
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
static_assert(BK % 4 == 0 && BN % 4 == 0 && AS_STRIDE % 4 == 0, "float4 alignment in shared memory");
static_assert(STAGES * BK * (AS_STRIDE + BS_STRIDE) * 4 <= 48 * 1024, "static shared memory <= 48 KB");
static_assert(!warp_tile || (BX % 8 == 0 && BY % 4 == 0), "warp_tile needs 8 | block_size_x, 4 | block_size_y");

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

}  // namespace cutune_matmul
using namespace cutune_matmul;

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y, blocks_per_sm)
matmul(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
       int m, int n, int k) {
  __shared__ __align__(16) Shared sh;

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

  const int row0 = blockIdx.y * BM;  // first row of C of this block
  const int col0 = blockIdx.x * BN;  // first column
  // float4 paths need 16-byte aligned rows: uniform over the grid, decided once.
  const bool vec_a = vector_loads && (k % 4 == 0) && ((reinterpret_cast<unsigned long long>(A) & 15) == 0);
  const bool vec_b = vector_loads && (n % 4 == 0) && ((reinterpret_cast<unsigned long long>(B) & 15) == 0);

  float acc[WY][WX];
#pragma unroll
  for (int i = 0; i < WY; ++i)
#pragma unroll
    for (int j = 0; j < WX; ++j) acc[i][j] = 0.f;

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

  // Epilogue: row i of this thread is row0 + (i/SVY)*BY*SVY + ty*SVY + i%SVY, column j is
  // col0 + (j/SVX)*BX*SVX + tx*SVX + j%SVX.
  const bool vec_c = vector_loads && SVX == 4 && (n % 4 == 0) &&
                     ((reinterpret_cast<unsigned long long>(C) & 15) == 0);
#pragma unroll
  for (int i = 0; i < WY; ++i) {
    const int row = row0 + (i / SVY) * BY * SVY + ty * SVY + i % SVY;
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
