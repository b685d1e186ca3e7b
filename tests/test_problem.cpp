// Tests of KernelProblem (T1 loading, instances, geometry, defines, metrics) and of the
// host-side argument data (fills, poison, compare).
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"
#include "cutune/model/space.hpp"

namespace fs = std::filesystem;
using cutune::AccessType;
using cutune::Config;
using cutune::ElementType;
using cutune::FillType;
using cutune::HostArgument;
using cutune::InputError;
using cutune::KernelProblem;
using cutune::ProblemInstance;
using cutune::Tolerance;
using cutune::Value;
using Catch::Matchers::Contains;

namespace {

const std::string kTemplates = CUTUNE_TEMPLATE_DIR;
std::string kt_examples() { return cutune::testing::material("formats/kernel_tuner/examples").string(); }

KernelProblem load_template(const std::string& name) {
  return KernelProblem::load(kTemplates + "/" + name + "/" + name + ".json");
}

using cutune::testing::TempDir;

std::string read_file(const fs::path& p) {
  // The Kernel Tuner examples live in ../shared beside the checkout (CI has it too); say so
  // plainly rather than failing later on an empty string.
  INFO("cannot read " << p.string() << " (is ../shared beside the checkout?)");
  REQUIRE(fs::is_regular_file(p));
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the one occurrence of `from` (which must be there) by `to`.
std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  REQUIRE(text.find(from, pos + 1) == std::string::npos);
  return text.replace(pos, from.size(), to);
}

// A small valid user T1 file: no cutune section, ProblemSize a plain number, GridDivY
// naming block_size_y, which is not a tuning parameter (Kernel Tuner treats it as 1).
const std::string kTinyT1 = R"({
  "General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]", "Default": 64},
      {"Name": "tile", "Type": "int", "Values": [1, 2, 4], "Default": 1}
    ],
    "Conditions": [{"Expression": "block_size_x * tile <= 256", "Parameters": ["block_size_x", "tile"]}]
  },
  "KernelSpecification": {
    "Language": "CUDA",
    "CompilerOptions": ["-std=c++11"],
    "KernelName": "tiny_kernel",
    "KernelFile": "tiny.cu",
    "GridDivX": ["block_size_x", "tile"],
    "GridDivY": ["block_size_y"],
    "ProblemSize": 100,
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random", "Size": 100, "FillValue": 1.0, "Output": 1},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 100}
    ]
  }
})";
const std::string kTinyCu = "extern \"C\" __global__ void tiny_kernel(float* x, int n) {}\n";

// Writes tiny.json (with the given text) and tiny.cu into `dir`; returns the JSON path.
fs::path write_tiny(const TempDir& dir, const std::string& json_text) {
  dir.write("tiny.cu", kTinyCu);
  return dir.write("tiny.json", json_text);
}

// Loading `json_text` must throw InputError whose message names the file and each of
// `parts` (the field, the offending name).
void require_load_error(const std::string& json_text, const std::vector<std::string>& parts,
                        bool with_source = true) {
  TempDir dir;
  fs::path file = with_source ? write_tiny(dir, json_text) : dir.write("tiny.json", json_text);
  try {
    (void)KernelProblem::load(file);
    FAIL("loading did not throw; expected an InputError naming " << parts.front());
  } catch (const InputError& e) {
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK_THAT(what, Contains(file.string()));
    for (const auto& p : parts) CHECK_THAT(what, Contains(p));
    CHECK(what.find('\n') == std::string::npos);  // one line
  }
}

Config config_of(const KernelProblem& p, const std::string& assignments) {
  return p.space().parse_assignments(assignments);
}

}  // namespace

// ------------------------------------------------------------------------------------
// Built-in templates

TEST_CASE("problem: the reduction template loads", "[problem]") {
  KernelProblem p = load_template("reduction");
  CHECK(p.name() == "reduction");
  CHECK(p.kernel_name() == "reduction");
  CHECK(p.kernel_file().filename() == "reduction.cu");
  CHECK_FALSE(p.source().empty());
  CHECK(p.compiler_options() == std::vector<std::string>{"-std=c++17"});

  const auto& s = p.space();
  REQUIRE(s.parameters().size() == 7);
  const char* names[] = {"block_size_x", "addressing", "elements_per_thread",
                         "vector_width", "warp_tail",  "unroll", "combine"};
  for (std::size_t i = 0; i < 7; ++i) CHECK(s.parameters()[i].name == names[i]);
  CHECK(s.parameters()[0].values.size() == 6);
  CHECK(s.parameters()[0].values.front() == Value(32));
  CHECK(s.parameters()[0].values.back() == Value(1024));
  CHECK(s.cartesian_size() == 2592);
  CHECK(s.count_valid() == 720);  // 396 one-launch + 324 two-pass (sequential addressing only)
  CHECK(s.restrictions().size() == 4);
  CHECK(s.key(s.default_config()) == "256,2,8,4,1,1,0");

  REQUIRE(p.arguments().size() == 5);
  const auto& out = p.arguments()[0];
  CHECK(out.name == "out");
  CHECK(out.type == ElementType::Float32);
  CHECK(out.is_vector);
  CHECK(out.access == AccessType::WriteOnly);
  CHECK(out.fill == FillType::Constant);
  CHECK(out.output);
  const auto& in = p.arguments()[1];
  CHECK(in.name == "in");
  CHECK(in.fill == FillType::Random);
  CHECK(in.access == AccessType::ReadOnly);
  CHECK_FALSE(in.output);
  const auto& ws = p.arguments()[2];
  CHECK(ws.name == "workspace");
  CHECK(ws.access == AccessType::ReadWrite);
  REQUIRE(ws.size.has_value());
  CHECK(ws.size->text() == "(n + 31) // 32");
  CHECK(p.arguments()[3].name == "counter");
  CHECK(p.arguments()[3].type == ElementType::UInt32);
  const auto& n = p.arguments()[4];
  CHECK(n.name == "n");
  CHECK(n.type == ElementType::Int32);
  CHECK_FALSE(n.is_vector);

  CHECK(p.reference() == "reduction");
  CHECK(p.tolerance().relative == 1e-5);
  CHECK(p.tolerance().absolute == 0.0);
  REQUIRE(p.metrics().size() == 1);
  CHECK(p.metrics()[0].name == "gbps");
  REQUIRE(p.variables().size() == 1);
  CHECK(p.variables()[0].name == "n");
  CHECK(p.variables()[0].default_value == 268435456);
  CHECK(p.variables()[0].min_value == 1);
  CHECK(p.variables()[0].max_value == 2147483647);
}

TEST_CASE("problem: the vector_add template loads", "[problem]") {
  KernelProblem p = load_template("vector_add");
  CHECK(p.name() == "vector_add");
  CHECK(p.kernel_name() == "vector_add");
  const auto& s = p.space();
  REQUIRE(s.parameters().size() == 3);
  CHECK(s.parameters()[0].name == "block_size_x");
  CHECK(s.parameters()[1].name == "elements_per_thread");
  CHECK(s.parameters()[2].name == "vector_width");
  CHECK(s.cartesian_size() == 60);
  CHECK(s.count_valid() == 59);
  CHECK(s.key(s.default_config()) == "256,4,4");
  REQUIRE(p.arguments().size() == 4);
  CHECK(p.arguments()[0].name == "c");
  CHECK(p.arguments()[0].output);
  CHECK(p.arguments()[1].name == "a");
  CHECK(p.arguments()[2].name == "b");
  CHECK(p.arguments()[3].name == "n");
  CHECK(p.reference() == "vector_add");
  CHECK(p.tolerance().relative == 0.0);
  CHECK(p.tolerance().absolute == 0.0);
  REQUIRE(p.metrics().size() == 1);
  CHECK(p.metrics()[0].name == "gbps");
  REQUIRE(p.variables().size() == 1);
  CHECK(p.variables()[0].default_value == 67108864);
}

