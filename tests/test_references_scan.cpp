// CPU references of kernel_templates/scan (scan, scan_int32) on small hand-checked inputs.
// Host arguments are built by hand, as in test_references.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cutune/templates/references.hpp"
#include "reference_fixtures.hpp"

namespace {

// vector_spec, scalar_spec, host_argument, values_of, instance_with_n
using namespace cutune::testing;

cutune::ProblemInstance instance_of(std::int64_t n, std::int64_t inclusive) {
  cutune::ProblemInstance instance;
  instance.variables["n"] = n;
  instance.variables["inclusive"] = inclusive;
  instance.problem_size = {n};
  return instance;
}

/// Runs the named reference with the template's argument list (out, in, workspace, counter,
/// n, inclusive); returns out. The workspace and counter must come back untouched.
template <class T>
std::vector<T> run_scan(const char* name, ElementType type, const std::vector<T>& in, int inclusive,
                        bool set_variable = true) {
  const auto fn = cutune::templates::find_reference(name);
  REQUIRE(fn != nullptr);
  const ArgumentSpec out_spec = vector_spec("out", type, true);
  const ArgumentSpec in_spec = vector_spec("in", type);
  const ArgumentSpec ws_spec = vector_spec("workspace", ElementType::UInt64);
  const ArgumentSpec counter_spec = vector_spec("counter", ElementType::UInt64);
  const ArgumentSpec n_spec = scalar_spec("n", ElementType::Int32);
  const ArgumentSpec inclusive_spec = scalar_spec("inclusive", ElementType::Int32);
  const auto n = static_cast<std::int64_t>(in.size());
  std::vector<HostArgument> args;
  std::vector<T> poisoned(in.size());
  std::memset(poisoned.data(), 0xA5, poisoned.size() * sizeof(T));
  args.push_back(host_argument<T>(out_spec, poisoned));
  args.push_back(host_argument<T>(in_spec, in));
  args.push_back(host_argument<std::uint64_t>(ws_spec, std::vector<std::uint64_t>(4, 0u)));
  args.push_back(host_argument<std::uint64_t>(counter_spec, {0u}));
  args.push_back(host_argument<std::int32_t>(n_spec, {static_cast<std::int32_t>(n)}));
  args.push_back(host_argument<std::int32_t>(inclusive_spec, {inclusive}));
  cutune::ProblemInstance instance = instance_of(n, inclusive);
  if (!set_variable) instance.variables.erase("inclusive");
  fn(instance, args);
  CHECK(values_of<T>(args[1]) == in);
  CHECK(values_of<std::uint64_t>(args[2]) == std::vector<std::uint64_t>(4, 0u));
  CHECK(values_of<std::uint64_t>(args[3]) == std::vector<std::uint64_t>{0u});
  return values_of<T>(args[0]);
}

}  // namespace

TEST_CASE("scan references are registered", "[references][scan]") {
  CHECK(cutune::templates::find_reference("scan") != nullptr);
  CHECK(cutune::templates::find_reference("scan_int32") != nullptr);
}

TEST_CASE("scan reference: exclusive and inclusive float prefix sums", "[references][scan]") {
  const char* name = "scan";
  const auto f32 = ElementType::Float32;
  SECTION("the seed's example") {
    const std::vector<float> in{3.f, 1.f, 7.f, 0.f, 4.f, 1.f, 6.f, 3.f};
    CHECK(run_scan<float>(name, f32, in, 0) == std::vector<float>{0.f, 3.f, 4.f, 11.f, 11.f, 15.f, 16.f, 22.f});
    CHECK(run_scan<float>(name, f32, in, 1) == std::vector<float>{3.f, 4.f, 11.f, 11.f, 15.f, 16.f, 22.f, 25.f});
  }
  SECTION("n = 1") {
    CHECK(run_scan<float>(name, f32, {0.75f}, 0) == std::vector<float>{0.f});
    CHECK(run_scan<float>(name, f32, {0.75f}, 1) == std::vector<float>{0.75f});
  }
  SECTION("n = 31: prefixes of 0, 1, ..., 30 are triangular numbers") {
    std::vector<float> in(31);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    const auto ex = run_scan<float>(name, f32, in, 0);
    const auto inc = run_scan<float>(name, f32, in, 1);
    for (std::size_t i = 0; i < in.size(); ++i) {
      CHECK(ex[i] == static_cast<float>(i * (i - (i > 0 ? 1 : 0)) / 2));
      CHECK(inc[i] == static_cast<float>(i * (i + 1) / 2));
    }
  }
  SECTION("n = 1000 quarters") {
    const auto ex = run_scan<float>(name, f32, std::vector<float>(1000, 0.25f), 0);
    const auto inc = run_scan<float>(name, f32, std::vector<float>(1000, 0.25f), 1);
    CHECK(ex.front() == 0.f);
    CHECK(ex[999] == 249.75f);
    CHECK(inc[999] == 250.f);
    for (std::size_t i = 0; i < 1000; ++i) CHECK(inc[i] == 0.25f * static_cast<float>(i + 1));
  }
  SECTION("accumulates in double, rounds each prefix once") {
    // In float, 2^24 + 1 stays 2^24 and so would 2^24 + 1 + 1; the double prefix 2^24 + 2
    // is a float.
    CHECK(run_scan<float>(name, f32, {16777216.f, 1.f, 1.f}, 1) ==
          std::vector<float>{16777216.f, 16777216.f, 16777218.f});
  }
  SECTION("inclusive defaults to 0 when the instance does not name it") {
    CHECK(run_scan<float>(name, f32, {1.f, 2.f}, 0, false) == std::vector<float>{0.f, 1.f});
  }
}

