#include "cutune/model/host_data.hpp"

#include "cutune/model/element_check.hpp"
#include "cutune/model/element_types.hpp"
#include "cutune/model/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>

namespace cutune {
namespace {

/// Random fills are generated in fixed chunks, each from its own generator seeded by
/// (seed, argument, chunk): the data depends on the seed only, never on the thread count,
/// and 2^28 values take tens of milliseconds on a many-core host instead of a second (a
/// tuning session's start-up waits for them).
constexpr std::int64_t kChunk = std::int64_t{1} << 16;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// SplitMix64 (Steele, Lea, Flood 2014) as a UniformRandomBitGenerator: statistically sound
/// for test data and several times cheaper per draw than std::mt19937_64 (whose draws took
/// 0.4 s of a 2^26-value fill on one core here, and a tuning's start-up waited for them).
struct SplitMix64 {
  using result_type = std::uint64_t;
  std::uint64_t state;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return splitmix64(state += 0x9e3779b97f4a7c15ULL); }
};

template <class Body>
void for_each_chunk(std::int64_t count, Body&& body) {
  const std::int64_t chunks = (count + kChunk - 1) / kChunk;
  const auto threads = static_cast<std::int64_t>(
      std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 32));
  if (chunks < 16 || threads == 1) {
    for (std::int64_t c = 0; c < chunks; ++c) body(c);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < std::min(threads, chunks); ++t)
    pool.emplace_back([&] {
      for (std::int64_t c = next++; c < chunks; c = next++) body(c);
    });
  for (auto& t : pool) t.join();
}

template <class T>
constexpr bool kIsComplex = std::is_same_v<T, Complex<float>> || std::is_same_v<T, Complex<double>>;
/// Types whose values are filled from a double (not from an integer).
template <class T>
constexpr bool kIsInexact = std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                            std::is_same_v<T, BFloat16> || kIsComplex<T>;

/// A fill or generator value as an element: floats round to nearest (float16 and bfloat16
/// as numpy and ml_dtypes round a Python float), a complex gets it as its real part.
template <class T>
T element_from(double v) {
  if constexpr (std::is_same_v<T, Float16>) return float16_from_double(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return bfloat16_from_double(v);
  else if constexpr (kIsComplex<T>) return T{static_cast<decltype(T::re)>(v), 0};
  else return static_cast<T>(v);
}

template <class T>
T element_from(const Value& v) {
  if constexpr (kIsInexact<T>) return element_from<T>(v.to_double());
  else return static_cast<T>(v.to_int());
}

/// A Random element from one draw (uniform in [0, 1) as 53 bits) scaled; a complex gets a
/// second draw for its imaginary part.
template <class T, class Rng>
T random_element(Rng& rng, double step) {
  if constexpr (kIsComplex<T>) {
    using R = decltype(T::re);
    const auto re = static_cast<R>(static_cast<double>(rng() >> 11) * step);
    return T{re, static_cast<R>(static_cast<double>(rng() >> 11) * step)};
  } else {
    return element_from<T>(static_cast<double>(rng() >> 11) * step);
  }
}

template <class T>
void fill_typed(HostArgument& arg, const Value& fill_value, FillType fill, std::uint64_t seed) {
  T* out = arg.data<T>();
  if (fill == FillType::Constant) {
    const T v = element_from<T>(fill_value);
    for_each_chunk(arg.count, [&](std::int64_t chunk) {
      const std::int64_t begin = chunk * kChunk, end = std::min(arg.count, begin + kChunk);
      std::fill(out + begin, out + end, v);
    });
    return;
  }
  for_each_chunk(arg.count, [&](std::int64_t chunk) {
    SplitMix64 rng{splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(chunk)))};
    const std::int64_t begin = chunk * kChunk, end = std::min(arg.count, begin + kChunk);
    if constexpr (kIsInexact<T>) {
      double scale = fill_value.to_double();
      if (scale == 0.0) scale = 1.0;
      // Uniform in [0, scale): the top 53 bits of one draw as a fraction, as
      // std::uniform_real_distribution computes it, without its general-case arithmetic.
      const double step = scale * 0x1.0p-53;
      for (std::int64_t i = begin; i < end; ++i) out[i] = random_element<T>(rng, step);
    } else {
      std::int64_t hi = std::max<std::int64_t>(1, fill_value.to_int());
      std::uniform_int_distribution<std::int64_t> dist(0, hi);
      for (std::int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(dist(rng));
    }
  });
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
    case ElementType::Float16: return f(Float16{});
    case ElementType::BFloat16: return f(BFloat16{});
    case ElementType::Complex64: return f(Complex<float>{});
    case ElementType::Complex128: return f(Complex<double>{});
  }
  return f(float{});
}