TEST_CASE("problem: instantiate", "[problem]") {
  KernelProblem p = load_template("reduction");
  ProblemInstance d = p.instantiate();
  CHECK(d.variables.at("n") == 268435456);
  CHECK(d.problem_size == std::vector<std::int64_t>{268435456});
  CHECK(d.key() == "n=268435456");

  CHECK(p.instantiate("n=1000").variables.at("n") == 1000);
  CHECK(p.instantiate("n=1000").problem_size == std::vector<std::int64_t>{1000});
  CHECK(p.instantiate("n=1000").key() == "n=1000");
  CHECK(p.instantiate("n=2**20+7").variables.at("n") == 1048583);
  CHECK(p.instantiate("n=1").variables.at("n") == 1);
  CHECK(p.instantiate("n=2147483647").variables.at("n") == 2147483647);

  auto expect_error = [&](const std::string& overrides, const std::string& names) {
    INFO("overrides: " << overrides);
    CHECK_THROWS_AS(p.instantiate(overrides), InputError);
    CHECK_THROWS_WITH(p.instantiate(overrides), Contains(names));
  };
  expect_error("m=1", "m");
  expect_error("m=1", "n");  // lists the known variables
  expect_error("n=abc", "n");
  expect_error("n=abc", "abc");
  expect_error("n=1.5", "n");
  expect_error("n=True", "n");
  expect_error("n=0", "n");
  expect_error("n=-5", "n");
  expect_error("n=2147483648", "n");
  expect_error("n", "n");
  expect_error("n=", "n");
  expect_error("n=(1", "n");
}

TEST_CASE("problem: geometry follows Kernel Tuner's grid = ceil(size / prod(GridDiv))",
          "[problem]") {
  KernelProblem p = load_template("reduction");
  struct Case {
    const char* config;
    std::int64_t n;
    std::uint32_t block, grid;
  };
  // Divisor = block_size_x * elements_per_thread * vector_width.
  const Case cases[] = {
      // default: 256 * 8 * 4 = 8192
      {"", 1, 256, 1},
      {"", 31, 256, 1},
      {"", 1000, 256, 1},
      {"", 1048583, 256, 129},  // 2^20 + 7 = 128 * 8192 + 7
      {"", 268435456, 256, 32768},
      // 32 * 1 * 1 = 32
      {"block_size_x=32,addressing=0,elements_per_thread=1,vector_width=1,warp_tail=0,unroll=0", 1,
       32, 1},
      {"block_size_x=32,addressing=0,elements_per_thread=1,vector_width=1,warp_tail=0,unroll=0", 31,
       32, 1},
      {"block_size_x=32,addressing=0,elements_per_thread=1,vector_width=1,warp_tail=0,unroll=0",
       1000, 32, 32},
      {"block_size_x=32,addressing=0,elements_per_thread=1,vector_width=1,warp_tail=0,unroll=0",
       1048583, 32, 32769},
      // 64 * 2 * 2 = 256
      {"block_size_x=64,elements_per_thread=2,vector_width=2", 1000, 64, 4},
      {"block_size_x=64,elements_per_thread=2,vector_width=2", 1048583, 64, 4097},
      // 1024 * 32 * 4 = 131072
      {"block_size_x=1024,elements_per_thread=32", 31, 1024, 1},
      {"block_size_x=1024,elements_per_thread=32", 1048583, 1024, 9},
  };
  for (const auto& c : cases) {
    INFO("config '" << c.config << "', n=" << c.n);
    Config cfg = config_of(p, c.config);
    REQUIRE(p.space().is_valid(cfg));
    auto g = p.geometry(cfg, p.instantiate("n=" + std::to_string(c.n)));
    CHECK(g.block[0] == c.block);
    CHECK(g.block[1] == 1);
    CHECK(g.block[2] == 1);
    CHECK(g.grid[0] == c.grid);
    CHECK(g.grid[1] == 1);
    CHECK(g.grid[2] == 1);
  }

  KernelProblem v = load_template("vector_add");
  auto g = v.geometry(v.space().default_config(), v.instantiate());
  CHECK(g.block[0] == 256);
  CHECK(g.grid[0] == 67108864 / (256 * 4 * 4));
}

TEST_CASE("problem: defines and the configured source", "[problem]") {
  KernelProblem p = load_template("reduction");
  CHECK(p.defines(p.space().default_config()) ==
        std::vector<std::string>{"-Dblock_size_x=256", "-Daddressing=2",
                                 "-Delements_per_thread=8", "-Dvector_width=4", "-Dwarp_tail=1",
                                 "-Dunroll=1", "-Dcombine=0"});
  CHECK(p.defines(config_of(p, "block_size_x=32,unroll=0")) ==
        std::vector<std::string>{"-Dblock_size_x=32", "-Daddressing=2",
                                 "-Delements_per_thread=8", "-Dvector_width=4", "-Dwarp_tail=1",
                                 "-Dunroll=0", "-Dcombine=0"});
}

TEST_CASE("problem: evaluate_metrics", "[problem]") {
  KernelProblem r = load_template("reduction");
  auto m = r.evaluate_metrics(r.instantiate("n=1000"), 1e-6);  // 4000 bytes in 1 us
  REQUIRE(m.size() == 1);
  CHECK(m[0].first == "gbps");
  CHECK(m[0].second == Approx(4.0));
  auto big = r.evaluate_metrics(r.instantiate(), 1e-3);
  CHECK(big[0].second == Approx(4.0 * 268435456 / 1e-3 / 1e9));

  KernelProblem v = load_template("vector_add");
  auto mv = v.evaluate_metrics(v.instantiate("n=1048576"), 1e-3);
  REQUIRE(mv.size() == 1);
  CHECK(mv[0].second == Approx(12.582912));
}

TEST_CASE("problem: argument_size and argument_fill", "[problem]") {
  KernelProblem p = load_template("reduction");
  const auto& args = p.arguments();
  auto at = [&](const std::string& n) { return p.instantiate("n=" + n); };
  // workspace: (n + 31) // 32
  CHECK(p.argument_size(args[2], at("1")) == 1);
  CHECK(p.argument_size(args[2], at("32")) == 1);
  CHECK(p.argument_size(args[2], at("33")) == 2);
  CHECK(p.argument_size(args[2], at("1000")) == 32);
  CHECK(p.argument_size(args[2], at("1048583")) == 32769);
  CHECK(p.argument_size(args[0], at("1000")) == 1);     // out: Size 1
  CHECK(p.argument_size(args[1], at("1000")) == 1000);  // in: Size n
  CHECK(p.argument_size(args[4], at("1000")) == 1);     // scalar
  CHECK(p.argument_fill(args[4], at("1000")) == Value(1000));
  CHECK(p.argument_fill(args[4], at("1000")).is_int());
  CHECK(p.argument_fill(args[1], at("1000")) == Value(1.0));
  CHECK(p.argument_fill(args[0], at("1000")) == Value(0.0));
}

// ------------------------------------------------------------------------------------
// Host data

