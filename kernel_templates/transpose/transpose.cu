// out = in^T for a float32 matrix: `in` is rows x cols row-major, `out` is cols x rows
// row-major, out[c * rows + r] = in[r * cols + c]. Any rows, cols >= 1 (tails handled).
//
// Parameters (the classic steps of a GPU transpose, as tunable values):
//   variant 0: naive. Each thread copies its elements straight from in to out: the reads
//              are coalesced (consecutive threads, consecutive columns), the writes are
//              not (consecutive threads write `rows` floats apart).
//   variant 1: shared-memory tile. The block reads a tile_dim x tile_dim tile with
//              coalesced loads into shared memory, synchronises, and writes the transposed
//              tile with coalesced stores, reading shared memory down a column: with a
//              row pitch of tile_dim floats (a multiple of 32 banks) the 32 threads of a
//              warp hit the same bank, a 16- or 32-way bank conflict.
//   variant 2: padded tile: the same with a row pitch of tile_dim + 1 floats, so column
//              reads fall in 32 different banks (no conflicts).
//   tile_dim:  the square tile a block transposes (16, 32, 64).
//   block_size_x, block_size_y: the block's threads. A thread handles
//              (tile_dim / block_size_x) x (tile_dim / block_size_y) elements ("elements
//              per thread"): columns tx, tx + block_size_x, ... and rows ty,
//              ty + block_size_y, ... of the tile, so every warp-wide access stays
//              contiguous. All of a thread's global loads are issued before its first
//              store (memory-level parallelism).
//
// Grid: ceil(cols / tile_dim) x ceil(rows / tile_dim) blocks (ProblemSize ["cols",
// "rows"], GridDivX/Y ["tile_dim"] in transpose.json); block (x, y) owns input rows
// [y * tile_dim, +tile_dim) and columns [x * tile_dim, +tile_dim). Tiles wholly inside the
// matrix take a path without bounds checks; edge tiles check every element.
// Index products use 64 bits: rows * cols may exceed 2^31.
//
// Parameters arrive as -D defines; the defaults equal the "Default" values of
// transpose.json, so the file also compiles alone.

#ifndef variant
#define variant 2
#endif
#ifndef tile_dim
#define tile_dim 32
#endif
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif

#if variant < 0 || variant > 2
#error "variant must be 0 (naive), 1 (shared tile) or 2 (padded shared tile)"
#endif
#if tile_dim % block_size_x != 0 || tile_dim % block_size_y != 0
#error "block_size_x and block_size_y must divide tile_dim"
#endif

namespace cutune_transpose {

constexpr int cols_per_thread = tile_dim / block_size_x;
constexpr int rows_per_thread = tile_dim / block_size_y;

/// Loads this thread's elements of the tile at (r0, c0): v[i][j] = in[r0 + ty + i*by][c0 + tx + j*bx].
template <bool Full>
__device__ __forceinline__ void load_tile(float (&v)[rows_per_thread][cols_per_thread],
                                          const float* __restrict__ in, long long r0, long long c0,
                                          int rows, int cols) {
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i) {
    const long long r = r0 + threadIdx.y + i * block_size_y;
#pragma unroll
    for (int j = 0; j < cols_per_thread; ++j) {
      const long long c = c0 + threadIdx.x + j * block_size_x;
      if (Full || (r < rows && c < cols)) v[i][j] = __ldg(in + r * cols + c);
    }
  }
}

#if variant == 0
/// Naive: element (r, c) goes straight to out[c * rows + r].
template <bool Full>
__device__ __forceinline__ void naive(float* __restrict__ out, const float* __restrict__ in,
                                      long long r0, long long c0, int rows, int cols) {
  float v[rows_per_thread][cols_per_thread];
  load_tile<Full>(v, in, r0, c0, rows, cols);
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i) {
    const long long r = r0 + threadIdx.y + i * block_size_y;
#pragma unroll
    for (int j = 0; j < cols_per_thread; ++j) {
      const long long c = c0 + threadIdx.x + j * block_size_x;
      if (Full || (r < rows && c < cols)) out[c * rows + r] = v[i][j];
    }
  }
}
#else
constexpr int pitch = tile_dim + (variant == 2 ? 1 : 0);

/// Shared-memory tile: coalesced loads, transposed through shared memory, coalesced stores.
template <bool Full>
__device__ __forceinline__ void tiled(float* __restrict__ out, const float* __restrict__ in,
                                      long long r0, long long c0, int rows, int cols,
                                      float (*tile)[pitch]) {
  float v[rows_per_thread][cols_per_thread];
  load_tile<Full>(v, in, r0, c0, rows, cols);
  // Elements outside the matrix leave their tile slots unwritten; no store reads them.
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i)
#pragma unroll
    for (int j = 0; j < cols_per_thread; ++j)
      tile[threadIdx.y + i * block_size_y][threadIdx.x + j * block_size_x] = v[i][j];
  __syncthreads();
  // Output row c0 + oy holds input column c0 + oy; its element r0 + ox is tile[ox][oy].
  // Consecutive threads (ox) write consecutive floats of an output row, and read one
  // tile column: pitch apart in shared memory.
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i) {
    const int oy = threadIdx.y + i * block_size_y;
#pragma unroll
    for (int j = 0; j < cols_per_thread; ++j) {
      const int ox = threadIdx.x + j * block_size_x;
      if (Full || (c0 + oy < cols && r0 + ox < rows))
        out[(c0 + oy) * rows + r0 + ox] = tile[ox][oy];
    }
  }
}
#endif

}  // namespace cutune_transpose
using namespace cutune_transpose;

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
transpose(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  const long long c0 = (long long)blockIdx.x * tile_dim;  // first input column of the tile
  const long long r0 = (long long)blockIdx.y * tile_dim;  // first input row of the tile
  // Block-uniform: interior tiles skip every bounds check.
  const bool full = c0 + tile_dim <= cols && r0 + tile_dim <= rows;
#if variant == 0
  if (full) naive<true>(out, in, r0, c0, rows, cols);
  else naive<false>(out, in, r0, c0, rows, cols);
#else
  __shared__ float tile[tile_dim][pitch];
  if (full) tiled<true>(out, in, r0, c0, rows, cols, tile);
  else tiled<false>(out, in, r0, c0, rows, cols, tile);
#endif
}