// Reads exactly a.bytes.size() bytes of `file` into a.bytes; the file must hold exactly that many.
void read_raw(HostArgument& a, const std::filesystem::path& file, const std::string& where) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(fmt::format("{}: cannot read '{}'", where, file.string()));
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size != a.bytes.size())
    throw InputError(fmt::format("{}: '{}' has {} bytes; '{}' needs {} ({} x {})", where, file.string(), size,
                                 a.spec->name, a.bytes.size(), a.count, element_type_name(a.spec->type)));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(a.bytes.data()), static_cast<std::streamsize>(a.bytes.size()));
  if (!in) throw InputError(fmt::format("{}: cannot read '{}'", where, file.string()));
}

// "FILE: KernelSpecification.Arguments[i].FIELD" for data d (".Variants[v]" for a variant).
std::string data_field(const KernelProblem& problem, std::size_t d, const char* field) {
  const std::size_t a = problem.argument_of_data(d);
  const std::string variant = problem.arguments()[a].variants.empty()
                                  ? ""
                                  : fmt::format(".Variants[{}]", d - problem.first_data_of(a));
  return fmt::format("{}: KernelSpecification.Arguments[{}]{}.{}", problem.json_file().string(), a, variant, field);
}

// A reference's elements in `a` (whose spec says type and size): the FillValue, or `file`.
void read_reference(const KernelProblem& problem, const ProblemInstance& instance, const ReferenceArgument& ref,
                    const std::filesystem::path& file, const std::string& where, HostArgument& a) {
  a.count = problem.argument_size(*a.spec, instance);
  a.bytes.resize(static_cast<std::size_t>(a.count) * element_size(a.spec->type));
  if (file.empty()) {
    const Value fill = problem.reference_fill(ref, instance);
    dispatch(a.spec->type, [&](auto tag) { fill_typed<decltype(tag)>(a, fill, FillType::Constant, 0); });
    return;
  }
  read_raw(a, file, where);
}

}  // namespace

std::vector<HostArgument> make_host_arguments(const KernelProblem& problem,
                                              const ProblemInstance& instance,
                                              std::uint64_t seed) {
  std::vector<HostArgument> args;
  std::uint64_t argument_index = 0;
  for (const auto& spec : problem.data()) {  // every variant of a Tunable argument too
    const std::uint64_t argument_seed = splitmix64(seed + splitmix64(++argument_index));
    HostArgument a;
    a.spec = &spec;
    a.count = problem.argument_size(spec, instance);
    a.bytes.resize(static_cast<std::size_t>(a.count) * element_size(spec.type));
    Value fill = problem.argument_fill(spec, instance);
    // Scalars are their FillValue, or their file's bytes; vectors follow their FillType.
    const FillType how = spec.is_vector || spec.fill == FillType::BinaryRaw ? spec.fill : FillType::Constant;
    if (how == FillType::BinaryRaw) {
      const std::string where = data_field(problem, argument_index - 1, "DataSource");
      read_raw(a, spec.data_source, where);
    } else if (how == FillType::Generator) {
      dispatch(spec.type, [&](auto tag) {
        using T = decltype(tag);
        T* out = a.data<T>();
        // Chunks in parallel: BAT evaluates the expression per element too, and a
        // many-million-element argument took seconds on one thread.
        // An exception must not leave a worker thread (std::terminate): the first is kept.
        std::mutex failed_mutex;
        std::exception_ptr failed;
        for_each_chunk(a.count, [&](std::int64_t chunk) {
          const std::int64_t begin = chunk * kChunk, end = std::min(a.count, begin + kChunk);
          try {
            problem.generate(spec, instance, begin, end, [&](std::int64_t i, const Value& v) {
              out[i] = element_from<T>(v);
            });
          } catch (...) {
            std::lock_guard<std::mutex> lock(failed_mutex);
            if (!failed) failed = std::current_exception();
          }
        });
        if (failed) std::rethrow_exception(failed);
      });
    } else {
      dispatch(spec.type, [&](auto tag) { fill_typed<decltype(tag)>(a, fill, how, argument_seed); });
    }
    args.push_back(std::move(a));
  }
  return args;
}

