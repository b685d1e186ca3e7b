#include "cutune/model/host_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

namespace cutune {
namespace {

template <class T>
void fill_typed(HostArgument& arg, const Value& fill_value, FillType fill, std::mt19937_64& rng) {
  T* out = arg.data<T>();
  if (fill == FillType::Constant) {
    T v = std::is_floating_point_v<T> ? static_cast<T>(fill_value.to_double())
                                      : static_cast<T>(fill_value.to_int());
    std::fill(out, out + arg.count, v);
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    double scale = fill_value.to_double();
    if (scale == 0.0) scale = 1.0;
    std::uniform_real_distribution<double> dist(0.0, scale);
    for (std::int64_t i = 0; i < arg.count; ++i) out[i] = static_cast<T>(dist(rng));
  } else {
    std::int64_t hi = std::max<std::int64_t>(1, fill_value.to_int());
    std::uniform_int_distribution<std::int64_t> dist(0, hi);
    for (std::int64_t i = 0; i < arg.count; ++i) out[i] = static_cast<T>(dist(rng));
  }
}

template <class F>
decltype(auto) dispatch(ElementType t, F&& f) {
  switch (t) {
    case ElementType::Int8: return f(std::int8_t{});
    case ElementType::UInt8: return f(std::uint8_t{});
    case ElementType::Int16: return f(std::int16_t{});
    case ElementType::UInt16: return f(std::uint16_t{});
    case ElementType::Int32: return f(std::int32_t{});
    case ElementType::UInt32: return f(std::uint32_t{});
    case ElementType::Int64: return f(std::int64_t{});
    case ElementType::UInt64: return f(std::uint64_t{});
    case ElementType::Float32: return f(float{});
    case ElementType::Float64: return f(double{});
  }
  return f(float{});
}

}  // namespace

std::vector<HostArgument> make_host_arguments(const KernelProblem& problem,
                                              const ProblemInstance& instance,
                                              std::uint64_t seed) {
  std::vector<HostArgument> args;
  std::mt19937_64 rng(seed);
  for (const auto& spec : problem.arguments()) {
    HostArgument a;
    a.spec = &spec;
    a.count = problem.argument_size(spec, instance);
    a.bytes.resize(static_cast<std::size_t>(a.count) * element_size(spec.type));
    Value fill = problem.argument_fill(spec, instance);
    // Scalars are always their FillValue; vectors follow their FillType.
    FillType how = spec.is_vector ? spec.fill : FillType::Constant;
    dispatch(spec.type, [&](auto tag) { fill_typed<decltype(tag)>(a, fill, how, rng); });
    args.push_back(std::move(a));
  }
  return args;
}

void poison(HostArgument& arg) {
  if (arg.spec->type == ElementType::Float32) {
    std::fill(arg.data<float>(), arg.data<float>() + arg.count, std::nanf(""));
  } else if (arg.spec->type == ElementType::Float64) {
    std::fill(arg.data<double>(), arg.data<double>() + arg.count, std::nan(""));
  } else {
    std::memset(arg.bytes.data(), 0xA5, arg.bytes.size());
  }
}

VerifyResult compare(const HostArgument& expected, const HostArgument& got,
                     const Tolerance& tolerance) {
  VerifyResult r;
  if (expected.count != got.count) {
    r.ok = false;
    r.message = fmt::format("{}: {} elements, expected {}", expected.spec->name, got.count,
                            expected.count);
    return r;
  }
  dispatch(expected.spec->type, [&](auto tag) {
    using T = decltype(tag);
    const T* e = expected.data<T>();
    const T* g = got.data<T>();
    for (std::int64_t i = 0; i < expected.count; ++i) {
      bool good;
      double err = 0.0;
      if constexpr (std::is_floating_point_v<T>) {
        err = std::fabs(static_cast<double>(g[i]) - static_cast<double>(e[i]));
        // Written as a negation so that NaN (unwritten, poisoned output) never passes.
        good = err <= tolerance.absolute + tolerance.relative * std::fabs(static_cast<double>(e[i]));
        if (!std::isnan(err)) r.max_error = std::max(r.max_error, err);
      } else {
        good = e[i] == g[i];
        if (!good) err = 1.0;
      }
      if (!good && r.ok) {
        r.ok = false;
        r.message = fmt::format("{}[{}] = {}, expected {}", expected.spec->name, i,
                                static_cast<double>(g[i]), static_cast<double>(e[i]));
      }
    }
  });
  return r;
}

}  // namespace cutune
