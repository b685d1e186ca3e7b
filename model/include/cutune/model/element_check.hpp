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
//
// Kernel Tuner passes equal_nan only when the answer holds a NaN; element by element that is
// the same verdict, since NaN == NaN can only matter where the expected element is a NaN.
//
// float16 and bfloat16 are compared as numpy compares arrays of them (allclose keeps the
// array's type: the Python-float atol and rtol become float16/bfloat16 too): every operation
// is done in float32 and rounded to the element type, as numpy's half loops and ml_dtypes'
// ufuncs do. With Kernel Tuner's defaults (atol 1e-6, rtol 1e-5) that is all but exact
// equality, as it is in Kernel Tuner: a half-precision script passes its own atol.
// Complex: |expected - got| <= atol + rtol * |got| with |z| as numpy 2's vectorised absolute
// computes it (larger * sqrt(fma(ratio, ratio, 1))), in the real type of the element;
// equality and NaN as numpy: a complex is a NaN when either part is.
#include <cstdint>

#include "cutune/model/element_types.hpp"

namespace cutune::element_check {

/// Poison patterns: quiet NaNs with a payload no arithmetic produces (a GPU's own NaN is
/// 0x7fffffff), so that "never written" is told apart from a computed NaN.
inline constexpr std::uint32_t kPoisonFloat32 = 0x7fe5a5a5u;
inline constexpr std::uint64_t kPoisonFloat64 = 0x7ffca5a5a5a5a5a5ull;
/// The same for 16-bit floats: quiet NaNs, not the GPU's own (0x7fff for both).
inline constexpr std::uint16_t kPoisonFloat16 = 0x7ea5u;
inline constexpr std::uint16_t kPoisonBFloat16 = 0x7fe5u;
// Complex outputs hold the float32 or float64 poison in both parts.
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

/// float16/bfloat16 rounding of a float32 result and of a Python float (numpy's weak scalar).
CUTUNE_HD inline float rounded_to(Float16, float x) { return to_float(float16_from_float(x)); }
CUTUNE_HD inline float rounded_to(BFloat16, float x) { return to_float(bfloat16_from_float(x)); }
CUTUNE_HD inline float scalar_in(Float16, double x) { return to_float(float16_from_double(x)); }
CUTUNE_HD inline float scalar_in(BFloat16, double x) { return to_float(bfloat16_from_double(x)); }

/// One float16 or bfloat16 element (N), each numpy operation rounded to N:
/// |e - g| <= atol + rtol * |g| as N(|N(e - g)|) <= N(N(atol) + N(N(rtol) * |g|)).
/// `poison_bits`: as check_float's (0: not poisoned).
template <class N>
CUTUNE_HD inline Outcome check_narrow(N expected, N got, std::uint16_t poison_bits, double atol, double rtol) {
  const double inf = __builtin_huge_val();
  if (poison_bits != 0 && got.bits == poison_bits) return {false, inf};
  const float e = to_float(expected), g = to_float(got);
  if (e != e && g != g) return {true, 0.0};
  if (e == g) return {true, 0.0};
  const float diff = abs_of(rounded_to(N{}, e - g));
  const float scaled = rounded_to(N{}, product_rounded(scalar_in(N{}, rtol), abs_of(g)));
  const float bound = rounded_to(N{}, scalar_in(N{}, atol) + scaled);
  const bool got_finite = (g - g) == 0.0f;
  const bool ok = got_finite && diff <= bound;
  const double error = static_cast<double>(diff);
  return {ok, error == error && error != inf ? error : inf};
}

CUTUNE_HD inline float sqrt_rn(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return __builtin_sqrtf(x);
#endif
}
CUTUNE_HD inline double sqrt_rn(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return __builtin_sqrt(x);
#endif
}
CUTUNE_HD inline float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}
CUTUNE_HD inline double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}
CUTUNE_HD inline float quotient_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
CUTUNE_HD inline double quotient_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

/// |re + i im| as numpy 2's vectorised absolute of complex64/complex128 arrays computes it
/// (loops_unary_complex: larger * sqrt(fma(ratio, ratio, 1)), ratio = smaller / larger; an
/// infinite part gives infinity, else a NaN part NaN). Not libm's hypot: on x86-64 with AVX2 or
/// AVX-512, where Kernel Tuner runs, numpy takes this path for contiguous arrays, and the
/// two differ in the last bit.
template <class T>
CUTUNE_HD inline T complex_abs(T re, T im) {
  const T inf = static_cast<T>(__builtin_huge_val());
  re = abs_of(re);
  im = abs_of(im);
  if (re == inf || im == inf) return inf;
  if (re != re || im != im) return re != re ? re : im;
  const T larger = re > im ? re : im, smaller = re > im ? im : re;
  if (larger == T(0)) return T(0);
  const T ratio = quotient_rn(smaller, larger);
  return product_rounded(sqrt_rn(fma_rn(ratio, ratio, T(1))), larger);
}

