// Output verification: the element test (numpy.allclose's, NaN equal to NaN, the poison
// never accepted), the modes per output (problem file, --verify), read-write arguments
// restored before every launch, and the comparison on the device ([gpu]).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli_runner.hpp"
#include "cutune/cuda/device.hpp"
#include "cutune/cuda/output_compare.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/element_check.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/worker/gpu_stage.hpp"
#include "test_paths.hpp"

using namespace cutune;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using cutune::testing::cli::CliTempDir;
using cutune::testing::cli::run_cli;

namespace {

const ArgumentSpec& spec_of(ElementType t) {
  static std::map<ElementType, ArgumentSpec> specs;
  auto& s = specs[t];
  s.name = "out";
  s.type = t;
  s.output = true;
  return s;
}

template <class T>
HostArgument host(ElementType t, const std::vector<T>& v) {
  HostArgument a{&spec_of(t), static_cast<std::int64_t>(v.size()), {}};
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

/// Writes a T1 problem (kernel `source` in kernel.cu) into `dir`; returns the JSON's path.
std::filesystem::path write_problem(const std::filesystem::path& dir, const std::string& source,
                                    const nlohmann::json& spec_extra, const nlohmann::json& params,
                                    const nlohmann::json& cutune_section = nlohmann::json::object()) {
  std::ofstream(dir / "kernel.cu") << source;
  nlohmann::json j;
  j["General"] = {{"BenchmarkName", "verify_test"}, {"OutputFormat", "JSON"}};
  j["ConfigurationSpace"] = {{"TuningParameters", params}, {"Conditions", nlohmann::json::array()}};
  nlohmann::json spec{{"Language", "CUDA"}, {"KernelName", "k"}, {"KernelFile", "kernel.cu"},
                      {"ProblemSize", {"n"}}};
  spec.update(spec_extra);
  j["KernelSpecification"] = spec;
  nlohmann::json cut{{"ProblemVariables", {{{"Name", "n"}, {"Default", 1000}}}}};
  cut.update(cutune_section);
  j["cutune"] = cut;
  std::ofstream(dir / "problem.json") << j.dump(2);
  return dir / "problem.json";
}

nlohmann::json vec(const std::string& name, const std::string& access, const std::string& fill, double value,
                   bool output = false) {
  nlohmann::json a{{"Name", name}, {"Type", "float"}, {"MemoryType", "Vector"}, {"AccessType", access},
                   {"FillType", fill}, {"FillValue", value}, {"Size", "n"}};
  if (output) a["Output"] = 1;
  return a;
}
nlohmann::json scalar(const std::string& name, const std::string& type, const std::string& value) {
  return {{"Name", name}, {"Type", type}, {"MemoryType", "Scalar"}, {"AccessType", "ReadOnly"}, {"FillValue", value}};
}
nlohmann::json param(const std::string& name, std::vector<int> values) {
  return {{"Name", name}, {"Type", "int"}, {"Values", values}, {"Default", values.front()}};
}

// out[i] = in[i] + offset, all but the last element when skip_last.
const char* kOffsetKernel = R"(
extern "C" __global__ void k(float* out, const float* in, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n - skip_last) out[i] = in[i] + offset;
}
)";

std::filesystem::path offset_problem(const std::filesystem::path& dir, bool with_answer,
                                     const nlohmann::json& cutune_section = nlohmann::json::object()) {
  nlohmann::json extra{{"Arguments", {vec("out", "WriteOnly", "Constant", 0.0, true), vec("in", "ReadOnly", "Constant", 1.0),
                                      scalar("n", "int32", "n")}}};
  if (with_answer)
    extra["ReferenceArguments"] = {{{"Name", "answer"}, {"TargetName", "out"}, {"FillType", "Constant"}, {"FillValue", 1.0}}};
  return write_problem(dir, kOffsetKernel, extra,
                       {param("block_size_x", {128, 64}), param("offset", {0, 1}), param("skip_last", {0, 1})},
                       cutune_section);
}

}  // namespace

// ---------------------------------------------------------------------------- CPU

