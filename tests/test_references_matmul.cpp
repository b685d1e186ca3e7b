// The matmul CPU reference (kernel_templates/matmul/reference.cpp) on small hand-checked
// inputs and against a naive triple loop at odd sizes that cross its 32 x 256 x 128 blocks.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cutune/templates/references.hpp"

namespace {

using cutune::ArgumentSpec;
using cutune::ElementType;
using cutune::HostArgument;

struct MatmulArgs {
  ArgumentSpec c_spec, a_spec, b_spec;
  std::vector<HostArgument> args;
  cutune::ProblemInstance instance;

  MatmulArgs(std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<float>& a,
             const std::vector<float>& b) {
    c_spec.name = "C";
    a_spec.name = "A";
    b_spec.name = "B";
    for (ArgumentSpec* s : {&c_spec, &a_spec, &b_spec}) {
      s->type = ElementType::Float32;
      s->is_vector = true;
    }
    c_spec.output = true;
    args.push_back(make(c_spec, std::vector<float>(static_cast<std::size_t>(m * n), -1.0f)));
    args.push_back(make(a_spec, a));
    args.push_back(make(b_spec, b));
    instance.variables["m"] = m;
    instance.variables["n"] = n;
    instance.variables["k"] = k;
    instance.problem_size = {n, m};
  }

  static HostArgument make(const ArgumentSpec& spec, const std::vector<float>& v) {
    HostArgument arg;
    arg.spec = &spec;
    arg.count = static_cast<std::int64_t>(v.size());
    arg.bytes.resize(v.size() * sizeof(float));
    if (!v.empty()) std::memcpy(arg.bytes.data(), v.data(), arg.bytes.size());
    return arg;
  }

  std::vector<float> c() const {
    std::vector<float> v(static_cast<std::size_t>(args[0].count));
    std::memcpy(v.data(), args[0].bytes.data(), v.size() * sizeof(float));
    return v;
  }
};

std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("matmul reference multiplies small matrices exactly", "[references]") {
  const auto fn = cutune::templates::find_reference("matmul");
  REQUIRE(fn != nullptr);

  SECTION("1 x 1 x 1") {
    MatmulArgs t(1, 1, 1, {3.0f}, {0.5f});
    fn(t.instance, t.args);
    CHECK(t.c() == std::vector<float>{1.5f});
  }
  SECTION("2 x 3 times 3 x 2, row-major") {
    // A = [1 2 3; 4 5 6], B = [7 8; 9 10; 11 12] -> C = [58 64; 139 154]
    MatmulArgs t(2, 2, 3, {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12});
    fn(t.instance, t.args);
    CHECK(t.c() == std::vector<float>{58, 64, 139, 154});
  }
  SECTION("non-square: 3 x 1 times 1 x 4 (outer product)") {
    MatmulArgs t(3, 4, 1, {1, 2, 3}, {1, 10, 100, 1000});
    fn(t.instance, t.args);
    CHECK(t.c() == std::vector<float>{1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000});
  }
  SECTION("sums in double: 1 + 2^-30 - 1 survives where float32 would lose it") {
    const float tiny = std::ldexp(1.0f, -30);
    MatmulArgs t(1, 1, 3, {1.0f, tiny, -1.0f}, {1.0f, 1.0f, 1.0f});
    fn(t.instance, t.args);
    CHECK(t.c() == std::vector<float>{tiny});
  }
}

TEST_CASE("matmul reference matches a naive loop across its block edges", "[references]") {
  const auto fn = cutune::templates::find_reference("matmul");
  REQUIRE(fn != nullptr);
  // 31 x 17 x 5 (the odd size), then sizes crossing the 32-row, 256-column and
  // 128-deep blocks and the 4-row groups; the largest is big enough to use several threads.
  const std::int64_t shapes[][3] = {{31, 17, 5}, {33, 257, 129}, {70, 300, 260}, {131, 515, 385}};
  for (const auto& shape : shapes) {
    const std::int64_t m = shape[0], n = shape[1], k = shape[2];
    const std::vector<float> a = random_floats(static_cast<std::size_t>(m * k), 1);
    const std::vector<float> b = random_floats(static_cast<std::size_t>(k * n), 2);
    MatmulArgs t(m, n, k, a, b);
    fn(t.instance, t.args);
    const std::vector<float> c = t.c();
    std::int64_t mismatches = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::int64_t l = 0; l < k; ++l)
          sum += static_cast<double>(a[static_cast<std::size_t>(i * k + l)]) *
                 static_cast<double>(b[static_cast<std::size_t>(l * n + j)]);
        // Both sum exact products in double, in different orders: equal after the
        // rounding to float but for rare ties at the last place.
        const float expected = static_cast<float>(sum);
        const float got = c[static_cast<std::size_t>(i * n + j)];
        if (std::fabs(got - expected) > 1e-6f * std::fabs(expected)) ++mismatches;
      }
    INFO("m=" << m << " n=" << n << " k=" << k);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("matmul reference rejects a too-small output", "[references]") {
  const auto fn = cutune::templates::find_reference("matmul");
  REQUIRE(fn != nullptr);
  MatmulArgs t(2, 2, 1, {1, 2}, {3, 4});
  t.instance.variables["m"] = 3;  // C and A now hold fewer elements than m*n, m*k
  CHECK_THROWS_AS(fn(t.instance, t.args), std::invalid_argument);
}
