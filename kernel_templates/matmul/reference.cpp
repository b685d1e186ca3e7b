// CPU reference of kernel_templates/matmul: C = A * B (row-major; A m x k, B k x n),
// every product formed exactly in double ((24-bit mantissa)^2 fits in 53 bits) and summed
// in double, rounded once to float: error ~k * 2^-53 relative, negligible next to the
// GPU's float32 FFMA chain.
//
// Tolerance (matmul.json, cutune.Tolerance): relative 1e-4, absolute 0.
// Every configuration of matmul.cu computes each C element as one fp32 FFMA chain over
// k = 0, 1, ..., k-1 in order (zero-filled tail slices add exact zeros), so all of them
// give the same bits, and a host emulation of that chain (fmaf in order, uniform [0, 1)
// inputs) gives the exact GPU error. Round-to-nearest errors add like a random walk over
// partial sums that grow linearly, relative error ~ 2^-24 * sqrt(k) / 3; the emulation,
// 20,000 elements per size, gave worst (rms) relative errors of 1.8e-6 (4.2e-7) at
// k = 1000, 3.6e-6 (8.4e-7) at k = 4096, 5.0e-6 (1.2e-6) at k = 8192 and 1.5e-5 (3.4e-6)
// at k = 65536, the largest k allowed; over the 6.7e7 elements of an 8192^2 C the tail
// reaches ~6 rms, ~7e-6 at k = 8192 and ~2e-5 at k = 65536.
// 1e-4 leaves a >=5x margin at the largest k (14x at k = 8192), while the smallest real
// bug (one term of a k-long dot product lost or doubled: a relative change of about 1/k
// for k terms of mean 1/4) still fails for k up to ~10^4, and any wrong tile (wrong row/column/slice) fails at
// every size. The worst-case bound (k * 2^-24: 5e-4 at k = 8192) would be too loose.
//
// Speed: O(m*n*k) on the host, so it is blocked and multi-threaded (std::thread, one per
// hardware thread): a task is a 32-row x 256-column block of C, accumulated in a
// thread-local double buffer over k in 128-deep slices (the 128 x 256 slice of B, 128 KB,
// stays in L2 and is reused by the 32 rows; four rows share each B load, their four
// accumulators adjacent so that -O2 vectorises the update). Measured: 1024^3 in 0.79 s on
// one core of the build machine (1.4 GFMA/s per core), i.e. 4096^3 (6.9e10 FMAs) in ~3 s
// on 16 cores and 8192^3 in ~25 s.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "../references_internal.hpp"

namespace cutune::templates::detail {
namespace {

constexpr std::int64_t kRowBlock = 32;   // rows of C per task
constexpr std::int64_t kColBlock = 256;  // columns of C per task
constexpr std::int64_t kDepth = 128;     // k slice (B slice kDepth x kColBlock floats)
constexpr std::int64_t kRowGroup = 4;    // rows sharing each load of B

struct MatmulShape {
  std::int64_t m, n, k;
};

/// One task: rows [r0, r0+32) x columns [c0, c0+256) of C, clipped to m x n.
void matmul_block(const MatmulShape& s, const float* a, const float* b, float* c,
                  std::int64_t r0, std::int64_t c0, std::vector<double>& acc) {
  const std::int64_t rows = std::min(kRowBlock, s.m - r0);
  const std::int64_t cols = std::min(kColBlock, s.n - c0);
  std::fill(acc.begin(), acc.end(), 0.0);
  for (std::int64_t k0 = 0; k0 < s.k; k0 += kDepth) {
    const std::int64_t k1 = std::min(s.k, k0 + kDepth);
    for (std::int64_t g = 0; g < rows; g += kRowGroup) {
      // Rows past m get a = 0 and land in unused accumulator rows (never stored).
      const float* arow[kRowGroup];
      for (std::int64_t i = 0; i < kRowGroup; ++i)
        arow[i] = g + i < rows ? a + (r0 + g + i) * s.k : nullptr;
      // Group g's accumulators: kRowGroup * kColBlock doubles, column j's four rows
      // adjacent, so that the four updates of one B load are one contiguous (vectorisable,
      // alias-free) run.
      double* __restrict__ accg = acc.data() + g * kColBlock;
      for (std::int64_t kk = k0; kk < k1; ++kk) {
        double av[kRowGroup];
        for (std::int64_t i = 0; i < kRowGroup; ++i)
          av[i] = arow[i] ? static_cast<double>(arow[i][kk]) : 0.0;
        const float* __restrict__ brow = b + kk * s.n + c0;
        for (std::int64_t j = 0; j < cols; ++j) {
          const double bj = static_cast<double>(brow[j]);
          double* __restrict__ cj = accg + kRowGroup * j;
          cj[0] += av[0] * bj;
          cj[1] += av[1] * bj;
          cj[2] += av[2] * bj;
          cj[3] += av[3] * bj;
        }
      }
    }
  }
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      c[(r0 + i) * s.n + c0 + j] = static_cast<float>(
          acc[static_cast<std::size_t>((i / kRowGroup) * kRowGroup * kColBlock + j * kRowGroup + i % kRowGroup)]);
}

}  // namespace

void reference_matmul(const ProblemInstance& instance, std::vector<HostArgument>& args) {
  const MatmulShape s{instance.variables.at("m"), instance.variables.at("n"),
                      instance.variables.at("k")};
  HostArgument& c = find_argument(args, "matmul", "C", s.m * s.n, sizeof(float));
  const HostArgument& a = find_argument(args, "matmul", "A", s.m * s.k, sizeof(float));
  const HostArgument& b = find_argument(args, "matmul", "B", s.k * s.n, sizeof(float));

  const std::int64_t row_tasks = (s.m + kRowBlock - 1) / kRowBlock;
  const std::int64_t col_tasks = (s.n + kColBlock - 1) / kColBlock;
  const std::int64_t tasks = row_tasks * col_tasks;
  // Small products are not worth a thread start (~50 us); ~2^24 FMAs per thread minimum.
  const std::int64_t fmas = s.m * s.n * s.k;
  const std::int64_t hw = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  const std::int64_t workers = std::clamp<std::int64_t>(fmas >> 24, 1, std::min(hw, tasks));

  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      std::vector<double> acc(static_cast<std::size_t>((kRowBlock + kRowGroup) * kColBlock));
      for (std::int64_t t = next++; t < tasks; t = next++)
        matmul_block(s, a.data<float>(), b.data<float>(), c.data<float>(),
                     (t / col_tasks) * kRowBlock, (t % col_tasks) * kColBlock, acc);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = tasks;
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cutune::templates::detail