TEST_CASE("the element test is numpy.allclose(expected, got, rtol=1e-5, atol=1e-6, equal_nan=True)", "[verify]") {
  // Pairs placed within a few percent of the tolerance's edge, and numpy.isclose's verdicts
  // (numpy 2.4.6, in the arrays' own precision; rtol scales |got|).
  const Tolerance kt{1e-5, 1e-6};
  SECTION("float32") {
    const std::vector<float> e{61.00058364868164f, 61.588157653808594f, 3.0651121139526367f, -42.839725494384766f, -89.21385955810547f, -23.326223373413086f, -18.30535888671875f, -90.94496154785156f, -90.24845886230469f, 99.83522033691406f, 30.47382164001465f, -53.09796142578125f, -13.010489463806152f, 94.83724212646484f, 79.5355224609375f, 68.84620666503906f, -21.519067764282227f, -1.3953962326049805f, 35.33787155151367f, -87.8394546508789f, 11.119223594665527f, -45.709678649902344f, 75.93023681640625f, -87.15711212158203f};
    const std::vector<float> g{61.00120162963867f, 61.587528228759766f, 3.065143346786499f, -42.84016418457031f, -89.21294403076172f, -23.32645034790039f, -18.305171966552734f, -90.94584655761719f, -90.24935913085938f, 99.83621215820312f, 30.473522186279297f, -53.098487854003906f, -13.01062297821045f, 94.83818054199219f, 79.53630065917969f, 68.84551239013672f, -21.51885223388672f, -1.395411491394043f, 35.3375244140625f, -87.83858489990234f, 11.119109153747559f, -45.70922088623047f, 75.93099975585938f, -87.15797424316406f};
    const std::string numpy = "001001011111011010110101";
    for (std::size_t i = 0; i < e.size(); ++i) {
      INFO(i);
      CHECK(element_check::check_float<float, std::uint32_t>(e[i], g[i], 0u, 0u, kt.absolute, kt.relative).ok ==
            (numpy[i] == '1'));
    }
    const VerifyResult r = compare(host(ElementType::Float32, e), host(ElementType::Float32, g), kt);
    CHECK_FALSE(r.ok);
    CHECK(r.failures == 10);
  }
  SECTION("float64") {
    const std::vector<double> e{-23.90492587133528, 42.65157282489042, 22.50356083306238, 88.20019504852036, 98.33534339803927, 44.73525093015925, 61.76876180693398, -69.42699537086543, 42.57805251331368, 69.52487605090678, -19.754850401473718, 10.650007958708187, -4.102449647827584, 91.70459995987429, -36.544431944656864, -19.58309461244683, -99.81604217782684, -15.963093061373911, 26.287221226458016, 86.99221883733006, 84.73531695154693, -34.530037335180424, 97.77220512380384, -62.46501195309624};
    const std::vector<double> g{-23.90517057637843, 42.651991549001075, 22.503336084519074, 88.20105545303699, 98.33433789839421, 44.73479373260354, 61.76815649078996, -69.42769177159826, 42.57763192601848, 69.52557195609778, -19.75465121913133, 10.650112919176124, -4.102406704569131, 91.70550581585634, -36.54406666291892, -19.58290301021326, -99.81701152801007, -15.96325075429594, 26.287482592019114, 86.99311213072708, 84.73618514235018, -34.530383230403466, 97.77122905840639, -62.46564387196884};
    const std::string numpy = "011100101101011111100110";
    for (std::size_t i = 0; i < e.size(); ++i) {
      INFO(i);
      CHECK(element_check::check_float<double, std::uint64_t>(e[i], g[i], 0ull, 0ull, kt.absolute, kt.relative).ok ==
            (numpy[i] == '1'));
    }
    CHECK(compare(host(ElementType::Float64, e), host(ElementType::Float64, g), kt).failures == 9);
  }
  SECTION("rtol scales |got|, not |expected|") {
    // numpy.isclose(1.0, 1.1, rtol=0.1, atol=0) is True; isclose(1.1, 1.0, ...) is False.
    CHECK(compare(host(ElementType::Float64, std::vector<double>{1.0}), host(ElementType::Float64, std::vector<double>{1.1}),
                  Tolerance{0.1, 0.0}).ok);
    CHECK_FALSE(compare(host(ElementType::Float64, std::vector<double>{1.1}),
                        host(ElementType::Float64, std::vector<double>{1.0}), Tolerance{0.1, 0.0}).ok);
  }
}

TEST_CASE("NaN and infinity: NaN equals NaN, never a number, and equal infinities match", "[verify]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tolerance t{1e-5, 1e-6};
  auto ok = [&](float e, float g) {
    return compare(host(ElementType::Float32, std::vector<float>{e}), host(ElementType::Float32, std::vector<float>{g}), t).ok;
  };
  CHECK(ok(nan, nan));         // Kernel Tuner: NaN in the answer counts equal to NaN
  CHECK_FALSE(ok(nan, 1.0f));
  CHECK_FALSE(ok(1.0f, nan));  // a NaN never passes for a number
  CHECK(ok(inf, inf));
  CHECK_FALSE(ok(inf, -inf));
  CHECK_FALSE(ok(1e30f, inf));
  CHECK_FALSE(ok(inf, 1e30f));
}

