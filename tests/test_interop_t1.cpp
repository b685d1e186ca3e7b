// T1 problems' verification data: KernelSpecification.ReferenceArguments, read by
// the model and used by the GPU stage instead of the default configuration's output.
#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"

using namespace cutune;
using namespace cutune::testing::cli;
using json = nlohmann::ordered_json;

namespace {

const char* kAddSource = R"(extern "C" __global__ void add(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

/// c = a + b with a = 1.5 and b = 2.25 everywhere (so c = 3.75), n = 1000, and the given
/// ReferenceArguments.
json add_problem(const json& references) {
  return json{
      {"General", {{"BenchmarkName", "refadd"}}},
      {"ConfigurationSpace",
       {{"TuningParameters", json::array({{{"Name", "block_size_x"}, {"Type", "int"}, {"Values", "[32, 64, 128]"},
                                            {"Default", 64}}})},
        {"Conditions", json::array()}}},
      {"KernelSpecification",
       {{"Language", "CUDA"},
        {"KernelName", "add"},
        {"KernelFile", "add.cu"},
        {"ProblemSize", json::array({1000})},
        {"Arguments", json::array({{{"Name", "c"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"AccessType", "WriteOnly"},
                                    {"FillType", "Constant"}, {"FillValue", 0.0}, {"Size", 1000}},
                                   {{"Name", "a"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"FillType", "Constant"},
                                    {"FillValue", 1.5}, {"Size", 1000}},
                                   {{"Name", "b"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"FillType", "Constant"},
                                    {"FillValue", 2.25}, {"Size", 1000}},
                                   {{"Name", "n"}, {"Type", "int32"}, {"MemoryType", "Scalar"}, {"FillValue", 1000}}})},
        {"ReferenceArguments", references}}}};
}

fs::path write_problem(const CliTempDir& dir, const json& references) {
  dir.write("add.cu", kAddSource);
  return dir.write("refadd.json", add_problem(references).dump(2));
}

void write_floats(const fs::path& p, std::size_t n, float v) {
  std::vector<float> data(n, v);
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(data.data()),
                                           static_cast<std::streamsize>(n * sizeof(float)));
}

