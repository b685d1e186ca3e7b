// CPU reference of kernel_templates/reduction: out[0] = sum of in[0..n), accumulated in
// double and rounded once to float (the correctly rounded float of a near-exact sum:
// 2^31 values below 1 with 24-bit mantissas lose at most ~2^-22 relative in double).
//
// Tolerance (reduction.json, cutune.Tolerance): relative 1e-5, absolute 0.
// The GPU adds in float32 in a fixed tree order: per thread ept*vw values sequentially,
// a pairwise tree over the block, then the last block adds the gridDim.x partials, each
// thread a strided sequential run of up to 2^16 float4 (block 32, 1 element per thread,
// n = 2^28), then a tree again. The worst-case bound of such an order (k sequential adds
// give k*u, u = 2^-24) is ~1e-2, far too loose to be useful, but round-to-nearest errors
// are unbiased and add like a random walk: an exact host emulation of every summation
// order in the space (288 distinct trees; unroll does not change the order) on 2^28
// uniform [0, 1) floats gave a worst relative error of 6.0e-7 (5 float ulps), the
// block-32 / 1-element configurations being the worst. Errors grow like sqrt(n), so
// ~1.7e-6 is expected at the largest n = 2^31 - 1; 1e-5 leaves a 6x margin there and
// 16x at the default size, while a lost or doubled element still fails for n up to
// ~10^5 (every hand-sized test: n = 1, 31, 1000).
#include <cstdint>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

void reference_reduction(const ProblemInstance& /*instance*/, std::vector<HostArgument>& args) {
  HostArgument& out = find_argument(args, "reduction", "out", 1, sizeof(float));
  // n is the element count of `in` (its JSON Size is "n", the kernel's scalar n).
  const HostArgument& in = find_argument(args, "reduction", "in", 0, sizeof(float));
  const float* x = in.data<float>();
  double sum = 0.0;
  for (std::int64_t i = 0; i < in.count; ++i) sum += static_cast<double>(x[i]);
  out.data<float>()[0] = static_cast<float>(sum);
}

}  // namespace cutune::templates::detail

namespace cutune::templates::detail {

void reference_reduction_int32(const ProblemInstance& /*instance*/, std::vector<HostArgument>& args) {
  HostArgument& out = find_argument(args, "reduction_int32", "out", 1, sizeof(std::int32_t));
  const HostArgument& in = find_argument(args, "reduction_int32", "in", 0, sizeof(std::int32_t));
  const auto* x = in.data<std::int32_t>();
  // The GPU adds int32 with wrap-around; modular arithmetic is associative, so any order
  // gives the same bits. Sum in uint32 to get that wrap-around without signed overflow.
  std::uint32_t sum = 0;
  for (std::int64_t i = 0; i < in.count; ++i) sum += static_cast<std::uint32_t>(x[i]);
  out.data<std::int32_t>()[0] = static_cast<std::int32_t>(sum);
}

}  // namespace cutune::templates::detail
