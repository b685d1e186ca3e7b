#pragma once
// The test one output element must pass, written once for the host (compare() in
// host_data.cpp) and the device (the comparison kernel, tuner/cuda/src/output_compare.cu),
// so that both agree bit for bit. Self-contained on purpose: nvcc compiles it into device
// code, so it uses no library function (NaN and infinity are found by comparisons).
//
// Floats: numpy.allclose(expected, got, rtol, atol, equal_nan=True) element by element,
// which is Kernel Tuner's default check of an `answer` (core.py, _default_verify_function):
//   |expected - got| <= atol + rtol * |got|  and got finite,  or expected == got,
//   or both NaN.
// Note: numpy scales rtol by |got| (its second argument), not by |expected|. The arithmetic
// is done in the element's own type, as numpy does for float32 arrays with Python-float
// tolerances, and without fused multiply-add (numpy rounds the product before the sum).
// An element whose bits are exactly the poison written before the run was never written
// (or only copied from the poison): it fails whatever the expected value is.
// Integers: exact equality (numpy would accept 200000 for 200001 under rtol 1e-5: a wrong
// index or count is wrong, so cutune is stricter here).
#include <cstdint>

#if defined(__CUDACC__)
#define CUTUNE_HD __host__ __device__
#else
#define CUTUNE_HD
#endif

namespace cutune::element_check {

/// Poison patterns: quiet NaNs with a payload no arithmetic produces (a GPU's own NaN is
/// 0x7fffffff), so that "never written" is told apart from a computed NaN.
inline constexpr std::uint32_t kPoisonFloat32 = 0x7fe5a5a5u;
inline constexpr std::uint64_t kPoisonFloat64 = 0x7ffca5a5a5a5a5a5ull;
/// Integer outputs are poisoned with 0xa5 bytes; an integer can legitimately hold that, so
/// for integers the poison is only a value the comparison is unlikely to accept.
inline constexpr unsigned char kPoisonByte = 0xa5;

struct Outcome {
  bool ok;
  /// |expected - got| as a double (integers: the exact distance); +infinity when a NaN, an
  /// infinity or the poison is involved in a failure. Ranks failures: the worst is reported.
  double error;
};

template <class T>
CUTUNE_HD inline T abs_of(T x) {
  return x < T(0) ? -x : x;
}

template <class T>
CUTUNE_HD inline T product_rounded(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#elif defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF)
  volatile T p = a * b;  // keeps the compiler from contracting the sum into an FMA
  return p;
#else
  return a * b;
#endif
}

/// One floating-point element. `poison_bits`: the poison's bit pattern when the output was
/// poisoned before the run, else 0 (no pattern is 0: 0 is +0.0).
template <class T, class Bits>
CUTUNE_HD inline Outcome check_float(T expected, T got, Bits got_bits, Bits poison_bits, double atol, double rtol) {
  const double inf = __builtin_huge_val();
  if (poison_bits != 0 && got_bits == poison_bits) return {false, inf};
  const bool e_nan = expected != expected, g_nan = got != got;
  if (e_nan && g_nan) return {true, 0.0};
  if (expected == got) return {true, 0.0};  // also equal infinities (their difference is NaN)
  const T diff = abs_of(expected - got);
  const bool got_finite = (got - got) == T(0);
  const bool ok = got_finite && diff <= T(atol) + product_rounded(T(rtol), abs_of(got));
  const double error = static_cast<double>(diff);
  return {ok, error == error && error != inf ? error : inf};
}

template <class T>
CUTUNE_HD inline Outcome check_integer(T expected, T got) {
  if (expected == got) return {true, 0.0};
  // Distance in the unsigned 64-bit domain: exact for every pair of the type's values.
  const auto e = static_cast<std::uint64_t>(expected), g = static_cast<std::uint64_t>(got);
  const std::uint64_t d = (expected > got) ? e - g : g - e;
  return {false, static_cast<double>(d)};
}

/// Whether failure `a` (error, index) is worse than failure `b`: larger error, then lower index.
CUTUNE_HD inline bool worse(double a_error, std::uint64_t a_index, double b_error, std::uint64_t b_index) {
  return a_error > b_error || (a_error == b_error && a_index < b_index);
}

}  // namespace cutune::element_check
