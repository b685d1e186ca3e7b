// Arguments with Variants (Kernel Tuner's Tunable / TunablePrecision): every variant its own
// element type, size and data file; cutune.Configurations says per configuration which one
// is passed. Read as data, bad files refused naming the field.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using cutune::Config;
using cutune::ElementType;
using cutune::InputError;
using cutune::KernelProblem;
using cutune::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

const std::string kKernel = "extern \"C\" __global__ void k(float_type* x, int n) { x[0] = block_size_x; }\n";

// float_type in {half, float, double} x block_size_x in {32, 64}; x has a variant per precision.
std::string t1(const std::string& variants, const std::string& table) {
  return R"({
  "General": {"BenchmarkName": "tunable", "FormatVersion": 1},
  "ConfigurationSpace": {"TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": [32, 64]},
      {"Name": "float_type", "Type": "string", "Values": ["half", "float", "double"]}], "Conditions": []},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [4],
    "Arguments": [
      {"Name": "x", "MemoryType": "Vector", "AccessType": "ReadWrite", "Variants": )" + variants + R"(},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 4}]},
  "cutune": {"Configurations": )" + table + "}}";
}

const std::string kVariants = R"([
  {"Key": "half", "Type": "half", "Size": 4, "FillType": "BinaryRaw", "DataSource": "x.half.bin"},
  {"Key": "float", "Type": "float", "Size": 4, "FillType": "BinaryRaw", "DataSource": "x.float.bin"},
  {"Key": "double", "Type": "double", "Size": 4, "FillType": "BinaryRaw", "DataSource": "x.double.bin"}])";

std::string words(const std::vector<std::uint32_t>& w) {
  return std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(std::uint32_t));
}

// The six configurations in file order (block index, type index), out of sorted order, and
// per configuration the variant of x: the precision's index.
void write_table_files(TempDir& dir, const std::vector<std::uint32_t>& variants) {
  dir.write("c.idx", words({1, 2, 0, 0, 1, 1, 0, 1, 0, 2, 1, 0}));
  dir.write("c.var", words(variants));
}

const std::string kTable = R"({"Count": 6, "Indices": "c.idx", "VariantArguments": ["x"], "Variants": "c.var"})";

fs::path write_problem(TempDir& dir, const std::string& variants = kVariants, const std::string& table = kTable,
                       const std::vector<std::uint32_t>& column = {2, 0, 1, 1, 2, 0}) {
  dir.write("k.cu", kKernel);
  dir.write("x.half.bin", std::string(8, '\1'));
  dir.write("x.float.bin", std::string(16, '\2'));
  dir.write("x.double.bin", std::string(32, '\3'));
  write_table_files(dir, column);
  return dir.write("k.json", t1(variants, table));
}