TEST_CASE("host data: make_host_arguments", "[problem][host]") {
  KernelProblem p = load_template("reduction");
  ProblemInstance inst = p.instantiate("n=1000");
  auto args = cutune::make_host_arguments(p, inst, 42);
  REQUIRE(args.size() == 5);
  const std::int64_t counts[] = {1, 1000, 32, 1, 1};
  const std::size_t bytes[] = {4, 4000, 128, 4, 4};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(args[i].spec == &p.arguments()[i]);
    CHECK(args[i].count == counts[i]);
    CHECK(args[i].bytes.size() == bytes[i]);
  }
  CHECK(args[0].data<float>()[0] == 0.0f);
  for (std::int64_t i = 0; i < 32; ++i) CHECK(args[2].data<float>()[i] == 0.0f);
  CHECK(args[3].data<std::uint32_t>()[0] == 0u);
  CHECK(args[4].data<std::int32_t>()[0] == 1000);

  // Random: within [0, FillValue) and never all zero.
  const float* in = args[1].data<float>();
  bool any_nonzero = false;
  float lo = 1.0f, hi = 0.0f;
  for (std::int64_t i = 0; i < 1000; ++i) {
    REQUIRE(in[i] >= 0.0f);
    REQUIRE(in[i] < 1.0f);
    any_nonzero = any_nonzero || in[i] != 0.0f;
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  CHECK(any_nonzero);
  CHECK(hi - lo > 0.5f);  // spread over the range, not one repeated value

  // Deterministic for a seed, different for another.
  auto again = cutune::make_host_arguments(p, inst, 42);
  for (std::size_t i = 0; i < 5; ++i) CHECK(again[i].bytes == args[i].bytes);
  auto other = cutune::make_host_arguments(p, inst, 43);
  CHECK(other[1].bytes != args[1].bytes);
  CHECK(other[0].bytes == args[0].bytes);  // constants do not depend on the seed

  // vector_add: both random inputs are filled, and differently.
  KernelProblem v = load_template("vector_add");
  auto va = cutune::make_host_arguments(v, v.instantiate("n=4096"), 7);
  REQUIRE(va.size() == 4);
  CHECK(va[1].count == 4096);
  CHECK(va[1].bytes != va[2].bytes);
  CHECK(va[3].data<std::int32_t>()[0] == 4096);
}

TEST_CASE("host data: Random fills of other types and scales", "[problem][host]") {
  TempDir dir;
  std::string text = replace_once(
      kTinyT1,
      R"({"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 100})",
      R"({"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 100},
      {"Name": "d", "Type": "double", "MemoryType": "Vector", "FillType": "Random", "Size": 500, "FillValue": 8.0},
      {"Name": "z", "Type": "float", "MemoryType": "Vector", "FillType": "Random", "Size": 500, "FillValue": 0},
      {"Name": "i", "Type": "int32", "MemoryType": "Vector", "FillType": "Random", "Size": 500, "FillValue": 10},
      {"Name": "u", "Type": "uint8", "MemoryType": "Vector", "FillType": "Random", "Size": 500, "FillValue": 0},
      {"Name": "c", "Type": "int64", "MemoryType": "Vector", "FillType": "Constant", "Size": 3, "FillValue": "2**40"})");
  KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  auto args = cutune::make_host_arguments(p, p.instantiate(), 1);
  REQUIRE(args.size() == 7);
  bool any = false;
  for (int k = 0; k < 500; ++k) {
    double x = args[2].data<double>()[k];
    REQUIRE(x >= 0.0);
    REQUIRE(x < 8.0);
    any = any || x > 1.0;
  }
  CHECK(any);  // uses the scale, not [0, 1)
  any = false;
  for (int k = 0; k < 500; ++k) {
    float x = args[3].data<float>()[k];  // FillValue 0 means 1
    REQUIRE(x >= 0.0f);
    REQUIRE(x < 1.0f);
    any = any || x != 0.0f;
  }
  CHECK(any);
  any = false;
  for (int k = 0; k < 500; ++k) {
    std::int32_t x = args[4].data<std::int32_t>()[k];  // integers: [0, FillValue]
    REQUIRE(x >= 0);
    REQUIRE(x <= 10);
    any = any || x != 0;
  }
  CHECK(any);
  any = false;
  for (int k = 0; k < 500; ++k) {
    std::uint8_t x = args[5].data<std::uint8_t>()[k];  // FillValue 0: [0, 1]
    REQUIRE(x <= 1);
    any = any || x != 0;
  }
  CHECK(any);
  for (int k = 0; k < 3; ++k) CHECK(args[6].data<std::int64_t>()[k] == (std::int64_t{1} << 40));
}

TEST_CASE("host data: poison and compare", "[problem][host]") {
  KernelProblem p = load_template("reduction");
  auto expected = cutune::make_host_arguments(p, p.instantiate("n=1000"), 5);
  const Tolerance tol = p.tolerance();  // relative 1e-5

  SECTION("equal passes") {
    auto got = expected;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      auto r = cutune::compare(expected[i], got[i], tol);
      CHECK(r.ok);
      CHECK(r.message.empty());
      CHECK(r.max_error == 0.0);
    }
  }
  SECTION("one element off fails, naming the argument and the index") {
    auto got = expected;
    got[1].data<float>()[417] += 0.5f;
    auto r = cutune::compare(expected[1], got[1], tol);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Contains("in[417]"));
    CHECK(r.max_error == Approx(0.5).epsilon(1e-3));
  }
  SECTION("poison makes floats NaN, and the poison never passes") {
    auto got = expected;
    cutune::poison(got[1]);
    for (std::int64_t i = 0; i < got[1].count; ++i) REQUIRE(std::isnan(got[1].data<float>()[i]));
    auto r = cutune::compare(expected[1], got[1], Tolerance{1e9, 1e9});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Contains("in[0]"));
    // Also when the expected value is NaN (NaN equals NaN otherwise, as in Kernel Tuner).
    auto r2 = cutune::compare(got[1], got[1], Tolerance{1e9, 1e9}, /*poisoned=*/true);
    CHECK_FALSE(r2.ok);
    CHECK(cutune::compare(got[1], got[1], Tolerance{1e9, 1e9}).ok);
  }
  SECTION("poison fills integers with 0xA5 bytes") {
    auto got = expected;
    cutune::poison(got[3]);
    for (auto b : got[3].bytes) CHECK(b == std::byte{0xA5});
    CHECK_FALSE(cutune::compare(expected[3], got[3], tol).ok);
  }
  SECTION("the tolerance is respected") {
    auto e = expected;
    std::fill(e[1].data<float>(), e[1].data<float>() + e[1].count, 100.0f);
    auto got = e;
    got[1].data<float>()[10] = 100.5f;
    CHECK(cutune::compare(e[1], got[1], Tolerance{0.0, 1.0}).ok);       // absolute 1
    CHECK_FALSE(cutune::compare(e[1], got[1], Tolerance{0.0, 0.25}).ok);
    CHECK(cutune::compare(e[1], got[1], Tolerance{0.01, 0.0}).ok);      // 1% of 100 = 1
    CHECK_FALSE(cutune::compare(e[1], got[1], Tolerance{0.001, 0.0}).ok);
    CHECK(cutune::compare(e[1], got[1], Tolerance{0.004, 0.2}).ok);     // 0.4 + 0.2
    CHECK_FALSE(cutune::compare(e[1], got[1], Tolerance{0.0, 0.0}).ok);
  }
  SECTION("integers compare exactly") {
    auto e = expected;
    e[3].data<std::uint32_t>()[0] = 1000;
    auto got = e;
    CHECK(cutune::compare(e[3], got[3], Tolerance{1.0, 1.0}).ok);
    got[3].data<std::uint32_t>()[0] = 1001;
    auto r = cutune::compare(e[3], got[3], Tolerance{1.0, 10.0});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Contains("counter[0]"));
  }
  SECTION("a different element count fails") {
    auto got = expected;
    got[1].count = 999;
    got[1].bytes.resize(999 * 4);
    auto r = cutune::compare(expected[1], got[1], tol);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Contains("in"));
  }
}

// ------------------------------------------------------------------------------------
// User T1 files

