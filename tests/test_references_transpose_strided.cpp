// The CPU references of the transpose and strided_access templates, on small hand-checked
// inputs built by hand (not through KernelProblem::load), so that these tests exercise the
// references alone.
#include <catch2/catch.hpp>

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

cutune::ProblemInstance matrix_instance(std::int64_t rows, std::int64_t cols) {
  cutune::ProblemInstance instance;
  instance.variables["rows"] = rows;
  instance.variables["cols"] = cols;
  instance.problem_size = {cols, rows};
  return instance;
}

struct TransposeSpecs {
  ArgumentSpec out = vector_spec("out", ElementType::Float32, true);
  ArgumentSpec in = vector_spec("in", ElementType::Float32);
  ArgumentSpec rows = scalar_spec("rows", ElementType::Int32);
  ArgumentSpec cols = scalar_spec("cols", ElementType::Int32);
};

std::vector<HostArgument> transpose_args(const TransposeSpecs& s, const std::vector<float>& in,
                                         std::int32_t rows, std::int32_t cols) {
  std::vector<HostArgument> args;
  args.push_back(host_argument<float>(s.out, std::vector<float>(in.size(), -1.f)));
  args.push_back(host_argument<float>(s.in, in));
  args.push_back(host_argument<std::int32_t>(s.rows, {rows}));
  args.push_back(host_argument<std::int32_t>(s.cols, {cols}));
  return args;
}

}  // namespace