TEST_CASE("the poison of a WriteOnly output fails even where the answer is NaN", "[verify]") {
  HostArgument got = host(ElementType::Float32, std::vector<float>(4, 0.0f));
  poison(got);
  std::vector<float> g(4);
  std::memcpy(g.data(), got.bytes.data(), 16);
  g[0] = 5.0f;
  g[2] = std::numeric_limits<float>::quiet_NaN();  // computed: not the poison
  const HostArgument e = host(ElementType::Float32, std::vector<float>{5.0f, std::nanf(""), std::nanf(""), 1.0f});
  const Tolerance t{1e-5, 0.0};
  // Unpoisoned, element 1 would pass as NaN == NaN.
  VerifyResult plain = compare(e, host(ElementType::Float32, g), t, /*poisoned=*/false);
  CHECK(plain.failures == 1);  // element 3 only
  VerifyResult r = compare(e, host(ElementType::Float32, g), t, /*poisoned=*/true);
  CHECK(r.failures == 2);     // elements 1 (never written) and 3
  CHECK(r.worst_index == 1);  // both rank as infinitely wrong; the lower index is shown
  CHECK_THAT(r.message, Contains("out[1] was never written"));
  CHECK_THAT(r.message, Contains("2 of 4 elements differ"));
}

TEST_CASE("integers compare exactly and the worst element is shown", "[verify]") {
  const std::vector<std::int32_t> e{200001, 7, -5, 100};
  const std::vector<std::int32_t> g{200000, 7, 5, 100};  // numpy.allclose would accept element 0
  VerifyResult r = compare(host(ElementType::Int32, e), host(ElementType::Int32, g), Tolerance{1e-5, 1e-6});
  CHECK(r.failures == 2);
  CHECK(r.worst_index == 2);  // |5 - -5| = 10 beats 1
  CHECK(r.max_error == 10.0);
  CHECK_THAT(r.message, StartsWith("out[2] = 5, expected -5"));
  const std::vector<std::uint64_t> ue{~0ull, 1}, ug{0, 1};
  VerifyResult u = compare(host(ElementType::UInt64, ue), host(ElementType::UInt64, ug), Tolerance{});
  CHECK(u.failures == 1);
  CHECK(u.max_error == Approx(1.8446744073709552e19));
}

TEST_CASE("verification modes: natural defaults, cutune.Verification, --verify overrides", "[verify]") {
  CliTempDir dir;
  SECTION("ReferenceArguments: reference; --verify default / none / out=none") {
    const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), true));
    CHECK(plan_verification(p).modes[0] == VerifyMode::Reference);
    CHECK(plan_verification(p).modes[1] == VerifyMode::None);  // an input
    CHECK(plan_verification(p).describe(p) == "ReferenceArguments");
    CHECK(plan_verification(p, {"default"}).modes[0] == VerifyMode::Default);
    CHECK(plan_verification(p, {"default"}).describe(p) == "default configuration");
    CHECK(plan_verification(p, {"none"}).modes[0] == VerifyMode::None);
    CHECK(plan_verification(p, {"default", "out=none"}).modes[0] == VerifyMode::None);  // later wins
    CHECK(plan_verification(p, {"in=default"}).describe(p) == "out: ReferenceArguments, in: default configuration");
  }
  SECTION("no reference: default; asking for a reference is bad input naming the output") {
    const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), false));
    CHECK(plan_verification(p).modes[0] == VerifyMode::Default);
    CHECK_THROWS_WITH(plan_verification(p, {"reference"}), Contains("output 'out' has no reference"));
    CHECK_THROWS_WITH(plan_verification(p, {"out=exact"}), Contains("unknown mode 'exact'"));
    CHECK_THROWS_WITH(plan_verification(p, {"nosuch=none"}), Contains("no Vector argument named 'nosuch'"));
    CHECK_THROWS_WITH(plan_verification(p, {"n=none"}), Contains("no Vector argument named 'n'"));
  }
  SECTION("cutune.Verification in the problem file") {
    const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", {{"out", "none"}}}}));
    CHECK(plan_verification(p).modes[0] == VerifyMode::None);
    CHECK(plan_verification(p, {"out=default"}).modes[0] == VerifyMode::Default);  // the run overrides the file
    // Naming an argument that is no output makes it one.
    const KernelProblem q = KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", {{"in", "default"}}}}));
    CHECK(q.arguments()[1].output);
    CHECK(plan_verification(q).modes[1] == VerifyMode::Default);
  }
  SECTION("cutune.Verification: bad entries name the file and the field") {
    CHECK_THROWS_WITH(KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", {{"out", "reference"}}}})),
                      Contains("cutune.Verification.out") && Contains("neither cutune.Reference"));
    CHECK_THROWS_WITH(KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", {{"out", "maybe"}}}})),
                      Contains("cutune.Verification.out") && Contains("unknown 'maybe'"));
    CHECK_THROWS_WITH(KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", {{"x", "none"}}}})),
                      Contains("problem.json") && Contains("cutune.Verification.x"));
    CHECK_THROWS_WITH(KernelProblem::load(offset_problem(dir.path(), false, {{"Verification", "none"}})),
                      Contains("cutune.Verification") && Contains("must be an object"));
  }
  SECTION("a CPU reference (built-in template): reference") {
    const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
    const VerificationPlan plan = plan_verification(p);
    CHECK(plan.describe(p) == "reference");
    CHECK(plan.any(VerifyMode::Reference));
  }
}