std::string load_error(const fs::path& p) {
  try {
    (void)KernelProblem::load(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("ReferenceArguments: Constant and BinaryRaw reference data", "[interop]") {
  CliTempDir dir;
  SECTION("Constant, with an absolute threshold") {
    const auto p = KernelProblem::load(write_problem(
        dir, json::array({{{"Name", "c_ref"}, {"TargetName", "c"}, {"FillType", "Constant"}, {"FillValue", 3.75},
                           {"ValidationMethod", "AbsoluteDifference"}, {"ValidationThreshold", 1e-3}}})));
    REQUIRE(p.reference_arguments().size() == 1);
    CHECK(p.arguments()[0].output);  // the target is checked
    CHECK(p.tolerance_of(0).absolute == 1e-3);
    CHECK(p.tolerance_of(0).relative == 0.0);
    const auto out = reference_outputs(p, p.instantiate());
    REQUIRE(out.size() == 4);
    REQUIRE(out[0].count == 1000);
    CHECK(out[0].data<float>()[999] == 3.75f);
    CHECK(out[1].bytes.empty());
  }
  SECTION("BinaryRaw of exactly the argument's size, relative threshold") {
    write_floats(dir.path() / "c.bin", 1000, 3.75f);
    const auto p = KernelProblem::load(write_problem(
        dir, json::array({{{"Name", "c_ref"}, {"TargetName", "c"}, {"FillType", "BinaryRaw"}, {"DataSource", "c.bin"},
                           {"ValidationMethod", "SideBySideRelativeComparison"}, {"ValidationThreshold", 1e-5}}})));
    CHECK(p.tolerance_of(0).relative == 1e-5);
    const auto out = reference_outputs(p, p.instantiate());
    CHECK(out[0].data<float>()[0] == 3.75f);
    // The same file for a problem four times larger: the sizes are named.
    const KernelProblem& same = p;
    write_floats(dir.path() / "c.bin", 999, 3.75f);
    try {
      (void)reference_outputs(same, same.instantiate());
      FAIL("a short DataSource was accepted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Contains("refadd.json") && Contains("ReferenceArguments[0].DataSource") &&
                               Contains("3996 bytes") && Contains("4000"));
    }
  }
  SECTION("bad references: one line naming the file and the field") {
    CHECK_THAT(load_error(write_problem(dir, json::array({{{"Name", "r"}, {"TargetName", "nope"}, {"FillType", "Constant"},
                                                           {"FillValue", 1}}}))),
               Contains("refadd.json") && Contains("ReferenceArguments[0].TargetName") && Contains("nope"));
    CHECK_THAT(load_error(write_problem(dir, json::array({{{"Name", "r"}, {"TargetName", "n"}, {"FillType", "Constant"},
                                                           {"FillValue", 1}}}))),
               Contains("not a Vector"));
    CHECK_THAT(load_error(write_problem(dir, json::array({{{"Name", "r"}, {"TargetName", "c"}, {"FillType", "Script"}}}))),
               Contains("ReferenceArguments[0].FillType") && Contains("Script"));
    CHECK_THAT(load_error(write_problem(dir, json::array({{{"Name", "r"}, {"TargetName", "c"}, {"FillType", "BinaryRaw"},
                                                           {"DataSource", "absent.bin"}}}))),
               Contains("ReferenceArguments[0].DataSource") && Contains("absent.bin"));
    CHECK_THAT(load_error(write_problem(dir, json::array({{{"Name", "r"}, {"TargetName", "c"}, {"FillType", "Constant"},
                                                           {"FillValue", 1}, {"ValidationMethod", "Eyeball"},
                                                           {"ValidationThreshold", 1}}}))),
               Contains("ValidationMethod") && Contains("Eyeball"));
  }
}

TEST_CASE("ReferenceArguments decide correctness on the GPU", "[interop][gpu]") {
  CliTempDir dir;
  auto tune = [&](const json& refs, const std::string& db) {
    const fs::path problem = write_problem(dir, refs);
    const std::vector<std::string> args{"tune", problem.string(), "--db", db, "--finalists", "0"};
    CliResult r = run_cli(args);
    INFO(describe(args, r));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Contains("verification: ReferenceArguments"));
    const db::Store s = db::Store::open(db, false);
    const auto t = s.measurement_targets({});
    REQUIRE(t.size() == 1);
    return s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id);
  };
  const auto good = tune(json::array({{{"Name", "c_ref"}, {"TargetName", "c"}, {"FillType", "Constant"},
                                       {"FillValue", 3.75}}}),
                         dir / "good.db");
  REQUIRE(good.size() == 3);
  for (const auto& m : good) CHECK(m.status == Status::Ok);
  // A wrong answer in the reference: every configuration fails verification, none defines it.
  const auto bad = tune(json::array({{{"Name", "c_ref"}, {"TargetName", "c"}, {"FillType", "Constant"},
                                      {"FillValue", 4.0}}}),
                        dir / "bad.db");
  REQUIRE(bad.size() == 3);
  for (const auto& m : bad) CHECK(m.status == Status::Correctness);
}

TEST_CASE("Constant-memory arguments (MemType Constant) reach the kernel's __constant__ symbol", "[interop][gpu]") {
  CliTempDir dir;
  dir.write("scale.cu", R"(__constant__ float coeff[4];
extern "C" __global__ void scale(float* c, const float* a, const float* coeff_arg, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) c[i] = a[i] * coeff[i % 4];  // reads the constant copy, not coeff_arg
}
)");
  json doc = add_problem(json::array({{{"Name", "c_ref"}, {"TargetName", "c"}, {"FillType", "Constant"},
                                       {"FillValue", 3.0}}}));
  doc["KernelSpecification"]["KernelName"] = "scale";
  doc["KernelSpecification"]["KernelFile"] = "scale.cu";
  auto& args = doc["KernelSpecification"]["Arguments"];
  args[2] = {{"Name", "coeff"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"MemType", "Constant"},
             {"FillType", "Constant"}, {"FillValue", 2.0}, {"Size", 4}};
  const fs::path problem = dir.write("scale.json", doc.dump(2));
  const std::string db = dir / "scale.db";
  const std::vector<std::string> cmd{"tune", problem.string(), "--db", db, "--finalists", "0"};
  CliResult r = run_cli(cmd);
  INFO(describe(cmd, r));
  REQUIRE(r.status == 0);
  const db::Store s = db::Store::open(db, false);
  const auto t = s.measurement_targets({});
  REQUIRE(t.size() == 1);
  for (const auto& m : s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id)) {
    INFO(m.config.key() << ": " << m.error);
    CHECK(m.status == Status::Ok);  // 1.5 * 2.0 == 3.0 only with the constant copy made
  }
}

