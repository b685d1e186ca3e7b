// CPU references of kernel_templates/scan: the exclusive (inclusive = 0) or inclusive
// (inclusive = 1) prefix sum of in[0..n), written to out[0..n). `inclusive` is a problem
// variable (0 when the instance does not name it).
//
// float32 (scan.json): each prefix accumulated in double, in index order, and rounded once
// to float. Uniform [0, 1) inputs keep every prefix positive and increasing, so a relative
// tolerance is meaningful at every index: a sum of positive terms has no cancellation, and
// any summation order's error is bounded relative to the prefix itself. The double
// accumulation adds at most 2^30 * 2^-53 = 2^-23 relative in the worst case, ~2^-38 in
// practice (random-walk rounding), well below the float rounding of the result.
//
// Tolerance (scan.json, cutune.Tolerance): relative 2e-4, absolute 0.
// The GPU adds in float32: per thread a sequential run of items_per_thread values, a
// block-wide tree (Hillis-Steele, Blelloch or warp shuffles), then the tile offsets: the
// decoupled look-back makes tile t's inclusive prefix from tile t-1's (or from a warp sum
// of up to 32 aggregates back to the nearest published prefix), so the offsets are a
// CHAIN of up to ceil(n / tile) float additions, the spine of reduce-then-scan a chain of
// ceil(tiles / tile) chunk carries. The worst-case bound of a k-step chain (k*u, u = 2^-24)
// is useless (0.5 for 2^23 tiles), but round-to-nearest errors are unbiased and add like a
// random walk: an exact host emulation of the kernels' summation orders (every block scan
// variant, look-back windows of 1 to 70 tiles, the spine's chunk carries) on uniform
// [0, 1) floats gave a worst relative error of 2.0e-5 at n = 2^28 with the smallest tile
// (128: a chain of 2^21 tiles) and 3.9e-5 at the largest n = 2^30 (2^23 tiles), growing
// like sqrt(tiles); the default tile (2048) gave 5.1e-6 and reduce-then-scan 3.4e-6 at
// n = 2^28.
// 2e-4 leaves a 5x margin at the worst configuration of the largest size, while a lost,
// doubled or shifted element (exclusive written as inclusive) still fails wherever the
// prefix is below ~2500 (x / prefix > 2e-4 for an element x ~ 0.5): the first ~5000
// outputs, which covers every hand-sized test (n = 1, 31, 1000). The int32 template
// (scan_int32.json, exact comparison) checks the indexing at every size.
#include <cstdint>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

namespace {

bool inclusive_of(const ProblemInstance& instance) {
  const auto it = instance.variables.find("inclusive");
  return it != instance.variables.end() && it->second != 0;
}

}  // namespace

void reference_scan(const ProblemInstance& instance, std::vector<HostArgument>& args) {
  // The element count comes from the output buffer; the input must hold as many.
  HostArgument& out = find_argument(args, "scan", "out", 0, sizeof(float));
  const std::int64_t n = out.count;
  const HostArgument& in = find_argument(args, "scan", "in", n, sizeof(float));
  const bool inclusive = inclusive_of(instance);
  const float* x = in.data<float>();
  float* y = out.data<float>();
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (inclusive) sum += static_cast<double>(x[i]);
    y[i] = static_cast<float>(sum);
    if (!inclusive) sum += static_cast<double>(x[i]);
  }
}

void reference_scan_int32(const ProblemInstance& instance, std::vector<HostArgument>& args) {
  HostArgument& out = find_argument(args, "scan_int32", "out", 0, sizeof(std::int32_t));
  const std::int64_t n = out.count;
  const HostArgument& in = find_argument(args, "scan_int32", "in", n, sizeof(std::int32_t));
  const bool inclusive = inclusive_of(instance);
  const auto* x = in.data<std::int32_t>();
  auto* y = out.data<std::int32_t>();
  // The GPU adds with wrap-around (in uint32); modular addition is associative, so every
  // summation order gives these exact bits.
  std::uint32_t sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (inclusive) sum += static_cast<std::uint32_t>(x[i]);
    y[i] = static_cast<std::int32_t>(sum);
    if (!inclusive) sum += static_cast<std::uint32_t>(x[i]);
  }
}

}  // namespace cutune::templates::detail