TEST_CASE("tune --verify: a bad mode or output exits 2 naming it, before any GPU work", "[verify]") {
  CliTempDir dir;
  const auto json = offset_problem(dir.path(), false);
  auto r = run_cli({"tune", json.string(), "--verify", "out=sometimes", "--db", (dir.path() / "x.db").string()});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Contains("--verify out=sometimes") && Contains("unknown mode"));
  r = run_cli({"tune", json.string(), "--verify", "reference", "--db", (dir.path() / "x.db").string()});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Contains("'out' has no reference"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "x.db"));
}

// ---------------------------------------------------------------------------- GPU

namespace {

struct Compiled {
  Config config;
  std::vector<char> cubin;
  std::vector<std::string> lowered_names;
};

Compiled compile_for(const KernelProblem& p, const std::string& assignments, const std::string& arch) {
  Compiled c{p.space().parse_assignments(assignments), {}, {}};
  jit::CompileResult r = jit::compile(jit::compile_request(p, c.config, arch));
  INFO(r.log);
  REQUIRE(r.ok);
  c.cubin = r.cubin;
  c.lowered_names = r.lowered_names;
  return c;
}

worker::MeasureOptions quick(std::vector<std::string> verify = {}) {
  worker::MeasureOptions o;
  o.screening.min_samples = 5;
  o.screening.max_samples = 8;
  o.finalists = 0;
  o.verify = std::move(verify);
  return o;
}

}  // namespace

TEST_CASE("a read-write argument (c = a*b + c) verifies and every sample starts from the same c", "[gpu]") {
  cuda::Context ctx(0);
  const std::string arch = cuda::identify(0).arch();
  // A trace in pinned host memory: launch k records c[0] as that launch found it. Its
  // address reaches the kernel as a uint64 scalar (the primary context is shared).
  cuda::PinnedHostBuffer trace(4 * 4096);
  std::memset(trace.get(), 0, 4 * 4096);
  CliTempDir dir;
  const char* source = R"(
extern "C" __global__ void k(const float* a, const float* b, float* c, int n, unsigned long long trace) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i == 0) {
    unsigned slot = atomicAdd((unsigned*)trace, 1u);
    if (slot < 4000) ((volatile float*)trace)[1 + slot] = c[0];
  }
  if (i < n) c[i] = a[i] * b[i] + c[i];
}
)";
  const auto address = std::to_string(reinterpret_cast<std::uintptr_t>(trace.get()));
  nlohmann::json extra{
      {"Arguments",
       {vec("a", "ReadOnly", "Constant", 2.0), vec("b", "ReadOnly", "Constant", 3.0), vec("c", "ReadWrite", "Constant", 1.5),
        scalar("n", "int32", "n"), scalar("trace", "uint64", address)}},
      {"ReferenceArguments", {{{"Name", "answer"}, {"TargetName", "c"}, {"FillType", "Constant"}, {"FillValue", 7.5}}}}};
  const KernelProblem p = KernelProblem::load(write_problem(dir.path(), source, extra, nlohmann::json::array({param("block_size_x", {128, 256})})));
  worker::GpuStage stage(p, p.instantiate(), 0, quick(), 1);
  CHECK(stage.verification_source() == "ReferenceArguments");
  // The data fits in L2, but the copy that restores c before each sample leaves it there:
  // a flush, not rotation, keeps the samples cold.
  CHECK(stage.l2_method() == L2Method{L2Method::Kind::Flush, 1});
  for (const char* cfg : {"block_size_x=128", "block_size_x=256"}) {
    std::memset(trace.get(), 0, 4 * 4096);
    const Compiled c = compile_for(p, cfg, arch);
    const GpuEvaluation ev = stage.evaluate(c.config, c.cubin, c.lowered_names, std::nullopt);
    INFO(cfg << ": " << ev.error);
    REQUIRE(ev.status == Status::Ok);
    const auto* t = static_cast<const volatile std::uint32_t*>(trace.get());
    const auto* seen = static_cast<const volatile float*>(trace.get()) + 1;
    const std::size_t launches = ev.stats->set.samples_ms.size() + ev.stats->set.discarded_ms.size() + 1;
    CHECK(t[0] == launches);  // the verification launch and every sample
    for (std::uint32_t k = 0; k < t[0]; ++k) {
      INFO("launch " << k);
      CHECK(seen[k] == 1.5f);  // never 7.5, 13.5, ...: each launch found the initial c
    }
  }
}

