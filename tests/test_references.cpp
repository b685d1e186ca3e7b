// The CPU references of the built-in templates, on small hand-checked inputs. Host
// arguments are built by hand here (not through KernelProblem::load) so that these tests
// exercise the references alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cutune/templates/references.hpp"
#include "reference_fixtures.hpp"

namespace {

// vector_spec, scalar_spec, host_argument, values_of, instance_with_n
using namespace cutune::testing;

}  // namespace

TEST_CASE("reference table lists the built-in templates", "[references]") {
  using cutune::templates::find_reference;
  using cutune::templates::reference_names;
  const std::vector<std::string> names = reference_names();
  CHECK(std::find(names.begin(), names.end(), "vector_add") != names.end());
  CHECK(std::find(names.begin(), names.end(), "reduction") != names.end());
  for (const std::string& name : names) CHECK(find_reference(name) != nullptr);
  CHECK(find_reference("no_such_template") == nullptr);
  CHECK(find_reference("") == nullptr);
  CHECK(find_reference("Vector_Add") == nullptr);  // names are case-sensitive
}

TEST_CASE("vector_add reference adds element-wise", "[references]") {
  const auto fn = cutune::templates::find_reference("vector_add");
  REQUIRE(fn != nullptr);
  const ArgumentSpec c_spec = vector_spec("c", ElementType::Float32, true);
  const ArgumentSpec a_spec = vector_spec("a", ElementType::Float32);
  const ArgumentSpec b_spec = vector_spec("b", ElementType::Float32);
  const ArgumentSpec n_spec = scalar_spec("n", ElementType::Int32);

  // 5 elements: not a multiple of the vector width 4, like the tails the kernel handles.
  std::vector<HostArgument> args;
  args.push_back(host_argument<float>(c_spec, {-1.f, -1.f, -1.f, -1.f, -1.f}));
  args.push_back(host_argument<float>(a_spec, {0.f, 1.f, 2.5f, -3.f, 1e8f}));
  args.push_back(host_argument<float>(b_spec, {0.f, 2.f, 0.25f, 3.f, 1.f}));
  args.push_back(host_argument<std::int32_t>(n_spec, {5}));
  fn(instance_with_n(5), args);
  // 1e8 + 1 rounds back to 1e8 in float: the reference rounds as the GPU does.
  CHECK(values_of<float>(args[0]) == std::vector<float>{0.f, 3.f, 2.75f, 0.f, 1e8f});
  CHECK(values_of<float>(args[1]) == std::vector<float>{0.f, 1.f, 2.5f, -3.f, 1e8f});
  CHECK(values_of<std::int32_t>(args[3]) == std::vector<std::int32_t>{5});
}

TEST_CASE("vector_add reference finds arguments by name, not position", "[references]") {
  const auto fn = cutune::templates::find_reference("vector_add");
  REQUIRE(fn != nullptr);
  const ArgumentSpec c_spec = vector_spec("c", ElementType::Float32, true);
  const ArgumentSpec a_spec = vector_spec("a", ElementType::Float32);
  const ArgumentSpec b_spec = vector_spec("b", ElementType::Float32);
  std::vector<HostArgument> args;
  args.push_back(host_argument<float>(b_spec, {10.f}));
  args.push_back(host_argument<float>(a_spec, {1.f}));
  args.push_back(host_argument<float>(c_spec, {0.f}));
  fn(instance_with_n(1), args);
  CHECK(values_of<float>(args[2]) == std::vector<float>{11.f});
}

TEST_CASE("vector_add reference rejects missing or short arguments", "[references]") {
  const auto fn = cutune::templates::find_reference("vector_add");
  REQUIRE(fn != nullptr);
  const ArgumentSpec c_spec = vector_spec("c", ElementType::Float32, true);
  const ArgumentSpec a_spec = vector_spec("a", ElementType::Float32);
  const ArgumentSpec b_spec = vector_spec("b", ElementType::Float32);
  std::vector<HostArgument> missing_b;
  missing_b.push_back(host_argument<float>(c_spec, {0.f, 0.f}));
  missing_b.push_back(host_argument<float>(a_spec, {1.f, 2.f}));
  CHECK_THROWS_AS(fn(instance_with_n(2), missing_b), std::invalid_argument);

  std::vector<HostArgument> short_a;
  short_a.push_back(host_argument<float>(c_spec, {0.f, 0.f}));
  short_a.push_back(host_argument<float>(a_spec, {1.f}));
  short_a.push_back(host_argument<float>(b_spec, {1.f, 2.f}));
  CHECK_THROWS_AS(fn(instance_with_n(2), short_a), std::invalid_argument);
}