TEST_CASE("MemType: Constant or Global, Constant only for read-only inputs", "[interop]") {
  CliTempDir dir;
  json doc = add_problem(json::array());
  doc["KernelSpecification"]["Arguments"][1]["MemType"] = "Constant";
  dir.write("add.cu", kAddSource);
  const auto p = KernelProblem::load(dir.write("m.json", doc.dump()));
  CHECK(p.arguments()[1].constant_memory);
  CHECK(!p.arguments()[0].constant_memory);
  doc["KernelSpecification"]["Arguments"][1]["MemType"] = "Texture";
  CHECK_THAT(load_error(dir.write("m.json", doc.dump())), Contains("Arguments[1].MemType") && Contains("Texture"));
  doc["KernelSpecification"]["Arguments"][1]["MemType"] = "Constant";
  doc["KernelSpecification"]["Arguments"][1]["AccessType"] = "ReadWrite";
  CHECK_THAT(load_error(dir.write("m.json", doc.dump())), Contains("ReadOnly"));
}

namespace {
// A kernel written for Kernel Tuner: its stand-alone default of block_size_x is guarded by
// `#ifndef kernel_tuner` (or not), and every thread checks that the macro is the block it runs in.
fs::path write_guarded_problem(const fs::path& dir, bool guarded) {
  const std::string guard_open = guarded ? "#ifndef kernel_tuner\n" : "";
  const std::string guard_close = guarded ? "#endif\n" : "";
  std::ofstream(dir / "guarded.cu") << guard_open << "#define block_size_x 16\n" << guard_close
                                    << "__global__ void same_block(float* ok, int n) {\n"
                                       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                       "  if (i < n) ok[i] = (blockDim.x == block_size_x) ? 1.0f : 0.0f;\n"
                                       "}\n";
  json t1 = {{"ConfigurationSpace",
              {{"TuningParameters", json::array({{{"Name", "block_size_x"}, {"Type", "int"},
                                                  {"Values", "[32, 64, 128, 256]"}, {"Default", 64}}})}}},
             {"KernelSpecification",
              {{"Language", "CUDA"}, {"KernelName", "same_block"}, {"KernelFile", "guarded.cu"},
               {"ProblemSize", json::array({1000})},
               {"Arguments", json::array({{{"Name", "ok"}, {"Type", "float"}, {"MemoryType", "Vector"},
                                           {"AccessType", "WriteOnly"}, {"Size", 1000}},
                                          {{"Name", "n"}, {"Type", "int32"}, {"MemoryType", "Scalar"},
                                           {"FillValue", 1000}}})},
               {"ReferenceArguments", json::array({{{"Name", "ok_ref"}, {"TargetName", "ok"},
                                                    {"FillType", "Constant"}, {"FillValue", 1}}})}}}};
  const fs::path file = dir / (guarded ? "guarded.json" : "unguarded.json");
  std::ofstream(file) << t1.dump(1);
  return file;
}
}  // namespace

TEST_CASE("a kernel's #ifndef kernel_tuner default yields to the tuned value, and an unguarded one fails to compile",
          "[interop][gpu]") {
  CliTempDir dir;
  auto tune = [&](bool guarded) {
    const std::string db = (dir.path() / (guarded ? "g.db" : "u.db")).string();
    const std::vector<std::string> args{"tune", write_guarded_problem(dir.path(), guarded).string(), "--db", db,
                                        "--finalists", "0", "--no-cache"};
    CliResult r = run_cli(args);
    INFO(describe(args, r));
    const db::Store s = db::Store::open(db, false);
    const auto t = s.measurement_targets({});
    REQUIRE(t.size() == 1);
    return s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id);
  };
  const auto guarded = tune(true);
  REQUIRE(guarded.size() == 4);
  for (const auto& m : guarded) {
    INFO(m.config.key() << ": " << m.error);
    CHECK(m.status == Status::Ok);  // blockDim.x == block_size_x in every thread
  }
  const auto unguarded = tune(false);
  REQUIRE(unguarded.size() == 4);
  for (const auto& m : unguarded) {
    INFO(m.config.key() << ": " << m.error);
    CHECK(m.status == Status::Compile);
    CHECK_THAT(m.error, Contains("redefines a tuning parameter's macro"));
  }
}