/// One complex element (T: float or double, Bits: its bit pattern type). `poison_bits`: the
/// poison of T when poisoned (an element still holding it in both parts was never written).
template <class T, class Bits>
CUTUNE_HD inline Outcome check_complex(Complex<T> expected, Complex<T> got, Bits got_re_bits, Bits got_im_bits,
                                       Bits poison_bits, double atol, double rtol) {
  const double inf = __builtin_huge_val();
  if (poison_bits != 0 && got_re_bits == poison_bits && got_im_bits == poison_bits) return {false, inf};
  const bool e_nan = expected.re != expected.re || expected.im != expected.im;
  const bool g_nan = got.re != got.re || got.im != got.im;
  if (e_nan && g_nan) return {true, 0.0};
  if (expected.re == got.re && expected.im == got.im) return {true, 0.0};
  const T diff = complex_abs(expected.re - got.re, expected.im - got.im);
  const bool got_finite = (got.re - got.re) == T(0) && (got.im - got.im) == T(0);
  const bool ok = got_finite && diff <= T(atol) + product_rounded(T(rtol), complex_abs(got.re, got.im));
  const double error = static_cast<double>(diff);
  return {ok, error == error && error != inf ? error : inf};
}

/// The test of one element of any type, and whether `got` is the poison: the single entry
/// point of the host's compare() and the device kernels. `poisoned`: the output was poisoned
/// before the run (integers have no poison that tells).
CUTUNE_HD inline Outcome check_element(float e, float g, bool poisoned, double atol, double rtol) {
  return check_float<float, std::uint32_t>(e, g, element_bits::bits_of_float(g), poisoned ? kPoisonFloat32 : 0u, atol,
                                           rtol);
}
CUTUNE_HD inline Outcome check_element(double e, double g, bool poisoned, double atol, double rtol) {
  return check_float<double, std::uint64_t>(e, g, element_bits::bits_of_double(g), poisoned ? kPoisonFloat64 : 0ull,
                                            atol, rtol);
}
CUTUNE_HD inline Outcome check_element(Float16 e, Float16 g, bool poisoned, double atol, double rtol) {
  return check_narrow(e, g, poisoned ? kPoisonFloat16 : std::uint16_t{0}, atol, rtol);
}
CUTUNE_HD inline Outcome check_element(BFloat16 e, BFloat16 g, bool poisoned, double atol, double rtol) {
  return check_narrow(e, g, poisoned ? kPoisonBFloat16 : std::uint16_t{0}, atol, rtol);
}
CUTUNE_HD inline Outcome check_element(Complex<float> e, Complex<float> g, bool poisoned, double atol, double rtol) {
  return check_complex<float, std::uint32_t>(e, g, element_bits::bits_of_float(g.re), element_bits::bits_of_float(g.im),
                                             poisoned ? kPoisonFloat32 : 0u, atol, rtol);
}
CUTUNE_HD inline Outcome check_element(Complex<double> e, Complex<double> g, bool poisoned, double atol,
                                       double rtol) {
  return check_complex<double, std::uint64_t>(e, g, element_bits::bits_of_double(g.re),
                                              element_bits::bits_of_double(g.im), poisoned ? kPoisonFloat64 : 0ull,
                                              atol, rtol);
}

CUTUNE_HD inline bool is_poison(float g) { return element_bits::bits_of_float(g) == kPoisonFloat32; }
CUTUNE_HD inline bool is_poison(double g) { return element_bits::bits_of_double(g) == kPoisonFloat64; }
CUTUNE_HD inline bool is_poison(Float16 g) { return g.bits == kPoisonFloat16; }
CUTUNE_HD inline bool is_poison(BFloat16 g) { return g.bits == kPoisonBFloat16; }
template <class T>
CUTUNE_HD inline bool is_poison(Complex<T> g) {
  return is_poison(g.re) && is_poison(g.im);
}

template <class T>
CUTUNE_HD inline Outcome check_integer(T expected, T got) {
  if (expected == got) return {true, 0.0};
  // Distance in the unsigned 64-bit domain: exact for every pair of the type's values.
  const auto e = static_cast<std::uint64_t>(expected), g = static_cast<std::uint64_t>(got);
  const std::uint64_t d = (expected > got) ? e - g : g - e;
  return {false, static_cast<double>(d)};
}

template <class T>
CUTUNE_HD inline Outcome check_element(T e, T g, bool, double, double) {
  return check_integer<T>(e, g);
}
template <class T>
CUTUNE_HD inline bool is_poison(T) {
  return false;
}

/// Whether failure `a` (error, index) is worse than failure `b`: larger error, then lower index.
CUTUNE_HD inline bool worse(double a_error, std::uint64_t a_index, double b_error, std::uint64_t b_index) {
  return a_error > b_error || (a_error == b_error && a_index < b_index);
}

}  // namespace cutune::element_check
