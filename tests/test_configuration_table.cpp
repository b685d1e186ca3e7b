// cutune.Configurations: the space, grid, shared memory and defines that the Python package
// computed by calling the user's Python as Kernel Tuner does, read as data.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using cutune::Config;
using cutune::InputError;
using cutune::KernelProblem;
using cutune::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

const std::string kKernel =
    "extern \"C\" __global__ void k(float* x, int n) { x[0] = block_size_x + tile + grid_size_x + my_define; }\n";

std::string t1(const std::string& table) {
  return R"({
  "General": {"BenchmarkName": "table", "FormatVersion": 1},
  "ConfigurationSpace": {"TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": [32, 64, 128]},
      {"Name": "tile", "Type": "int", "Values": [1, 2, 4]}], "Conditions": []},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [1000],
    "GridDivX": ["block_size_x"],
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Constant", "Size": 10, "FillValue": 0},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 10}]},
  "cutune": {"Configurations": )" + table + "}}";
}

std::string words(const std::vector<std::uint32_t>& w) {
  return std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(std::uint32_t));
}

Config cfg(std::uint32_t a, std::uint32_t b) { return Config{{a, b}}; }

}  // namespace

TEST_CASE("cutune.Configurations: the space is exactly the listed rows, with their grid and defines",
          "[problem][table]") {
  TempDir dir;
  dir.write("k.cu", kKernel);
  // Rows (value indices) out of order: (128,4), (32,1), (64,2).
  dir.write("c.idx", words({2, 2, 0, 0, 1, 1}));
  dir.write("c.launch", words({7, 1, 1, 512, 5, 2, 1, 0, 6, 3, 1, 64}));
  auto file = dir.write("k.json", t1(R"({"Count": 3, "Indices": "c.idx", "Launch": "c.launch",
      "DefineNames": ["block_size_x", "my_define"], "Defines": [["128", "a+b"], ["32", "1"], ["64", "x"]]})"));
  KernelProblem p = KernelProblem::load(file);
  REQUIRE(p.configuration_table() != nullptr);
  CHECK(p.space().count_valid() == 3);
  CHECK(p.space().is_valid(cfg(0, 0)));
  CHECK(p.space().is_valid(cfg(2, 2)));
  CHECK_FALSE(p.space().is_valid(cfg(1, 0)));  // the product allows it; Python did not list it

  const auto inst = p.instantiate();
  auto g = p.geometry(cfg(2, 2), inst);
  CHECK(g.grid[0] == 7);
  CHECK(g.grid[1] == 1);
  CHECK(g.block[0] == 128);
  CHECK(g.dynamic_shared_bytes == 512);
  CHECK(p.geometry(cfg(1, 1), inst).grid[1] == 3);  // not what ProblemSize/GridDiv would give

  // Kernel Tuner's `defines`: the prefix is exactly those, nothing else.
  const std::string src = p.configured_source(cfg(2, 2), inst);
  CHECK_THAT(src, Contains("#define block_size_x 128\n#define my_define a+b\n#line 1"));
  CHECK(src.find("#define tile") == std::string::npos);
  CHECK(src.find("grid_size_x 7") == std::string::npos);
}

TEST_CASE("cutune.Configurations without launch or defines keeps T1's grid and prefix", "[problem][table]") {
  TempDir dir;
  dir.write("k.cu", kKernel);
  dir.write("c.idx", words({1, 0}));
  auto file = dir.write("k.json", t1(R"({"Count": 1, "Indices": "c.idx"})"));
  KernelProblem p = KernelProblem::load(file);
  CHECK(p.space().count_valid() == 1);
  const auto inst = p.instantiate();
  CHECK(p.geometry(cfg(1, 0), inst).grid[0] == 16);  // ceil(1000 / 64)
  CHECK_THAT(p.configured_source(cfg(1, 0), inst), Contains("#define tile 1\n"));
}

TEST_CASE("cutune.Configurations: bad tables are refused naming the field", "[problem][table]") {
  TempDir dir;
  dir.write("k.cu", kKernel);
  auto expect = [&](const std::string& table, const std::string& part) {
    auto file = dir.write("k.json", t1(table));
    try {
      (void)KernelProblem::load(file);
      FAIL("no InputError; expected one naming " << part);
    } catch (const InputError& e) {
      CHECK_THAT(std::string(e.what()), Contains(part));
    }
  };
  dir.write("short.idx", words({0}));
  expect(R"({"Count": 1, "Indices": "short.idx"})", "cutune.Configurations.Indices");
  dir.write("range.idx", words({0, 3}));
  expect(R"({"Count": 1, "Indices": "range.idx"})", "index 3 of 'tile' is out of range");
  dir.write("dup.idx", words({0, 1, 0, 1}));
  expect(R"({"Count": 2, "Indices": "dup.idx"})", "repeats row 0");
  dir.write("one.idx", words({0, 1}));
  expect(R"({"Count": 1, "Indices": "one.idx", "DefineNames": ["a"], "Defines": [["1", "2"]]})",
         "cutune.Configurations.Defines[0]");
}