TEST_CASE("a WriteOnly output is poisoned: an element left unwritten fails", "[gpu]") {
  cuda::Context ctx(0);
  const std::string arch = cuda::identify(0).arch();
  CliTempDir dir;
  SECTION("against a reference") {
    const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), true));
    worker::GpuStage stage(p, p.instantiate(), 0, quick(), 1);
    const Compiled all = compile_for(p, "offset=0,skip_last=0", arch);
    CHECK(stage.evaluate(all.config, all.cubin, all.lowered_names, std::nullopt).status == Status::Ok);
    const Compiled skip = compile_for(p, "offset=0,skip_last=1", arch);
    const GpuEvaluation ev = stage.evaluate(skip.config, skip.cubin, skip.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Correctness);
    CHECK_THAT(ev.error, Contains("out[999] was never written") && Contains("1 of 1000 elements differ"));
  }
  SECTION("a configuration that leaves the poison cannot define the default's answer") {
    const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), false));
    worker::GpuStage stage(p, p.instantiate(), 0, quick(), 1);
    const Compiled skip = compile_for(p, "offset=0,skip_last=1", arch);
    GpuEvaluation ev = stage.evaluate(skip.config, skip.cubin, skip.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Correctness);
    CHECK_THAT(ev.error, StartsWith("cannot define the expected output: out[999] was never written"));
    CHECK_FALSE(ev.defined_expected);
    const Compiled all = compile_for(p, "offset=0,skip_last=0", arch);
    ev = stage.evaluate(all.config, all.cubin, all.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Ok);
    CHECK(ev.defined_expected);  // defines it
    ev = stage.evaluate(skip.config, skip.cubin, skip.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Correctness);
    CHECK_THAT(ev.error, StartsWith(std::string(kDiffersFromDefault) + "out[999] was never written"));
  }
}

TEST_CASE("verification modes reference, default and none on the GPU", "[gpu]") {
  cuda::Context ctx(0);
  const std::string arch = cuda::identify(0).arch();
  CliTempDir dir;
  const KernelProblem p = KernelProblem::load(offset_problem(dir.path(), true));  // answer: out = 1
  const Compiled zero = compile_for(p, "offset=0", arch), one = compile_for(p, "offset=1", arch);
  SECTION("reference: the answer decides, whatever runs first") {
    worker::GpuStage stage(p, p.instantiate(), 0, quick(), 1);
    const auto ev = stage.evaluate(one.config, one.cubin, one.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Correctness);
    CHECK_THAT(ev.error, StartsWith("out[0] = 2, expected 1 (1000 of 1000 elements differ)"));
    CHECK(stage.evaluate(zero.config, zero.cubin, zero.lowered_names, std::nullopt).status == Status::Ok);
  }
  SECTION("default: the first configuration decides") {
    worker::GpuStage stage(p, p.instantiate(), 0, quick({"default"}), 1);
    CHECK(stage.verification_source() == "default configuration");
    CHECK(stage.verification().any(VerifyMode::Default));
    const auto first = stage.evaluate(one.config, one.cubin, one.lowered_names, std::nullopt);
    CHECK(first.status == Status::Ok);
    CHECK(first.defined_expected);
    const auto ev = stage.evaluate(zero.config, zero.cubin, zero.lowered_names, std::nullopt);
    CHECK(ev.status == Status::Correctness);
    CHECK_FALSE(ev.defined_expected);
    CHECK_THAT(ev.error, StartsWith(std::string(kDiffersFromDefault) + "out[0] = 1, expected 2"));
  }
  SECTION("none: nothing is checked") {
    for (const char* v : {"none", "out=none"}) {
      worker::GpuStage stage(p, p.instantiate(), 0, quick({v}), 1);
      CHECK(stage.evaluate(one.config, one.cubin, one.lowered_names, std::nullopt).status == Status::Ok);
      CHECK(stage.evaluate(zero.config, zero.cubin, zero.lowered_names, std::nullopt).status == Status::Ok);
    }
  }
}

TEST_CASE("tune: most of a space differing from the default is said in one line naming --verify", "[gpu]") {
  CliTempDir dir;
  nlohmann::json extra{{"Arguments", {vec("out", "WriteOnly", "Constant", 0.0, true), vec("in", "ReadOnly", "Random", 1.0),
                                      scalar("n", "int32", "n")}}};
  const char* source = R"(
extern "C" __global__ void k(float* out, const float* in, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) out[i] = in[i] + offset;
}
)";
  const KernelProblem p = KernelProblem::load(
      write_problem(dir.path(), source, extra, {param("block_size_x", {128}), param("offset", {0, 1, 2, 3, 4, 5})}));
  std::ostringstream log;
  runner::TuneOptions o;
  o.db = dir.path() / "t.db";
  o.strategy = "brute_force";
  o.log = &log;
  o.measure = quick();
  runner::TuneReport r = runner::tune(p, o);
  INFO(log.str());
  CHECK_THAT(log.str(), Contains("5 of 6 configurations fail verification against the default configuration's output") &&
                            Contains("--verify none"));
  // With --verify none the same space is all measured.
  std::ostringstream log2;
  o.db = dir.path() / "t2.db";
  o.log = &log2;
  o.measure = quick({"none"});
  r = runner::tune(p, o);
  CHECK(r.failures_by_status.empty());
  CHECK_THAT(log2.str(), !Contains("fail verification against"));
}