TEST_CASE("scan_int32 reference: exact, wrapping like the GPU", "[references][scan]") {
  const char* name = "scan_int32";
  const auto i32 = ElementType::Int32;
  SECTION("the seed's example") {
    const std::vector<std::int32_t> in{3, 1, 7, 0, 4, 1, 6, 3};
    CHECK(run_scan<std::int32_t>(name, i32, in, 0) == std::vector<std::int32_t>{0, 3, 4, 11, 11, 15, 16, 22});
    CHECK(run_scan<std::int32_t>(name, i32, in, 1) == std::vector<std::int32_t>{3, 4, 11, 11, 15, 16, 22, 25});
  }
  SECTION("n = 1") {
    CHECK(run_scan<std::int32_t>(name, i32, {42}, 0) == std::vector<std::int32_t>{0});
    CHECK(run_scan<std::int32_t>(name, i32, {42}, 1) == std::vector<std::int32_t>{42});
  }
  SECTION("n = 1000 ones") {
    const auto ex = run_scan<std::int32_t>(name, i32, std::vector<std::int32_t>(1000, 1), 0);
    const auto inc = run_scan<std::int32_t>(name, i32, std::vector<std::int32_t>(1000, 1), 1);
    for (std::size_t i = 0; i < 1000; ++i) {
      CHECK(ex[i] == static_cast<std::int32_t>(i));
      CHECK(inc[i] == static_cast<std::int32_t>(i + 1));
    }
  }
  SECTION("wraps around two's complement") {
    constexpr std::int32_t max = std::numeric_limits<std::int32_t>::max();
    constexpr std::int32_t min = std::numeric_limits<std::int32_t>::min();
    CHECK(run_scan<std::int32_t>(name, i32, {max, 1, 1}, 1) == std::vector<std::int32_t>{max, min, min + 1});
    CHECK(run_scan<std::int32_t>(name, i32, {max, 1, 1}, 0) == std::vector<std::int32_t>{0, max, min});
    CHECK(run_scan<std::int32_t>(name, i32, {-5, 3, 2}, 1) == std::vector<std::int32_t>{-5, -2, 0});
  }
}

TEST_CASE("scan references reject missing or short arguments", "[references][scan]") {
  for (const char* name : {"scan", "scan_int32"}) {
    const auto fn = cutune::templates::find_reference(name);
    REQUIRE(fn != nullptr);
    const ArgumentSpec out_spec = vector_spec("out", ElementType::Float32, true);
    const ArgumentSpec in_spec = vector_spec("in", ElementType::Float32);
    std::vector<HostArgument> no_in;
    no_in.push_back(host_argument<float>(out_spec, {0.f}));
    CHECK_THROWS_AS(fn(instance_of(1, 0), no_in), std::invalid_argument);
    std::vector<HostArgument> short_in;
    short_in.push_back(host_argument<float>(out_spec, {0.f, 0.f}));
    short_in.push_back(host_argument<float>(in_spec, {1.f}));
    CHECK_THROWS_AS(fn(instance_of(2, 0), short_in), std::invalid_argument);
  }
}