TEST_CASE("problem: a minimal user T1 file loads", "[problem][t1]") {
  TempDir dir;
  fs::path file = write_tiny(dir, kTinyT1);
  KernelProblem p = KernelProblem::load(file);
  CHECK(p.name() == "tiny");
  CHECK(p.kernel_name() == "tiny_kernel");
  CHECK(p.source() == kTinyCu);
  CHECK(p.variables().empty());
  CHECK(p.reference().empty());
  CHECK(p.metrics().empty());
  CHECK(p.space().cartesian_size() == 9);
  CHECK(p.space().count_valid() == 8);  // 128 * 4 > 256
  CHECK(p.space().key(p.space().default_config()) == "64,1");
  ProblemInstance inst = p.instantiate();
  CHECK(inst.problem_size == std::vector<std::int64_t>{100});
  CHECK(inst.key() == "ProblemSize=100");
  CHECK_THROWS_AS(p.instantiate("n=5"), InputError);  // no problem variables

  auto g = p.geometry(p.space().parse_assignments("block_size_x=32,tile=1"), inst);
  CHECK(g.grid == std::array<std::uint32_t, 3>{4, 1, 1});  // ceil(100 / 32)
  CHECK(g.block == std::array<std::uint32_t, 3>{32, 1, 1});
  g = p.geometry(p.space().parse_assignments("block_size_x=64,tile=2"), inst);
  CHECK(g.grid == std::array<std::uint32_t, 3>{1, 1, 1});  // ceil(100 / 128)
  CHECK(g.block == std::array<std::uint32_t, 3>{64, 1, 1});

  auto args = cutune::make_host_arguments(p, inst, 3);
  REQUIRE(args.size() == 2);
  CHECK(args[0].count == 100);
  CHECK(args[1].data<std::int32_t>()[0] == 100);
}

TEST_CASE("problem: Kernel Tuner's test_cache_file_T1_input.json loads beside a .cu",
          "[problem][t1][material]") {
  TempDir dir;
  dir.write("test_cache_file_T1_input.json",
            read_file(kt_examples() + "/test_cache_file_T1_input.json"));
  fs::path file = dir.path() / "test_cache_file_T1_input.json";
  // Without its kernel source: an InputError naming KernelFile.
  CHECK_THROWS_WITH(KernelProblem::load(file), Contains("KernelFile") && Contains(file.string()));

  dir.write("vector_add.cu", "extern \"C\" __global__ void vector_add(float* c, const float* a, "
                             "const float* b, int n) {}\n");
  KernelProblem p = KernelProblem::load(file);
  CHECK(p.name() == "vector_add");
  CHECK(p.space().cartesian_size() == 15);  // [128+64*i for i in range(15)]
  CHECK(p.space().count_valid() == 15);
  CHECK(p.space().key(p.space().default_config()) == "512");
  ProblemInstance inst = p.instantiate();
  CHECK(inst.problem_size == std::vector<std::int64_t>{100});
  auto g = p.geometry(p.space().default_config(), inst);
  CHECK(g.grid == std::array<std::uint32_t, 3>{1, 1, 1});
  CHECK(g.block == std::array<std::uint32_t, 3>{512, 1, 1});
  REQUIRE(p.arguments().size() == 4);
  CHECK(p.argument_size(p.arguments()[0], inst) == 10000000);
}

TEST_CASE("problem: Kernel Tuner's test_T1_input.json (convolution)", "[problem][t1][material]") {
  TempDir dir;
  dir.write("test_T1_input.json", read_file(kt_examples() + "/test_T1_input.json"));
  fs::path file = dir.path() / "test_T1_input.json";

  // As shipped, convolution.cu is not there.
  try {
    (void)KernelProblem::load(file);
    FAIL("loading without convolution.cu did not throw");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("KernelFile") && Contains("convolution.cu"));
  }

  dir.write("convolution.cu", "extern \"C\" __global__ void convolution_kernel(){}\n");
  // Its Size expressions read max(filter_width): Kernel Tuner evaluates them with each tuning
  // parameter bound to its list of values, so this loads in Kernel Tuner.
  KernelProblem p = KernelProblem::load(file);
  CHECK(p.kernel_name() == "convolution_kernel");
  CHECK(p.space().parameters().size() == 8);
  // Computed with python3 itertools.product over the 8 value lists and the one condition
  // "use_padding==0 or (block_size_x % 32 != 0)": 3145728 in the product, 2359296 valid; Kernel
  // Tuner 1.5's Searchspace(tune_params, restrictions, 1024) also drops block_size_x *
  // block_size_y > 1024, leaving 1867776, and so does cutune without a device.
  CHECK(p.space().cartesian_size() == 3145728);
  CHECK(p.space().count_valid() == 1867776);
  CHECK(p.space().block_limit() == "block_size_x * block_size_y <= 1024");
  ProblemInstance inst = p.instantiate();
  CHECK(inst.problem_size == std::vector<std::int64_t>{4096, 4096});
  REQUIRE(p.arguments().size() == 3);
  CHECK(p.argument_size(p.arguments()[0], inst) == 16777216);
  CHECK(p.argument_size(p.arguments()[1], inst) == (4096 + 33 - 1) * (4096 + 33 - 1));
  CHECK(p.argument_size(p.arguments()[2], inst) == 33 * 33);
  // grid = ceil(4096 / (block_size_x * tile_size_x)), ceil(4096 / (block_size_y * tile_size_y))
  auto g = p.geometry(p.space().parse_assignments("block_size_x=48,block_size_y=4,tile_size_x=3,"
                                                  "tile_size_y=5"),
                      inst);
  CHECK(g.block == std::array<std::uint32_t, 3>{48, 4, 1});
  CHECK(g.grid == std::array<std::uint32_t, 3>{29, 205, 1});  // ceil(4096/144), ceil(4096/20)
}

TEST_CASE("problem: bad T1 files are InputErrors naming the file and the field",
          "[problem][t1]") {
  SECTION("malformed JSON") { require_load_error("{\"General\": {", {"malformed JSON"}); }
  SECTION("not an object") { require_load_error("[1, 2, 3]", {"not a JSON object"}); }
  SECTION("missing KernelSpecification") {
    require_load_error(R"({"ConfigurationSpace": {"TuningParameters": []}})",
                       {"KernelSpecification"});
  }
  SECTION("missing KernelFile") {
    require_load_error(replace_once(kTinyT1, R"("KernelFile": "tiny.cu",)", ""), {"KernelFile"});
  }
  SECTION("KernelFile that does not exist") {
    require_load_error(replace_once(kTinyT1, R"("KernelFile": "tiny.cu")",
                                    R"("KernelFile": "missing.cu")"),
                       {"KernelFile", "missing.cu"});
    require_load_error(kTinyT1, {"KernelFile", "tiny.cu"}, /*with_source=*/false);
  }
  SECTION("a Values expression that does not parse") {
    require_load_error(replace_once(kTinyT1, R"("[32, 64, 128]")", R"("[32, 64,")"),
                       {"Values", "block_size_x"});
  }
  SECTION("a Values expression that does not evaluate") {
    require_load_error(replace_once(kTinyT1, R"("[32, 64, 128]")", R"("[32 * k for k in nope]")"),
                       {"Values", "nope"});
  }
  SECTION("a Conditions expression naming an unknown parameter") {
    require_load_error(replace_once(kTinyT1, R"("block_size_x * tile <= 256")",
                                    R"("block_size_x * tiles <= 256")"),
                       {"ConfigurationSpace", "tiles"});
  }
  SECTION("a Conditions expression that does not parse") {
    require_load_error(replace_once(kTinyT1, R"("block_size_x * tile <= 256")",
                                    R"("block_size_x * <= 256")"),
                       {"ConfigurationSpace", "block_size_x * <= 256"});
  }
  SECTION("an unknown argument Type") {
    require_load_error(replace_once(kTinyT1, R"("Type": "float", "MemoryType": "Vector")",
                                    R"("Type": "float3", "MemoryType": "Vector")"),
                       {"Arguments[0].Type", "float3"});
  }
  SECTION("an unsupported MemoryType") {
    require_load_error(replace_once(kTinyT1, R"("MemoryType": "Scalar")",
                                    R"("MemoryType": "Texture")"),
                       {"Arguments[1].MemoryType", "Texture"});
  }
  SECTION("a Size expression naming an unknown variable") {
    require_load_error(replace_once(kTinyT1, R"("Size": 100)", R"("Size": "m * 2")"),
                       {"Size", "m"});
  }
  SECTION("a ProblemSize expression naming an unknown variable") {
    require_load_error(replace_once(kTinyT1, R"("ProblemSize": 100)", R"("ProblemSize": "nn")"),
                       {"ProblemSize", "nn"});
  }
  SECTION("a parameter value of the wrong Type") {
    require_load_error(replace_once(kTinyT1, R"("Values": [1, 2, 4])", R"("Values": [1, 2.5, 4])"),
                       {"tile", "Values"});
  }
  SECTION("a problem variable whose Min is not an integer") {
    require_load_error(
        replace_once(kTinyT1, R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},)",
                     R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},
                        "cutune": {"ProblemVariables": [{"Name": "n", "Default": 5, "Min": "one"}]},)"),
        {"ProblemVariables", "Min"});
  }
  SECTION("a Tolerance that is not a number") {
    require_load_error(
        replace_once(kTinyT1, R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},)",
                     R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},
                        "cutune": {"Tolerance": {"Relative": "tight"}},)"),
        {"Tolerance", "Relative"});
  }
  SECTION("a problem variable whose Default is below its Min") {
    require_load_error(
        replace_once(kTinyT1, R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},)",
                     R"("General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},
                        "cutune": {"ProblemVariables": [{"Name": "n", "Default": 0, "Min": 1}]},)"),
        {"ProblemVariables", "n"});
  }
}