TEST_CASE("the device comparison agrees with the host's: match, mismatch, worst index", "[gpu]") {
  cuda::Context ctx(0);
  cuda::OutputComparator cmp;
  std::mt19937_64 rng(3);
  auto both = [&](const HostArgument& e, const HostArgument& g, const Tolerance& t, bool poisoned) {
    cuda::DeviceBuffer de(e.bytes.size()), dg(g.bytes.size());
    de.upload(e.bytes.data(), e.bytes.size());
    dg.upload(g.bytes.data(), g.bytes.size());
    const VerifyResult h = compare(e, g, t, poisoned);
    const VerifyResult d = cmp.compare(*e.spec, de.get(), dg.get(), e.count, t, poisoned);
    CHECK(d.ok == h.ok);
    CHECK(d.failures == h.failures);
    CHECK(d.worst_index == h.worst_index);
    CHECK(d.max_error == h.max_error);
    CHECK(d.message == h.message);
    return h;
  };
  const Tolerance t{1e-5, 1e-6};
  const std::size_t n = (1u << 20) + 37;  // many blocks, a ragged tail
  SECTION("float32 and float64, near the tolerance's edge, with NaNs and the poison") {
    auto run = [&](auto tag, ElementType type) {
      using T = decltype(tag);
      std::uniform_real_distribution<double> u(-100, 100), f(0.9, 1.1);
      std::vector<T> e(n), g(n);
      for (std::size_t i = 0; i < n; ++i) {
        e[i] = static_cast<T>(u(rng));
        const double tol = 1e-6 + 1e-5 * std::fabs(static_cast<double>(e[i]));
        g[i] = static_cast<T>(e[i] + (i % 2 ? 1 : -1) * tol * f(rng) * (i % 1000 == 7 ? 1.0 : 0.5));
      }
      CHECK(both(host(type, e), host(type, e), t, false).ok);  // identical
      e[11] = g[11] = std::numeric_limits<T>::quiet_NaN();     // NaN == NaN
      HostArgument gh = host(type, g);
      both(host(type, e), gh, t, false);
      g[500000] = std::numeric_limits<T>::quiet_NaN();  // a NaN for a number: the worst
      const VerifyResult r = both(host(type, e), host(type, g), t, false);
      CHECK_FALSE(r.ok);
      CHECK(r.worst_index == 500000);
      HostArgument poisoned = host(type, g);
      HostArgument p = poisoned;
      poison(p);
      std::memcpy(poisoned.bytes.data() + 3 * sizeof(T), p.bytes.data(), sizeof(T));  // element 3 unwritten
      const VerifyResult q = both(host(type, e), poisoned, t, true);
      CHECK(q.worst_index == 3);
      CHECK_THAT(q.message, Contains("out[3] was never written"));
    };
    run(float{}, ElementType::Float32);
    run(double{}, ElementType::Float64);
  }
  SECTION("integers") {
    std::vector<std::int32_t> e(n), g;
    for (auto& x : e) x = static_cast<std::int32_t>(rng());
    g = e;
    CHECK(both(host(ElementType::Int32, e), host(ElementType::Int32, g), t, false).ok);
    g[123456] += 1;
    g[999999] -= 5;
    g[42] += 5;  // ties with 999999: the lower index is the worst
    const VerifyResult r = both(host(ElementType::Int32, e), host(ElementType::Int32, g), t, false);
    CHECK(r.failures == 3);
    CHECK(r.worst_index == 42);
    std::vector<std::int8_t> e8(n, -3), g8(n, -3);
    g8[n - 1] = 4;
    CHECK(both(host(ElementType::Int8, e8), host(ElementType::Int8, g8), t, false).worst_index == n - 1);
    std::vector<std::uint64_t> e64(n, ~0ull), g64(n, ~0ull);
    g64[77] = 0;
    CHECK(both(host(ElementType::UInt64, e64), host(ElementType::UInt64, g64), t, false).worst_index == 77);
  }
}

TEST_CASE("the device comparison of a GEMM-sized output (16M floats) takes a few milliseconds at most", "[gpu]") {
  // On the CPU, download and compare cost 130 ms per configuration of a 4096^2 GEMM.
  cuda::Context ctx(0);
  cuda::OutputComparator cmp;
  const std::size_t n = std::size_t{1} << 24;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) * 0.5f;
  const HostArgument h = host(ElementType::Float32, v);
  cuda::DeviceBuffer e(h.bytes.size()), g(h.bytes.size());
  e.upload(h.bytes.data(), h.bytes.size());
  g.upload(h.bytes.data(), h.bytes.size());
  CHECK(cmp.compare(*h.spec, e.get(), g.get(), h.count, Tolerance{1e-5, 1e-6}, true).ok);  // warm-up
  std::vector<double> ms;
  for (int k = 0; k < 11; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(cmp.compare(*h.spec, e.get(), g.get(), h.count, Tolerance{1e-5, 1e-6}, true).ok);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::cout << "device comparison of 2^24 float32: median " << ms[5] << " ms, min " << ms[0] << " ms\n";
  CHECK(ms[5] < 10.0);
}