std::vector<HostArgument> reference_outputs(const KernelProblem& problem, const ProblemInstance& instance) {
  std::vector<HostArgument> out;
  if (problem.reference_arguments().empty()) return out;
  for (const auto& spec : problem.data()) out.push_back(HostArgument{&spec, 0, {}});
  for (std::size_t i = 0; i < problem.reference_arguments().size(); ++i) {
    const ReferenceArgument& ref = problem.reference_arguments()[i];
    const std::string where = fmt::format("{}: KernelSpecification.ReferenceArguments[{}]", problem.json_file().string(), i);
    if (ref.variant_sources.empty()) {
      read_reference(problem, instance, ref, ref.data_source, where + ".DataSource", out[problem.first_data_of(ref.target)]);
      continue;
    }
    // One file per variant, each in its variant's type.
    for (std::size_t v = 0; v < ref.variant_sources.size(); ++v)
      read_reference(problem, instance, ref, ref.variant_sources[v], fmt::format("{}.DataSources[{}]", where, v),
                     out[problem.first_data_of(ref.target) + v]);
  }
  return out;
}

void poison(HostArgument& arg) {
  const auto write = [&](const void* pattern, std::size_t size) {
    for (std::size_t at = 0; at + size <= arg.bytes.size(); at += size) std::memcpy(arg.bytes.data() + at, pattern, size);
  };
  switch (arg.spec->type) {
    case ElementType::Float32: case ElementType::Complex64: write(&element_check::kPoisonFloat32, 4); break;
    case ElementType::Float64: case ElementType::Complex128: write(&element_check::kPoisonFloat64, 8); break;
    case ElementType::Float16: write(&element_check::kPoisonFloat16, 2); break;
    case ElementType::BFloat16: write(&element_check::kPoisonBFloat16, 2); break;
    default: std::memset(arg.bytes.data(), element_check::kPoisonByte, arg.bytes.size());
  }
}

bool holds_poison(ElementType type, const void* element) {
  return dispatch(type, [&](auto tag) {
    decltype(tag) g;
    std::memcpy(&g, element, sizeof g);
    return element_check::is_poison(g);
  });
}

namespace {

/// An element as numpy prints it: float16/bfloat16 by their value, complex as (re+imj).
template <class T>
std::string element_text(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return fmt::format("{}", to_float(v));
  else if constexpr (kIsComplex<T>) return fmt::format("({}{:+}j)", v.re, v.im);
  else if constexpr (std::is_floating_point_v<T>) return fmt::format("{}", v);
  else return fmt::format("{}", +v);
}

}  // namespace

std::string mismatch_message(const ArgumentSpec& spec, std::uint64_t index, const void* expected_element,
                             const void* got_element, bool poison_seen, std::uint64_t failures,
                             std::int64_t count) {
  return dispatch(spec.type, [&](auto tag) {
    using T = decltype(tag);
    T e, g;
    std::memcpy(&e, expected_element, sizeof(T));
    std::memcpy(&g, got_element, sizeof(T));
    const std::string of = fmt::format("{} of {} elements differ", failures, count);
    if (kIsInexact<T> && poison_seen)
      return fmt::format("{}[{}] was never written (it still holds the poison written before the run), expected "
                         "{} ({})", spec.name, index, element_text(e), of);
    return fmt::format("{}[{}] = {}, expected {} ({})", spec.name, index, element_text(g), element_text(e), of);
  });
}

VerifyResult compare(const HostArgument& expected, const HostArgument& got,
                     const Tolerance& tolerance, bool poisoned) {
  VerifyResult r;
  if (expected.count != got.count) {
    r.ok = false;
    r.message = fmt::format("{}: {} elements, expected {}", expected.spec->name, got.count,
                            expected.count);
    return r;
  }
  double worst_error = -1.0;
  bool worst_poison = false;
  dispatch(expected.spec->type, [&](auto tag) {
    using T = decltype(tag);
    const T* e = expected.data<T>();
    const T* g = got.data<T>();
    for (std::int64_t i = 0; i < expected.count; ++i) {
      const element_check::Outcome o =
          element_check::check_element(e[i], g[i], poisoned, tolerance.absolute, tolerance.relative);
      const bool poison_seen = poisoned && element_check::is_poison(g[i]);
      if (o.error != std::numeric_limits<double>::infinity()) r.max_error = std::max(r.max_error, o.error);
      if (o.ok) continue;
      ++r.failures;
      const auto index = static_cast<std::uint64_t>(i);
      if (worst_error < 0 || element_check::worse(o.error, index, worst_error, r.worst_index)) {
        worst_error = o.error;
        r.worst_index = index;
        worst_poison = poison_seen;
      }
    }
  });
  if (r.failures) {
    r.ok = false;
    const std::size_t size = element_size(expected.spec->type);
    r.message = mismatch_message(*expected.spec, r.worst_index, expected.bytes.data() + r.worst_index * size,
                                 got.bytes.data() + r.worst_index * size, worst_poison, r.failures, expected.count);
  }
  return r;
}

}  // namespace cutune