TEST_CASE("reduction reference sums into out[0]", "[references]") {
  const auto fn = cutune::templates::find_reference("reduction");
  REQUIRE(fn != nullptr);
  const ArgumentSpec out_spec = vector_spec("out", ElementType::Float32, true);
  const ArgumentSpec in_spec = vector_spec("in", ElementType::Float32);
  const ArgumentSpec ws_spec = vector_spec("workspace", ElementType::Float32);
  const ArgumentSpec counter_spec = vector_spec("counter", ElementType::UInt32);
  const ArgumentSpec n_spec = scalar_spec("n", ElementType::Int32);

  auto run = [&](const std::vector<float>& in) {
    const auto n = static_cast<std::int64_t>(in.size());
    std::vector<HostArgument> args;
    args.push_back(host_argument<float>(out_spec, {-7.f}));
    args.push_back(host_argument<float>(in_spec, in));
    args.push_back(host_argument<float>(
        ws_spec, std::vector<float>(static_cast<std::size_t>((n + 31) / 32), 0.f)));
    args.push_back(host_argument<std::uint32_t>(counter_spec, {0u}));
    args.push_back(host_argument<std::int32_t>(n_spec, {static_cast<std::int32_t>(n)}));
    fn(instance_with_n(n), args);
    CHECK(values_of<std::uint32_t>(args[3]) == std::vector<std::uint32_t>{0u});  // untouched
    return values_of<float>(args[0]).at(0);
  };

  SECTION("n = 1") { CHECK(run({0.75f}) == 0.75f); }
  SECTION("n = 31: 0 + 1 + ... + 30") {
    std::vector<float> in(31);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    CHECK(run(in) == 465.f);
  }
  SECTION("n = 1000 quarters") { CHECK(run(std::vector<float>(1000, 0.25f)) == 250.f); }
  SECTION("accumulates in double, rounds once") {
    // In float, 2^24 + 1 + 1 would stay 2^24 when added left to right; the exact sum
    // 2^24 + 2 is a float.
    CHECK(run({16777216.f, 1.f, 1.f}) == 16777218.f);
    // 1 + 1e-9 + 1e-9: even together the tiny terms stay below half a float ulp of 1.
    CHECK(run({1.f, 1e-9f, 1e-9f}) == 1.f);
  }
  SECTION("cancellation") { CHECK(run({1e8f, 3.f, -1e8f}) == 3.f); }
}

TEST_CASE("reduction reference requires its arguments", "[references]") {
  const auto fn = cutune::templates::find_reference("reduction");
  REQUIRE(fn != nullptr);
  const ArgumentSpec out_spec = vector_spec("out", ElementType::Float32, true);
  const ArgumentSpec in_spec = vector_spec("in", ElementType::Float32);
  std::vector<HostArgument> no_in;
  no_in.push_back(host_argument<float>(out_spec, {0.f}));
  CHECK_THROWS_AS(fn(instance_with_n(1), no_in), std::invalid_argument);
  std::vector<HostArgument> empty_out;
  empty_out.push_back(host_argument<float>(out_spec, {}));
  empty_out.push_back(host_argument<float>(in_spec, {1.f}));
  CHECK_THROWS_AS(fn(instance_with_n(1), empty_out), std::invalid_argument);
}

#include "cutune/model/errors.hpp"
#include "cutune/templates/catalog.hpp"
#include "test_paths.hpp"

TEST_CASE("the template catalog finds every T1 file of every template folder", "[templates]") {
  auto all = cutune::templates::builtin_templates(cutune::testing::template_dir());
  for (const char* name : {"vector_add", "reduction", "reduction_int32", "scan", "scan_int32", "matmul",
                           "transpose", "strided_access"}) {
    INFO(name);
    REQUIRE(all.count(name) == 1);
    CHECK(all.at(name).filename() == std::string(name) + ".json");
  }
  CHECK(cutune::templates::resolve_template("scan_int32", cutune::testing::template_dir()) == all.at("scan_int32"));
  CHECK_THROWS_AS(cutune::templates::resolve_template("nope", cutune::testing::template_dir()), cutune::InputError);
  CHECK_THROWS_AS(cutune::templates::resolve_template("missing.json"), cutune::InputError);
}