// A kernel of the element types CUDA programmers pass from Kernel Tuner: __half, float2 and
// double2 (cuComplex) arrays, and __half, float2 and double2 scalars by value (2, 8 and 16
// bytes; the double2 one 16-aligned in the kernel's parameters, which the driver lays out).
const char* kMixedTypesKernel = R"(
#include <cuda_fp16.h>
extern "C" __global__ void k(__half* out_h, float2* out_c, double2* out_z, const __half* in_h, const float2* in_c,
                             const double2* in_z, __half sh, float2 sc, double2 sz, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n - skip_last) {
    out_h[i] = __hadd(in_h[i], sh);
    out_c[i] = make_float2(in_c[i].x * sc.x - in_c[i].y * sc.y, in_c[i].x * sc.y + in_c[i].y * sc.x);
    out_z[i] = make_double2(in_z[i].x + sz.x, in_z[i].y + sz.y + offset);
  }
}
)";

template <class T>
void write_values(const std::filesystem::path& file, const std::vector<T>& values) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
}

TEST_CASE("half, float2 and double2 arrays and scalars reach a kernel and verify against their answers", "[gpu]") {
  cuda::Context ctx(0);
  const std::string arch = cuda::identify(0).arch();
  CliTempDir dir;
  const std::size_t n = 1000;  // write_problem's n
  write_values(dir.path() / "sc.bin", std::vector<float>{0.0f, 1.0f});        // i: multiplies by i
  write_values(dir.path() / "sz.bin", std::vector<double>{1.25, -3.5});
  std::vector<Complex<float>> c_answer(n, Complex<float>{0.0f, 2.0f});       // (2 + 0i) * i
  std::vector<Complex<double>> z_answer(n, Complex<double>{1.75, -3.5});     // (0.5 + 0i) + (1.25 - 3.5i)
  write_values(dir.path() / "c_answer.bin", c_answer);
  write_values(dir.path() / "z_answer.bin", z_answer);
  auto typed = [](const char* name, const char* type, const char* access, double value) {
    return nlohmann::json{{"Name", name}, {"Type", type}, {"MemoryType", "Vector"}, {"AccessType", access},
                          {"FillType", "Constant"}, {"FillValue", value}, {"Size", "n"}};
  };
  nlohmann::json extra{
      {"Arguments",
       {typed("out_h", "half", "WriteOnly", 0.0), typed("out_c", "float2", "WriteOnly", 0.0),
        typed("out_z", "double2", "WriteOnly", 0.0), typed("in_h", "half", "ReadOnly", 1.5),
        typed("in_c", "float2", "ReadOnly", 2.0), typed("in_z", "double2", "ReadOnly", 0.5),
        scalar("sh", "half", "0.25"),
        {{"Name", "sc"}, {"Type", "float2"}, {"MemoryType", "Scalar"}, {"FillType", "BinaryRaw"}, {"DataSource", "sc.bin"}},
        {{"Name", "sz"}, {"Type", "double2"}, {"MemoryType", "Scalar"}, {"FillType", "BinaryRaw"}, {"DataSource", "sz.bin"}},
        scalar("n", "int32", "n")}},
      {"ReferenceArguments",
       {{{"Name", "h"}, {"TargetName", "out_h"}, {"FillType", "Constant"}, {"FillValue", 1.75}},
        {{"Name", "c"}, {"TargetName", "out_c"}, {"FillType", "BinaryRaw"}, {"DataSource", "c_answer.bin"}},
        {{"Name", "z"}, {"TargetName", "out_z"}, {"FillType", "BinaryRaw"}, {"DataSource", "z_answer.bin"}}}}};
  const KernelProblem p = KernelProblem::load(write_problem(
      dir.path(), kMixedTypesKernel, extra,
      {param("block_size_x", {128, 64}), param("offset", {0, 1}), param("skip_last", {0, 1})},
      {{"Tolerance", {{"Relative", 1e-5}, {"Absolute", 1e-6}}}}));
  worker::GpuStage stage(p, p.instantiate(), 0, quick(), 1);
  const Compiled right = compile_for(p, "offset=0,skip_last=0", arch);
  const GpuEvaluation ok = stage.evaluate(right.config, right.cubin, right.lowered_names, std::nullopt);
  INFO(ok.error);
  CHECK(ok.status == Status::Ok);  // the by-value scalars arrived whole: every output equals its answer
  const Compiled wrong = compile_for(p, "offset=1,skip_last=0", arch);
  const GpuEvaluation off = stage.evaluate(wrong.config, wrong.cubin, wrong.lowered_names, std::nullopt);
  CHECK(off.status == Status::Correctness);
  CHECK_THAT(off.error, Contains("out_z[0] = (1.75-2.5j), expected (1.75-3.5j) (1000 of 1000 elements differ)"));
  const Compiled skip = compile_for(p, "offset=0,skip_last=1", arch);
  const GpuEvaluation unwritten = stage.evaluate(skip.config, skip.cubin, skip.lowered_names, std::nullopt);
  CHECK(unwritten.status == Status::Correctness);
  CHECK_THAT(unwritten.error, Contains("out_h[999] was never written") && Contains("1 of 1000 elements differ"));
}