// ------------------------------------------------------------------------------------
// Launch sequences (cutune.Launches)

TEST_CASE("problem: a launch sequence is planned per configuration", "[problem][launches]") {
  KernelProblem p = load_template("reduction");
  ProblemInstance inst = p.instantiate("n=1000000");
  REQUIRE(p.launches().size() == 2);
  CHECK(p.kernel_names() == std::vector<std::string>{"reduction", "reduction_final"});

  // combine 0: one launch, the last block finishes; Kernel Tuner's grid.
  auto one = p.plan(config_of(p, "block_size_x=256,elements_per_thread=8,vector_width=4,combine=0"), inst);
  REQUIRE(one.size() == 1);
  CHECK(one[0].spec->kernel_name == "reduction");
  CHECK(one[0].geometry.grid[0] == (1000000 + 8191) / 8192);
  CHECK(one[0].spec->arguments.size() == p.arguments().size());

  // combine 1: a second launch of one block with the arguments it names, in that order.
  auto two = p.plan(config_of(p, "block_size_x=128,elements_per_thread=4,vector_width=2,combine=1"), inst);
  REQUIRE(two.size() == 2);
  CHECK(two[0].geometry.grid[0] == (1000000 + 1023) / 1024);
  CHECK(two[1].spec->kernel_name == "reduction_final");
  CHECK(two[1].geometry.grid == std::array<std::uint32_t, 3>{1, 1, 1});
  CHECK(two[1].geometry.block[0] == 128);
  std::vector<std::string> names;
  for (auto i : two[1].spec->arguments) names.push_back(p.arguments()[i].name);
  CHECK(names == std::vector<std::string>{"out", "workspace", "n"});
}

TEST_CASE("problem: bad launch sequences are InputErrors naming the field", "[problem][launches]") {
  auto with_launches = [](const std::string& launches) {
    return replace_once(kTinyT1, "\n  }\n}", "\n  },\n  \"cutune\": {\"Launches\": " + launches + "}\n}");
  };
  SECTION("an argument that is not declared") {
    require_load_error(with_launches(R"([{"KernelName": "tiny_kernel", "Arguments": ["x", "y"]}])"),
                       {"cutune.Launches[0].Arguments", "'y'"});
  }
  SECTION("no KernelName") {
    require_load_error(with_launches(R"([{"Arguments": ["x"]}])"), {"cutune.Launches[0]", "KernelName"});
  }
  SECTION("a Condition that does not parse") {
    require_load_error(with_launches(R"([{"KernelName": "tiny_kernel", "Condition": "tile =="}])"),
                       {"cutune.Launches[0].Condition"});
  }
  SECTION("an empty sequence") { require_load_error(with_launches("[]"), {"cutune.Launches", "empty"}); }
  SECTION("a Grid of four dimensions") {
    require_load_error(with_launches(R"([{"KernelName": "tiny_kernel", "Grid": ["1", "1", "1", "1"]}])"),
                       {"cutune.Launches[0].Grid"});
  }
}

TEST_CASE("problem: the configured source puts the defines before the kernel file", "[problem]") {
  KernelProblem p = load_template("vector_add");
  std::string src = p.configured_source(config_of(p, "block_size_x=128"));
  CHECK(src.rfind("#define block_size_x 128\n", 0) == 0);
  auto line = src.find("#line 1 \"vector_add.cu\"\n");
  REQUIRE(line != std::string::npos);
  CHECK(src.substr(line + std::string("#line 1 \"vector_add.cu\"\n").size()) == p.source());
}

// ------------------------------------------------------------------------------------
// Launch-only parameters: names the code never sees get no #define, so
// configurations that differ only in them compile to one cubin.

TEST_CASE("problem: a parameter only the grid uses is launch-only and shares the source",
          "[problem][launch_only]") {
  KernelProblem p = KernelProblem::load(fs::path(CUTUNE_TEST_DATA_DIR) / "launch_only" / "launch_only.json");
  CHECK(p.launch_only_parameters() == std::vector<std::string>{"items_per_thread"});
  CHECK(p.is_compile_parameter("block_size_x"));
  CHECK(p.is_compile_parameter("use_ldg"));  // named only in launch_only_load.cuh
  CHECK_FALSE(p.is_compile_parameter("items_per_thread"));
  CHECK_FALSE(p.is_compile_parameter("not_a_parameter"));

  const Config one = config_of(p, "block_size_x=256,items_per_thread=1,use_ldg=1");
  const Config eight = config_of(p, "block_size_x=256,items_per_thread=8,use_ldg=1");
  CHECK(p.configured_source(one) == p.configured_source(eight));
  CHECK(p.configured_source(one).find("items_per_thread") == std::string::npos);
  CHECK(p.configured_source(one) != p.configured_source(config_of(p, "block_size_x=256,items_per_thread=1,use_ldg=0")));
  CHECK(p.configured_source(one) != p.configured_source(config_of(p, "block_size_x=64,items_per_thread=1,use_ldg=1")));
  // Display still shows every parameter.
  CHECK(p.defines(eight) == std::vector<std::string>{"-Dblock_size_x=256", "-Ditems_per_thread=8", "-Duse_ldg=1"});

  // ... while the launch differs: grid = ceil(n / (block_size_x * items_per_thread)).
  ProblemInstance inst = p.instantiate("n=1000000");
  CHECK(p.geometry(one, inst).grid[0] == 3907);
  CHECK(p.geometry(eight, inst).grid[0] == 489);
  CHECK(p.geometry(one, inst).block == p.geometry(eight, inst).block);
}

TEST_CASE("problem: built-in and faulty problems have no launch-only parameters", "[problem][launch_only]") {
  CHECK(KernelProblem::load(fs::path(CUTUNE_TEST_DATA_DIR) / "faulty" / "faulty.json")
            .launch_only_parameters()
            .empty());
  CHECK(load_template("vector_add").launch_only_parameters().empty());
  CHECK(load_template("reduction").launch_only_parameters().empty());
}