TEST_CASE("transpose reference transposes a 2 x 3 matrix", "[references]") {
  const auto fn = cutune::templates::find_reference("transpose");
  REQUIRE(fn != nullptr);
  const TransposeSpecs s;
  // in (2 x 3):  1 2 3      out (3 x 2):  1 4
  //              4 5 6                    2 5
  //                                       3 6
  auto args = transpose_args(s, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, 2, 3);
  fn(matrix_instance(2, 3), args);
  CHECK(values_of<float>(args[0]) == std::vector<float>{1.f, 4.f, 2.f, 5.f, 3.f, 6.f});
  CHECK(values_of<float>(args[1]) == std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
}

TEST_CASE("transpose reference handles 1 x 1, a row and a column", "[references]") {
  const auto fn = cutune::templates::find_reference("transpose");
  REQUIRE(fn != nullptr);
  const TransposeSpecs s;
  auto one = transpose_args(s, {7.5f}, 1, 1);
  fn(matrix_instance(1, 1), one);
  CHECK(values_of<float>(one[0]) == std::vector<float>{7.5f});
  // A 1 x 4 row becomes a 4 x 1 column: the same memory order.
  auto row = transpose_args(s, {1.f, 2.f, 3.f, 4.f}, 1, 4);
  fn(matrix_instance(1, 4), row);
  CHECK(values_of<float>(row[0]) == std::vector<float>{1.f, 2.f, 3.f, 4.f});
  auto col = transpose_args(s, {1.f, 2.f, 3.f, 4.f}, 4, 1);
  fn(matrix_instance(4, 1), col);
  CHECK(values_of<float>(col[0]) == std::vector<float>{1.f, 2.f, 3.f, 4.f});
}

TEST_CASE("transpose reference is exact past its cache blocking (31 x 17, 70 x 129)", "[references]") {
  const auto fn = cutune::templates::find_reference("transpose");
  REQUIRE(fn != nullptr);
  const TransposeSpecs s;
  for (const auto& [rows, cols] : std::vector<std::pair<std::int32_t, std::int32_t>>{{31, 17}, {70, 129}}) {
    std::vector<float> in(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);  // value = source index
    auto args = transpose_args(s, in, rows, cols);
    fn(matrix_instance(rows, cols), args);
    const auto out = values_of<float>(args[0]);
    bool all = true;
    for (std::int32_t c = 0; c < cols; ++c)
      for (std::int32_t r = 0; r < rows; ++r)
        all = all && out[static_cast<std::size_t>(c * rows + r)] == static_cast<float>(r * cols + c);
    CHECK(all);
    // Transposing twice gives the input back.
    auto back = transpose_args(s, out, cols, rows);
    fn(matrix_instance(cols, rows), back);
    CHECK(values_of<float>(back[0]) == in);
  }
}

TEST_CASE("transpose reference copies bit patterns", "[references]") {
  const auto fn = cutune::templates::find_reference("transpose");
  REQUIRE(fn != nullptr);
  const TransposeSpecs s;
  const std::vector<std::uint32_t> bits = {0x7fa00001u, 0x80000000u, 0x00000001u, 0xff800000u};
  std::vector<float> in(bits.size());
  std::memcpy(in.data(), bits.data(), bits.size() * sizeof(float));
  auto args = transpose_args(s, in, 2, 2);
  fn(matrix_instance(2, 2), args);
  CHECK(values_of<std::uint32_t>(args[0]) ==
        std::vector<std::uint32_t>{0x7fa00001u, 0x00000001u, 0x80000000u, 0xff800000u});
}

TEST_CASE("transpose reference rejects missing variables or short arguments", "[references]") {
  const auto fn = cutune::templates::find_reference("transpose");
  REQUIRE(fn != nullptr);
  const TransposeSpecs s;
  auto args = transpose_args(s, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, 2, 3);
  cutune::ProblemInstance no_cols;
  no_cols.variables["rows"] = 2;
  CHECK_THROWS_AS(fn(no_cols, args), std::invalid_argument);
  CHECK_THROWS_AS(fn(matrix_instance(3, 3), args), std::invalid_argument);  // 9 > 6 elements
  std::vector<HostArgument> no_in;
  no_in.push_back(host_argument<float>(s.out, {0.f, 0.f}));
  CHECK_THROWS_AS(fn(matrix_instance(1, 2), no_in), std::invalid_argument);
}

TEST_CASE("strided_access reference squares element-wise", "[references]") {
  const auto fn = cutune::templates::find_reference("strided_access");
  REQUIRE(fn != nullptr);
  const ArgumentSpec out_spec = vector_spec("out", ElementType::Float32, true);
  const ArgumentSpec in_spec = vector_spec("in", ElementType::Float32);
  const ArgumentSpec n_spec = scalar_spec("n", ElementType::Int32);
  std::vector<HostArgument> args;
  args.push_back(host_argument<float>(out_spec, {-1.f, -1.f, -1.f, -1.f, -1.f}));
  args.push_back(host_argument<float>(in_spec, {0.f, 0.5f, 3.f, -2.f, 1.f + 0x1p-12f}));
  args.push_back(host_argument<std::int32_t>(n_spec, {5}));
  fn(instance_with_n(5), args);
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (tie, to even) to 1 + 2^-11: one float rounding.
  CHECK(values_of<float>(args[0]) == std::vector<float>{0.f, 0.25f, 9.f, 4.f, 1.f + 0x1p-11f});
  CHECK(values_of<float>(args[1]) == std::vector<float>{0.f, 0.5f, 3.f, -2.f, 1.f + 0x1p-12f});
}

TEST_CASE("strided_access reference finds arguments by name and rejects short ones", "[references]") {
  const auto fn = cutune::templates::find_reference("strided_access");
  REQUIRE(fn != nullptr);
  const ArgumentSpec out_spec = vector_spec("out", ElementType::Float32, true);
  const ArgumentSpec in_spec = vector_spec("in", ElementType::Float32);
  std::vector<HostArgument> args;
  args.push_back(host_argument<float>(in_spec, {3.f}));
  args.push_back(host_argument<float>(out_spec, {0.f}));
  fn(instance_with_n(1), args);
  CHECK(values_of<float>(args[1]) == std::vector<float>{9.f});

  std::vector<HostArgument> short_in;
  short_in.push_back(host_argument<float>(out_spec, {0.f, 0.f}));
  short_in.push_back(host_argument<float>(in_spec, {1.f}));
  CHECK_THROWS_AS(fn(instance_with_n(2), short_in), std::invalid_argument);
  std::vector<HostArgument> no_in;
  no_in.push_back(host_argument<float>(out_spec, {0.f}));
  CHECK_THROWS_AS(fn(instance_with_n(1), no_in), std::invalid_argument);
}
