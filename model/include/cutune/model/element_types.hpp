#pragma once
// Storage types of the kernel-argument elements that C++ has no type for: IEEE binary16
// (numpy's float16, CUDA's __half), bfloat16 (ml_dtypes' bfloat16, CUDA's __nv_bfloat16) and
// complex numbers (numpy's complex64/complex128, CUDA's float2/double2 and cuComplex), with
// the conversions that numpy and ml_dtypes use. Self-contained, like element_check.hpp: nvcc
// compiles it into the device comparison, so it uses no library function.
#include <cstdint>

#if defined(__CUDACC__)
#define CUTUNE_HD __host__ __device__
#else
#define CUTUNE_HD
#endif

namespace cutune {

/// IEEE binary16, as its bits (1 sign, 5 exponent, 10 fraction).
struct Float16 {
  std::uint16_t bits;
};
/// bfloat16, as its bits: the upper half of a float32 (1 sign, 8 exponent, 7 fraction).
struct BFloat16 {
  std::uint16_t bits;
};
/// A complex number as numpy and CUDA store it: the real part, then the imaginary part.
template <class T>
struct Complex {
  T re;
  T im;
};
static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);
static_assert(sizeof(Complex<float>) == 8 && sizeof(Complex<double>) == 16);

namespace element_bits {

CUTUNE_HD inline float float_of_bits(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  __builtin_memcpy(&f, &b, 4);
  return f;
#endif
}

CUTUNE_HD inline std::uint32_t bits_of_float(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t b;
  __builtin_memcpy(&b, &f, 4);
  return b;
#endif
}

CUTUNE_HD inline std::uint64_t bits_of_double(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t b;
  __builtin_memcpy(&b, &d, 8);
  return b;
#endif
}

}  // namespace element_bits

/// Exact: every binary16 value is a float32 value (NaN payloads kept, as numpy does).
CUTUNE_HD inline float to_float(Float16 h) {
  const std::uint32_t sign = (std::uint32_t{h.bits} & 0x8000u) << 16;
  const std::uint32_t exponent = (h.bits >> 10) & 0x1fu;
  std::uint32_t fraction = h.bits & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (fraction << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (fraction << 13);
  } else if (fraction == 0) {
    bits = sign;
  } else {  // subnormal: fraction * 2^-24, normalised for float32
    std::uint32_t shifts = 0;
    while ((fraction & 0x400u) == 0) {
      fraction <<= 1;
      ++shifts;
    }
    bits = sign | ((113u - shifts) << 23) | ((fraction & 0x3ffu) << 13);
  }
  return element_bits::float_of_bits(bits);
}

CUTUNE_HD inline float to_float(BFloat16 b) { return element_bits::float_of_bits(std::uint32_t{b.bits} << 16); }

/// Round to nearest, ties to even, straight from the double (numpy's npy_double_to_half: no
/// intermediate float32, whose second rounding would differ next to a tie). Overflow gives
/// infinity; a NaN stays a NaN with the top of its payload.
CUTUNE_HD inline Float16 float16_from_double(double d) {
  const std::uint64_t b = element_bits::bits_of_double(d);
  const auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000u);
  const std::uint64_t magnitude = b & 0x7fffffffffffffffull;
  if (magnitude >= 0x7ff0000000000000ull) {
    if (magnitude == 0x7ff0000000000000ull) return {static_cast<std::uint16_t>(sign | 0x7c00u)};
    auto nan = static_cast<std::uint16_t>(0x7c00u | ((magnitude >> 42) & 0x3ffu));
    if (nan == 0x7c00u) ++nan;
    return {static_cast<std::uint16_t>(sign | nan)};
  }
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  if (exponent < -25) return {sign};  // below half the smallest subnormal (2^-24): zero
  const std::uint64_t significand = (magnitude & 0xfffffffffffffull) | (1ull << 52);
  // Normal results keep 11 significant bits; subnormal ones count units of 2^-24.
  const int shift = exponent >= -14 ? 42 : 42 + (-14 - exponent);
  std::uint64_t rounded = significand >> shift;
  const std::uint64_t rest = significand & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (rounded & 1u))) ++rounded;
  // rounded includes the implicit bit (2^10) for normals: the exponent field adds on, and a
  // carry out of the fraction moves to the next binade (or to infinity) by itself.
  std::uint64_t bits = exponent >= -14 ? (static_cast<std::uint64_t>(exponent + 14) << 10) + rounded : rounded;
  if (bits >= 0x7c00u) bits = 0x7c00u;
  return {static_cast<std::uint16_t>(sign | bits)};
}

CUTUNE_HD inline Float16 float16_from_float(float f) { return float16_from_double(static_cast<double>(f)); }

/// Round to nearest, ties to even (ml_dtypes' float32 -> bfloat16); a NaN becomes the quiet NaN
/// of its sign, as ml_dtypes writes it.
CUTUNE_HD inline BFloat16 bfloat16_from_float(float f) {
  const std::uint32_t b = element_bits::bits_of_float(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((b & 0x80000000u) ? 0xffc0u : 0x7fc0u)};
  const std::uint32_t lsb = (b >> 16) & 1u;
  return {static_cast<std::uint16_t>((b + 0x7fffu + lsb) >> 16)};
}

/// Through float32, as ml_dtypes converts a Python float (numpy's weak scalars: the atol and
/// rtol of allclose): 1 + 2^-8 + 2^-40 becomes 1.0 there, not the nearer 1.0078125.
CUTUNE_HD inline BFloat16 bfloat16_from_double(double d) { return bfloat16_from_float(static_cast<float>(d)); }

}  // namespace cutune