TEST_CASE("problem: compile parameters are whole identifiers in the source, its local headers "
          "or the CompilerOptions",
          "[problem][launch_only]") {
  TempDir dir;
  auto load_with = [&](const std::string& cu, const std::string& json_text = kTinyT1) {
    dir.write("tiny.cu", cu);
    return KernelProblem::load(dir.write("tiny.json", json_text));
  };
  using Names = std::vector<std::string>;
  const std::string kernel = "extern \"C\" __global__ void tiny_kernel(float* x, int n) {}\n";

  SECTION("neither is used") { CHECK(load_with(kernel).launch_only_parameters() == Names{"block_size_x", "tile"}); }
  SECTION("longer identifiers that contain a name do not count") {
    KernelProblem p = load_with("#define W (tiles + max_tile + tile2 + block_size_xy + _tile)\n" + kernel);
    CHECK(p.launch_only_parameters() == Names{"block_size_x", "tile"});
    CHECK(p.configured_source(config_of(p, "tile=4")) == "#line 1 \"tiny.cu\"\n" + p.source());
  }
  SECTION("a name next to operators counts, and so does one in a comment") {
    KernelProblem p = load_with("#define W (2*tile)\n// launched with block_size_x threads\n" + kernel);
    CHECK(p.launch_only_parameters().empty());
    CHECK(p.configured_source(config_of(p, "tile=4")).find("#define tile 4\n") != std::string::npos);
  }
  SECTION("headers included with quotes, nested, relative to the including file, each once") {
    fs::create_directories(dir.path() / "inc");
    dir.write("inc/a.cuh", "#pragma once\n  #  include   \"b.cuh\"\n");  // inc/b.cuh, not ./b.cuh
    dir.write("inc/b.cuh", "#pragma once\n#include \"a.cuh\"\n#define T tile\n");  // a cycle
    dir.write("c.cuh", "#define B block_size_x\n");  // reached only through <>: not read
    KernelProblem p = load_with("#include \"inc/a.cuh\"\n#include \"missing.cuh\"\n#include <c.cuh>\n" + kernel);
    CHECK(p.launch_only_parameters() == Names{"block_size_x"});
    CHECK(p.is_compile_parameter("tile"));
  }
  SECTION("a name in the CompilerOptions counts") {
    KernelProblem p = load_with(kernel, replace_once(kTinyT1, R"("CompilerOptions": ["-std=c++11"])",
                                                     R"("CompilerOptions": ["-std=c++11", "-DWIDTH=tile"])"));
    CHECK(p.launch_only_parameters() == Names{"block_size_x"});
  }
}

// ------------------------------------------------------------------------------------
// Kernel Tuner 1.5 and BAT semantics (real kernels, their authors' files)

namespace {

fs::path real_kernels() { return cutune::testing::material("data/real_kernels"); }

// The T1 problems (KernelSpecification + ConfigurationSpace) among the material's JSON files.
std::vector<fs::path> real_t1_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(real_kernels())) {
    if (e.path().extension() != ".json") continue;
    const std::string text = read_file(e.path());
    if (text.find("\"KernelSpecification\"") != std::string::npos && text.find("\"ConfigurationSpace\"") != std::string::npos)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

KernelProblem load_bat(const std::string& name) {
  return KernelProblem::load(real_kernels() / "bat" / name / (name + "-CAFF.json"));
}

}  // namespace

TEST_CASE("problem: every T1 file of the real kernels loads, plans its default and builds its source",
          "[problem][real_kernels][material]") {
  const auto files = real_t1_files();
  CHECK(files.size() >= 7);  // the seven BAT CAFF files
  for (const auto& f : files) {
    INFO(f.string());
    KernelProblem p = KernelProblem::load(f);
    ProblemInstance inst = p.instantiate();
    const Config def = p.space().default_config();
    CHECK(p.space().is_valid(def));
    CHECK(p.space().count_valid() > 0);
    const auto g = p.geometry(def, inst);
    CHECK(g.block[0] * g.block[1] * g.block[2] <= 1024);
    CHECK(p.configured_source(def, inst).find("#line 1 ") != std::string::npos);
  }
}

TEST_CASE("problem: the prefix is Kernel Tuner's prepare_kernel_string, for the names the code reads",
          "[problem][prefix]") {
  // The kernel reads every name Kernel Tuner defines except the parameter `unused`.
  const std::string kernel = R"KERNEL(// Reads every name Kernel Tuner defines: grid_size_x grid_size_y grid_size_z block_size_z
#ifndef kernel_tuner
#define MDIMC 8
#endif
extern "C" __global__ void k(float* x) {
  const char* m = "mode";
  #pragma unroll loop_unroll_factor_i
  for (int i = 0; i < 4; i++) x[i] = MDIMC * NDIMC * tile * scale;

    #pragma  unroll   loop_unroll_factor_i
  for (int i = 0; i < 4; i++) x[i] += 1;
  #pragma unroll loop_unroll_factor_j
  for (int j = 0; j < 4; j++) x[j] += loop_unroll_factor_j + (mode == 0) + launch_only_not;
}
)KERNEL";
  const std::string t1 = R"({
    "ConfigurationSpace": {"TuningParameters": [
      {"Name": "MDIMC", "Type": "int", "Values": [8, 16], "Default": 8},
      {"Name": "NDIMC", "Type": "int", "Values": [4, 8], "Default": 4},
      {"Name": "tile", "Type": "int", "Values": [1, 2], "Default": 1},
      {"Name": "loop_unroll_factor_i", "Type": "int", "Values": [0, 4], "Default": 0},
      {"Name": "loop_unroll_factor_j", "Type": "int", "Values": [2], "Default": 2},
      {"Name": "scale", "Type": "float", "Values": [2.5], "Default": 2.5},
      {"Name": "mode", "Type": "string", "Values": ["NDIMC*tile"], "Default": "NDIMC*tile"},
      {"Name": "unused", "Type": "int", "Values": [7], "Default": 7}]},
    "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
      "LocalSize": {"X": "MDIMC", "Y": "NDIMC", "Z": "1"},
      "ProblemSize": [1000, 64], "GridDivX": ["MDIMC", "tile"], "GridDivY": ["NDIMC"],
      "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": 4, "FillType": "Constant", "FillValue": 0}]}
  })";
  // Kernel Tuner 1.5.0's own output: util.setup_block_and_grid((1000, 64), (["MDIMC", "tile"],
  // ["NDIMC"], None), params, ["MDIMC", "NDIMC", "block_size_z"]) and util.prepare_kernel_string(
  // "k", kernel, params, grid, threads, names, "CUDA", None), params MDIMC=16, NDIMC=8, tile=2,
  // loop_unroll_factor_i=0, loop_unroll_factor_j=2, scale=2.5, mode="NDIMC*tile", unused=7.
  const std::string kernel_tuner = R"KT(#define grid_size_x 32
#define grid_size_y 8
#define grid_size_z 1
#define MDIMC 16
#define NDIMC 8
#define block_size_z 1
#define tile 2
constexpr int loop_unroll_factor_j = 2;
#define scale 2.5
#define mode 8*2
#define unused 7
#define kernel_tuner 1
#line 1
// Reads every name Kernel Tuner defines: grid_size_x grid_size_y grid_size_z block_size_z
#ifndef kernel_tuner
#define MDIMC 8
#endif
extern "C" __global__ void k(float* x) {
  const char* m = "mode";

  for (int i = 0; i < 4; i++) x[i] = MDIMC * NDIMC * tile * scale;

  for (int i = 0; i < 4; i++) x[i] += 1;
  #pragma unroll loop_unroll_factor_j
  for (int j = 0; j < 4; j++) x[j] += loop_unroll_factor_j + (mode == 0) + launch_only_not;
}
)KT";
  TempDir dir;
  dir.write("k.cu", kernel);
  KernelProblem p = KernelProblem::load(dir.write("k.json", t1));
  const Config c = config_of(p, "MDIMC=16,NDIMC=8,tile=2,loop_unroll_factor_i=0");
  // cutune leaves out what the code never reads (`unused`: one cubin for all its values) and
  // names the file in its #line.
  std::string expected = replace_once(kernel_tuner, "#define unused 7\n", "");
  expected = replace_once(expected, "#line 1\n", "#line 1 \"k.cu\"\n");
  CHECK(p.configured_source(c, p.instantiate()) == expected);
  CHECK(p.block_size_names() == std::array<std::string, 3>{"MDIMC", "NDIMC", "block_size_z"});

  // A non-zero unroll factor is a constexpr and the pragma stays.
  const std::string four = p.configured_source(config_of(p, "MDIMC=16,NDIMC=8,tile=2,loop_unroll_factor_i=4"));
  CHECK_THAT(four, Contains("constexpr int loop_unroll_factor_i = 4;\n"));
  CHECK_THAT(four, Contains("#pragma  unroll   loop_unroll_factor_i\n"));
  // Only mentioned names: a kernel reading none of them gets none.
  dir.write("k.cu", "extern \"C\" __global__ void k(float* x) {}\n");
  KernelProblem bare = KernelProblem::load(dir.path() / "k.json");
  CHECK(bare.configured_source(bare.space().default_config()) == "#line 1 \"k.cu\"\n" + bare.source());
}