std::string load_error(const fs::path& file) {
  try {
    (void)KernelProblem::load(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("Variants: every variant is a datum of its own type and size", "[problem][tunable]") {
  TempDir dir;
  KernelProblem p = KernelProblem::load(write_problem(dir));
  REQUIRE(p.arguments().size() == 2);
  REQUIRE(p.data().size() == 4);  // x's three variants, then n
  CHECK(p.has_variants());
  CHECK(p.data()[0].type == ElementType::Float16);
  CHECK(p.data()[1].type == ElementType::Float32);
  CHECK(p.data()[2].type == ElementType::Float64);
  CHECK(p.data()[2].variant_key == "double");
  CHECK(p.data()[2].access == cutune::AccessType::ReadWrite);  // the argument's kind, carried
  CHECK(p.argument_of_data(2) == 0);
  CHECK(p.argument_of_data(3) == 1);
  CHECK(p.first_data_of(1) == 3);

  const auto host = cutune::make_host_arguments(p, p.instantiate(), 1);
  REQUIRE(host.size() == 4);
  CHECK(host[0].bytes.size() == 8);
  CHECK(host[2].bytes.size() == 32);
  CHECK(host[2].bytes[0] == std::byte{3});
}

TEST_CASE("Variants: each configuration passes the variant its table row names", "[problem][tunable]") {
  TempDir dir;
  KernelProblem p = KernelProblem::load(write_problem(dir));
  // Rows in file order were (64,double)->2, (32,half)->0, (64,float)->1, (32,float)->1,
  // (32,double)->2, (64,half)->0.
  CHECK(p.data_for(Config{{1, 2}}, 0) == 2);
  CHECK(p.data_for(Config{{0, 0}}, 0) == 0);
  CHECK(p.data_for(Config{{1, 1}}, 0) == 1);
  CHECK(p.data_for(Config{{0, 2}}, 0) == 2);
  CHECK(p.data_for(Config{{1, 0}}, 0) == 0);
  CHECK(p.data_for(Config{{1, 0}}, 1) == 3);  // a plain argument is its own datum
}

TEST_CASE("Variants: a plain problem's data are its arguments", "[problem][tunable]") {
  TempDir dir;
  dir.write("k.cu", kKernel);
  dir.write("c.idx", words({0, 0}));
  const std::string plain =
      R"([{"Key": "float", "Type": "float", "Size": 4, "FillType": "Constant", "FillValue": 1}])";
  // One variant is still an argument with Variants; the plain case is an argument without.
  auto file = dir.write("k.json", t1(plain, R"({"Count": 1, "Indices": "c.idx", "VariantArguments": ["x"],
      "Variants": "c.var"})"));
  dir.write("c.var", words({0}));
  KernelProblem p = KernelProblem::load(file);
  CHECK(p.data().size() == 2);
  CHECK(p.data_for(Config{{0, 0}}, 0) == 0);
}

TEST_CASE("Variants: bad files are refused naming the field", "[problem][tunable]") {
  TempDir dir;
  SECTION("a variant index out of range") {
    const auto file = write_problem(dir, kVariants, kTable, {2, 0, 1, 3, 2, 0});
    CHECK_THAT(load_error(file), Contains("cutune.Configurations.Variants") && Contains("variant 3 of 'x' is out of "
                                                                                        "range (3 variants)"));
  }
  SECTION("an argument with Variants and no column") {
    const auto file = write_problem(dir, kVariants, R"({"Count": 6, "Indices": "c.idx"})");
    CHECK_THAT(load_error(file), Contains("KernelSpecification.Arguments[0].Variants") &&
                                     Contains("no column for it"));
  }
  SECTION("a column for an argument without Variants") {
    const auto file = write_problem(dir, kVariants, R"({"Count": 6, "Indices": "c.idx",
        "VariantArguments": ["x", "n"], "Variants": "c.var"})");
    dir.write("c.var", words(std::vector<std::uint32_t>(12, 0)));
    CHECK_THAT(load_error(file), Contains("cutune.Configurations.VariantArguments[1]") && Contains("'n' has no Variants"));
  }
  SECTION("a variant of another kind") {
    const auto file = write_problem(dir, R"([{"Type": "float", "Size": 4, "FillValue": 1},
        {"Type": "double", "MemoryType": "Scalar", "FillValue": 1}])");
    CHECK_THAT(load_error(file), Contains("KernelSpecification.Arguments[0].Variants[1].MemoryType") &&
                                     Contains("same kind"));
  }
  SECTION("a Variants file of the wrong size") {
    const auto file = write_problem(dir, kVariants, kTable, {2, 0, 1});
    CHECK_THAT(load_error(file), Contains("cutune.Configurations.Variants") && Contains("expected 24 bytes"));
  }
  SECTION("a Type beside Variants") {
    const auto file = write_problem(dir, kVariants);
    dir.write("k.json", t1(kVariants, kTable).replace(t1(kVariants, kTable).find("\"MemoryType\": \"Vector\""), 0,
                                                      "\"Type\": \"float\", "));
    CHECK_THAT(load_error(file), Contains("KernelSpecification.Arguments[0].Type") && Contains("per variant"));
  }
  SECTION("no variant") {
    const auto file = write_problem(dir, "[]");
    CHECK_THAT(load_error(file), Contains("KernelSpecification.Arguments[0].Variants") && Contains("is empty"));
  }
}

TEST_CASE("Variants: a reference per variant, each in its variant's type", "[problem][tunable]") {
  TempDir dir;
  write_problem(dir);
  dir.write("r.half.bin", std::string(8, '\4'));
  dir.write("r.float.bin", std::string(16, '\5'));
  dir.write("r.double.bin", std::string(32, '\6'));
  std::string doc = t1(kVariants, kTable);
  const std::string refs = R"(, "ReferenceArguments": [{"Name": "x_answer", "TargetName": "x", "FillType": "BinaryRaw",
      "DataSources": ["r.half.bin", "r.float.bin", "r.double.bin"]}]})";
  const auto at = doc.find("]},\n  \"cutune\"");
  REQUIRE(at != std::string::npos);
  doc.replace(at, 2, "]" + refs);
  const auto file = dir.write("k.json", doc);
  KernelProblem p = KernelProblem::load(file);
  const auto expected = cutune::reference_outputs(p, p.instantiate());
  REQUIRE(expected.size() == 4);
  CHECK(expected[1].bytes.size() == 16);
  CHECK(expected[1].bytes[0] == std::byte{5});
  CHECK(expected[3].bytes.empty());  // n: not an output

  SECTION("a file of the wrong size names its variant") {
    dir.write("r.float.bin", std::string(15, '\5'));
    KernelProblem q = KernelProblem::load(file);
    CHECK_THROWS_WITH(cutune::reference_outputs(q, q.instantiate()),
                      Contains("ReferenceArguments[0].DataSources[1]") && Contains("has 15 bytes"));
  }
}