TEST_CASE("the device comparison agrees with the host's for float16, bfloat16, complex64 and complex128", "[gpu]") {
  cuda::Context ctx(0);
  cuda::OutputComparator cmp;
  std::mt19937_64 rng(5);
  auto both = [&](const HostArgument& e, const HostArgument& g, const Tolerance& t, bool poisoned) {
    cuda::DeviceBuffer de(e.bytes.size()), dg(g.bytes.size());
    de.upload(e.bytes.data(), e.bytes.size());
    dg.upload(g.bytes.data(), g.bytes.size());
    const VerifyResult h = compare(e, g, t, poisoned);
    const VerifyResult d = cmp.compare(*e.spec, de.get(), dg.get(), e.count, t, poisoned);
    CHECK(d.ok == h.ok);
    CHECK(d.failures == h.failures);
    CHECK(d.worst_index == h.worst_index);
    CHECK(d.max_error == h.max_error);
    CHECK(d.message == h.message);
    return h;
  };
  const std::size_t n = (1u << 18) + 37;
  std::uniform_real_distribution<double> u(-100, 100), f(0.9, 1.1);
  // Pairs around the edge of each tolerance, NaNs where the answer is NaN, one NaN for a
  // number (the worst) and one element left holding the poison.
  auto narrow = [&](auto tag, ElementType type, const Tolerance& t) {
    using N = decltype(tag);
    auto to = [](double v) {
      if constexpr (std::is_same_v<N, Float16>) return float16_from_double(v);
      else return bfloat16_from_double(v);
    };
    std::vector<N> e(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
      e[i] = to(u(rng) / 10);
      const double bound = t.absolute + t.relative * std::fabs(static_cast<double>(to_float(e[i])));
      g[i] = to(static_cast<double>(to_float(e[i])) + (i % 2 ? 1 : -1) * bound * f(rng));
    }
    e[11] = g[11] = to(std::nan(""));
    const VerifyResult some = both(host(type, e), host(type, g), t, false);
    CHECK(some.failures > 0);
    CHECK(some.failures < n);
    g[200000] = to(std::nan(""));
    CHECK(both(host(type, e), host(type, g), t, false).worst_index == 200000);
    HostArgument got = host(type, g), p = got;
    poison(p);
    std::memcpy(got.bytes.data() + 3 * sizeof(N), p.bytes.data(), sizeof(N));
    CHECK_THAT(both(host(type, e), got, t, true).message, Contains("out[3] was never written"));
  };
  auto complex_pairs = [&](auto tag, ElementType type, const Tolerance& t) {
    using R = decltype(tag);
    std::vector<Complex<R>> e(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
      e[i] = {static_cast<R>(u(rng)), static_cast<R>(u(rng))};
      const double bound = t.absolute + t.relative * std::hypot(e[i].re, e[i].im);
      const double a = u(rng);
      g[i] = {static_cast<R>(e[i].re + bound * f(rng) * std::cos(a)), static_cast<R>(e[i].im + bound * f(rng) * std::sin(a))};
    }
    e[11] = g[11] = Complex<R>{std::numeric_limits<R>::quiet_NaN(), 1};
    const VerifyResult some = both(host(type, e), host(type, g), t, false);
    CHECK(some.failures > 0);
    CHECK(some.failures < n);
    g[200000].im = std::numeric_limits<R>::infinity();
    CHECK(both(host(type, e), host(type, g), t, false).worst_index == 200000);
    HostArgument got = host(type, g), p = got;
    poison(p);
    std::memcpy(got.bytes.data() + 3 * sizeof(Complex<R>), p.bytes.data(), sizeof(Complex<R>));
    CHECK_THAT(both(host(type, e), got, t, true).message, Contains("out[3] was never written"));
  };
  for (const Tolerance t : {Tolerance{1e-5, 1e-6}, Tolerance{1e-2, 1e-3}}) {
    INFO("rtol " << t.relative << " atol " << t.absolute);
    narrow(Float16{}, ElementType::Float16, t);
    narrow(BFloat16{}, ElementType::BFloat16, t);
    complex_pairs(float{}, ElementType::Complex64, t);
    complex_pairs(double{}, ElementType::Complex128, t);
  }
}