TEST_CASE("problem: LocalSize names the block (BAT's block_size_names), GlobalSize is the grid",
          "[problem][launch][material]") {
  KernelProblem p = load_bat("GEMM");
  CHECK(p.block_size_names() == std::array<std::string, 3>{"MDIMC", "NDIMC", "block_size_z"});
  const Config c = config_of(p, "MWG=64,NWG=32,KWG=32,MDIMC=8,NDIMC=16,MDIMA=8,NDIMB=16,KWI=2");
  REQUIRE(p.space().is_valid(c));
  const auto g = p.geometry(c, p.instantiate());
  CHECK(g.block == std::array<std::uint32_t, 3>{8, 16, 1});
  CHECK(g.grid == std::array<std::uint32_t, 3>{4096 / 64, 4096 / 32, 1});  // GlobalSizeType CUDA: blocks
  CHECK(g.dynamic_shared_bytes == 49152);                                  // SharedMemory
  CHECK(p.general_objective() == "GFLOPs");
  CHECK(p.general_minimize() == false);
  KernelProblem triad = load_bat("TRIAD");
  CHECK(triad.general_objective().empty());
  CHECK_FALSE(triad.general_minimize().has_value());
}

TEST_CASE("problem: GlobalSizeType OpenCL counts threads", "[problem][launch][material]") {
  KernelProblem nbody = load_bat("nbody");
  const auto g = nbody.geometry(config_of(nbody, "BLOCK_SIZE=256,OUTER_UNROLL_FACTOR=2"), nbody.instantiate());
  CHECK(g.block == std::array<std::uint32_t, 3>{256, 1, 1});
  CHECK(g.grid == std::array<std::uint32_t, 3>{128 * 1024 / 2 / 256, 1, 1});
  KernelProblem hotspot = load_bat("hotspot");
  const auto h = hotspot.geometry(hotspot.space().default_config(), hotspot.instantiate());
  CHECK(h.grid[0] == (4096 + h.block[0] - 1) / h.block[0]);
}

TEST_CASE("problem: SharedMemory and ProblemSize may be expressions over the parameters", "[problem][launch]") {
  TempDir dir;
  std::string text = replace_once(kTinyT1, R"("ProblemSize": 100,)",
                                  R"("ProblemSize": ["100 * tile"], "SharedMemory": "block_size_x * tile * 4",)");
  KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  const auto g = p.geometry(config_of(p, "block_size_x=32,tile=4"), p.instantiate());
  CHECK(g.dynamic_shared_bytes == 32 * 4 * 4);
  CHECK(g.grid[0] == (400 + 127) / 128);  // 100 * tile over GridDivX block_size_x * tile
  CHECK(p.instantiate().problem_size == std::vector<std::int64_t>{100});  // the default's
}

TEST_CASE("problem: without a GridDiv, Kernel Tuner divides by the block name only when it is a parameter",
          "[problem][launch]") {
  TempDir dir;
  std::string text = replace_once(kTinyT1, R"("GridDivX": ["block_size_x", "tile"],)", "");
  text = replace_once(text, R"("Name": "block_size_x")", R"("Name": "bx")");
  text = replace_once(text, "block_size_x * tile <= 256", "bx * tile <= 256");
  KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  const auto g = p.geometry(p.space().default_config(), p.instantiate());
  CHECK(g.block[0] == 256);  // Kernel Tuner's default block
  CHECK(g.grid[0] == 100);   // divisor 1, as util.get_grid_dimensions gives
}

TEST_CASE("problem: the valid space drops blocks above the device's threads per block", "[problem][space]") {
  TempDir dir;
  std::string text = replace_once(kTinyT1, R"("[32, 64, 128]")", R"("[256, 512, 1024, 2048]")");
  text = replace_once(text, R"("Default": 64)", R"("Default": 256)");
  text = replace_once(text, "block_size_x * tile <= 256", "tile > 0");
  KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  CHECK(p.max_threads_per_block() == 1024);
  CHECK(p.space().count_valid() == 3 * 3);  // 2048 dropped
  CHECK(p.space().violated_restriction(config_of(p, "block_size_x=2048")) == "block_size_x <= 1024");
  KernelProblem copy = p;
  p.set_max_threads_per_block(512);
  CHECK(p.space().count_valid() == 2 * 3);
  CHECK(copy.space().count_valid() == 3 * 3);  // a copy keeps its own space
  // LocalSize names other parameters: those are limited, block_size_x is not.
  text = replace_once(text, R"("ProblemSize": 100,)", R"("ProblemSize": 100, "LocalSize": {"X": "tile", "Y": "2"},)");
  KernelProblem q = KernelProblem::load(write_tiny(dir, text));
  CHECK(q.space().count_valid() == 4 * 3);
  CHECK(q.space().block_limit() == "tile <= 1024");
}

TEST_CASE("problem: a Default Kernel Tuner would ignore is one warning and the first valid configuration",
          "[problem][defaults][material]") {
  TempDir dir;
  auto check_fallback = [&](const std::string& text, const std::string& named) {
    KernelProblem p = KernelProblem::load(write_tiny(dir, text));
    REQUIRE(p.warnings().size() == 1);
    INFO(p.warnings()[0]);
    CHECK_THAT(p.warnings()[0], Contains("tiny.json"));
    CHECK_THAT(p.warnings()[0], Contains(named));
    CHECK(p.warnings()[0].find('\n') == std::string::npos);
    Config first;
    REQUIRE(p.space().next_valid(first));
    CHECK(p.space().default_config() == first);
    CHECK_FALSE(p.space().default_named());  // the first valid one is nobody's guess
  };
  SECTION("not among the Values") { check_fallback(replace_once(kTinyT1, R"("Default": 64)", R"("Default": 48)"), "48"); }
  SECTION("a list") { check_fallback(replace_once(kTinyT1, R"("Default": 64)", R"("Default": [0])"), "[0]"); }
  SECTION("breaking a restriction") {
    std::string text = replace_once(kTinyT1, R"("Default": 64)", R"("Default": 128)");
    check_fallback(replace_once(text, R"("Default": 1})", R"("Default": 4})"), "block_size_x * tile <= 256");
  }
  SECTION("BAT's hotspot") {
    KernelProblem p = load_bat("hotspot");
    REQUIRE(p.warnings().size() == 1);
    CHECK_THAT(p.warnings()[0], Contains("MAX_TFACTOR"));
    CHECK(p.space().is_valid(p.space().default_config()));
  }
  SECTION("a valid default warns of nothing") { CHECK(KernelProblem::load(write_tiny(dir, kTinyT1)).warnings().empty()); }
}

TEST_CASE("problem: a default is named by a Default, not by the first listed values", "[problem][defaults]") {
  TempDir dir;
  CHECK(KernelProblem::load(write_tiny(dir, kTinyT1)).space().default_named());
  CHECK(load_template("transpose").space().default_named());
  // Kernel Tuner's scripts name none: each parameter's first value is the default, unnamed.
  std::string text = replace_once(kTinyT1, R"(, "Default": 64})", "}");
  text = replace_once(text, R"(, "Default": 1})", "}");
  const KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  CHECK_FALSE(p.space().default_named());
  CHECK(p.space().default_config() == config_of(p, "block_size_x=32,tile=1"));
  // One parameter's Default names it (the others take their first values).
  CHECK(KernelProblem::load(write_tiny(dir, replace_once(kTinyT1, R"(, "Default": 1})", "}"))).space().default_named());
}

TEST_CASE("problem: BinaryRaw and Generator fill any argument", "[problem][host_data][material]") {
  TempDir dir;
  std::vector<double> values{1.5, -2.25, 3e300, 0.0, 42.0};
  {
    std::ofstream out(dir.path() / "x.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
  }
  std::string text = replace_once(
      kTinyT1,
      R"({"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random", "Size": 100, "FillValue": 1.0, "Output": 1},)",
      R"({"Name": "x", "Type": "double", "MemoryType": "Vector", "FillType": "BinaryRaw", "DataSource": "x.bin", "Size": 5},
         {"Name": "g", "Type": "int32", "MemoryType": "Vector", "FillType": "Generator", "DataSource": "i * 3 % 7", "Size": "ProblemSize[0] // 10"},)");
  KernelProblem p = KernelProblem::load(write_tiny(dir, text));
  auto args = cutune::make_host_arguments(p, p.instantiate(), 1);
  REQUIRE(args.size() == 3);
  REQUIRE(args[0].bytes.size() == values.size() * sizeof(double));
  CHECK(std::memcmp(args[0].bytes.data(), values.data(), args[0].bytes.size()) == 0);
  REQUIRE(args[1].count == 10);
  for (int i = 0; i < 10; ++i) CHECK(args[1].data<std::int32_t>()[i] == i * 3 % 7);
  // A file of the wrong size is one line naming the file and the sizes.
  {
    std::ofstream out(dir.path() / "x.bin", std::ios::binary);
    out << "short";
  }
  try {
    (void)cutune::make_host_arguments(p, p.instantiate(), 1);
    FAIL("no InputError for a 5-byte DataSource");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("DataSource") && Contains("x.bin") && Contains("40"));
  }
  SECTION("BAT's TRIAD: A[i] = i") {
    KernelProblem triad = load_bat("TRIAD");
    auto t = cutune::make_host_arguments(triad, triad.instantiate(), 1);
    REQUIRE(t[0].count == 4096);
    CHECK(t[0].data<double>()[4095] == 4095.0);
  }
}

TEST_CASE("problem: unsupported languages, types and fields are one line naming file, field and value",
          "[problem][errors]") {
  require_load_error(replace_once(kTinyT1, R"("Language": "CUDA")", R"("Language": "OpenCL")"),
                     {"KernelSpecification.Language", "OpenCL"});
  require_load_error(replace_once(kTinyT1, R"("Language": "CUDA")", R"("Language": "HIP")"),
                     {"KernelSpecification.Language", "HIP"});
  require_load_error(replace_once(kTinyT1, R"("Type": "float", "MemoryType": "Vector")",
                                  R"("Type": "float16", "MemoryType": "Vector")"),
                     {"Arguments[0].Type", "float16", "'half'"});  // T1's float16: 16 floats
  require_load_error(replace_once(kTinyT1, R"("Type": "float", "MemoryType": "Vector")",
                                  R"("Type": "float4", "MemoryType": "Vector")"),
                     {"Arguments[0].Type", "float4"});
  require_load_error(replace_once(kTinyT1, R"("FillType": "Random")", R"("FillType": "BinaryRaw", "DataSource": "none.bin")"),
                     {"Arguments[0].DataSource", "none.bin"});
  require_load_error(replace_once(kTinyT1, R"("FillType": "Random")", R"("FillType": "Generator", "DataSource": "i +")"),
                     {"Arguments[0].DataSource"});
  require_load_error(replace_once(kTinyT1, R"("ProblemSize": 100,)", R"("ProblemSize": 100, "GlobalSizeType": "Vulkan",)"),
                     {"GlobalSizeType", "Vulkan"});
  require_load_error(replace_once(kTinyT1, R"("OutputFormat": "JSON")", R"("OutputFormat": "JSON", "Minimize": "yes")"),
                     {"General.Minimize", "yes"});
}

TEST_CASE("problem text: canonical keys, and why an item is refused", "[problem]") {
  CHECK(cutune::problem_key_of("n=2**24") == "n=16777216");
  CHECK(cutune::problem_key_of(" m = 7 ,n=2**3") == "m=7,n=8");  // sorted by name, as ProblemInstance::key
  CHECK(cutune::problem_key_of("ProblemSize=4096x4096") == "ProblemSize=4096x4096");
  CHECK(cutune::parse_problem_assignments("").empty());
  const auto message = [](const std::string& text) {
    try {
      cutune::problem_key_of(text);
    } catch (const cutune::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("n=100,n=200"), Catch::Matchers::Contains("given twice"));
  CHECK_THAT(message("n=1/0"), Catch::Matchers::Contains("ZeroDivisionError: division by zero"));
  CHECK_THAT(message("n=2**100"), Catch::Matchers::Contains("OverflowError"));
  CHECK_THAT(message("n=2**"), Catch::Matchers::Contains("SyntaxError"));
  CHECK_THAT(message("n=0.5"), Catch::Matchers::Contains("not an integer (it is 0.5)"));
  CHECK_THAT(message("=3"), Catch::Matchers::Contains("no name"));
  CHECK_THAT(message("recorded"), Catch::Matchers::Contains("not name=value"));
  CHECK_THAT(message("ProblemSize=4096x"), Catch::Matchers::Contains("not a size"));
  CHECK_THAT(message("ProblemSize=0"), Catch::Matchers::Contains("not a size"));
}

// The point-in-polygon problem file of our own (studies/pnpoly_problem.py, recorded as
// results/spaces/kt_pnpoly): beside Kernel Tuner's pnpoly.cu it loads with pnpoly.py's whole
// space, launches the kernel with its own three arguments, and puts the polygon and the slopes
// in its __constant__ symbols. Its output is not verified (the file says why), so the slopes
// must be the kernel's own: a wrong slopes.bin would make every configuration with
// use_precomputed_slopes 1 compute another answer, and the recording would time those.
TEST_CASE("the point-in-polygon problem file loads beside Kernel Tuner's pnpoly.cu with slopes of its polygon",
          "[problem][real_kernels][material]") {
  const fs::path problem = fs::path(CUTUNE_TEST_DATA_DIR).parent_path().parent_path() / "results" / "spaces" /
                           "kt_pnpoly" / "problem";
  TempDir dir;
  for (const char* f : {"pnpoly-cutune.json", "vertices.bin", "slopes.bin"})
    fs::copy_file(problem / f, dir.path() / f);
  fs::copy_file(cutune::testing::material("data/real_kernels/kernel_tuner_examples/pnpoly.cu"),
                dir.path() / "pnpoly.cu");
  const KernelProblem p = KernelProblem::load(dir.path() / "pnpoly-cutune.json");
  CHECK(p.kernel_name() == "cn_pnpoly");
  CHECK(p.space().count_valid() == 5456);  // 31 x 11 x 4 x 2 x 2, as recorded
  REQUIRE(p.arguments().size() == 5);
  CHECK(p.arguments()[3].constant_memory);
  CHECK(p.arguments()[4].constant_memory);
  REQUIRE(p.launches().size() == 1);
  CHECK(p.launches()[0].arguments == std::vector<std::size_t>{0, 1, 2});
  const std::string source = p.configured_source(p.space().default_config(), p.instantiate());
  CHECK(source.find("__constant__ float2 d_vertices[VERTICES]") != std::string::npos);

  auto floats = [&](const char* name) {
    const std::string bytes = read_file(dir.path() / name);
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
  };
  const std::vector<float> xy = floats("vertices.bin"), slopes = floats("slopes.bin");
  REQUIRE(xy.size() == 1200);  // #define VERTICES 600, float2 each
  REQUIRE(slopes.size() == 600);
  for (std::size_t j = 0, k = 599; j < 600; k = j++) {
    // pnpoly.cu: the edge from vertex j to k = j - 1, slope (vk.x - vj.x) / (vk.y - vj.y) in float.
    const float expected = (xy[2 * k] - xy[2 * j]) / (xy[2 * k + 1] - xy[2 * j + 1]);
    INFO("edge " << j);
    CHECK(slopes[j] == expected);
  }
}
