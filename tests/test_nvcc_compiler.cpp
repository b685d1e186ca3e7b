// The second compiler, nvcc: what auto picks (NVRTC where it works, nvcc for what the
// kernels of Kernel Tuner's PyCUDA scripts include or pass), kernels found by name in nvcc's
// cubin, the cache keys of the two, the failure messages, and the CLI's --compiler. CPU only:
// neither compiler needs a GPU. nvcc takes about a second a compile: few of them here.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/compiler_choice.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/cubin_symbols.hpp"
#include "cutune/jit/nvcc_compiler.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "test_paths.hpp"

using namespace cutune;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
namespace fs = std::filesystem;

namespace {

// A one-parameter T1 problem over `source`, with `options` and the cutune section `cutune`.
fs::path write_problem(const testing::TempDir& dir, const std::string& source, const std::string& options = "[]",
                       const std::string& cutune = "{}") {
  dir.write("k.cu", source);
  return dir.write("k.json", R"({
  "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": [64, 128], "Default": 64}]},
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "CompilerOptions": )" + options + R"(,
    "ProblemSize": 1024,
    "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite",
                   "FillType": "Constant", "Size": 1024, "FillValue": 1.0}]
  },
  "cutune": )" + cutune + "}");
}

// What a kernel written for Kernel Tuner's PyCUDA backend includes: NVRTC cannot open either.
const std::string kHostHeaders = R"(#include <stdio.h>
#include <cmath>
__global__ void k(float* x) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  x[i] = std::sqrt(x[i]);
  if (i == 0) printf("%f\n", x[0]);
}
)";
const std::string kPlain = "__global__ void k(float* x) { x[blockIdx.x * block_size_x + threadIdx.x] *= 2; }\n";

jit::CompileRequest request(const std::string& source, std::vector<std::string> names, Compiler compiler) {
  jit::CompileRequest r;
  r.source = source;
  r.source_name = "k.cu";
  r.kernel_names = std::move(names);
  r.arch = "sm_90";
  r.compiler = compiler;
  return r;
}

}  // namespace

TEST_CASE("auto: a kernel including <stdio.h> and <cmath> compiles with nvcc, and says why", "[jit][nvcc]") {
  testing::TempDir dir;
  const KernelProblem p = KernelProblem::load(write_problem(dir, kHostHeaders));
  REQUIRE(p.compiler() == Compiler::Auto);
  const jit::CompilerDecision d = jit::decide_compiler(p, "sm_90");
  INFO(d.reason);
  CHECK(d.compiler == Compiler::Nvcc);
  CHECK_THAT(d.reason, Contains("#include <stdio.h>") && Contains("cannot open source file") &&
                           Contains("nvcc compiles the default configuration"));
  CHECK_THAT(d.describe(), Contains("nvcc ("));
  // Every configuration's request follows the decision, made once.
  for (const Config& c : {p.space().default_config(), p.space().parse_key("128")})
    CHECK(jit::compile_request(p, c, "sm_90").compiler == Compiler::Nvcc);
}

TEST_CASE("auto: a plain kernel stays with NVRTC, without a compile to decide it", "[jit][nvcc]") {
  testing::TempDir dir;
  const KernelProblem p = KernelProblem::load(write_problem(dir, kPlain));
  const jit::CompilerDecision d = jit::decide_compiler(p, "sm_90");
  CHECK(d.compiler == Compiler::Nvrtc);
  CHECK_THAT(d.reason, Contains("nothing in the kernel names a need for nvcc"));
  // NVRTC first, nvcc only for a refusal: the request says auto.
  CHECK(d.nvcc_on_refusal);
  CHECK(jit::compile_request(p, p.space().default_config(), "sm_90").compiler == Compiler::Auto);
  CHECK(jit::compile(jit::compile_request(p, p.space().default_config(), "sm_90")).ok);
}

TEST_CASE("auto: a function without an execution space, host code to NVRTC, is compiled by nvcc", "[jit][nvcc]") {
  // As pnpoly's kernel file in a Kernel Tuner script holds its CPU reference: no text rule sees
  // it, NVRTC refuses it in JIT mode, Kernel Tuner's PyCUDA backend (nvcc) compiles it.
  testing::TempDir dir;
  const KernelProblem p = KernelProblem::load(write_problem(dir, R"(float reference_sum(const float* x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}
)" + kPlain));
  const jit::CompilerDecision d = jit::decide_compiler(p, "sm_90");
  CHECK(d.compiler == Compiler::Nvrtc);
  REQUIRE(d.nvcc_on_refusal);
  const jit::CompileResult r = jit::compile(jit::compile_request(p, p.space().default_config(), "sm_90"));
  INFO(r.error);
  CHECK(r.ok);
  CHECK_FALSE(r.cubin.empty());
  // Named NVRTC, the refusal stands, naming the switch.
  KernelProblem named = KernelProblem::load(write_problem(dir, R"(float h(float v) { return v; }
)" + kPlain, "[]", R"({"Compiler": "nvrtc"})"));
  const jit::CompileResult refused = jit::compile(jit::compile_request(named, named.space().default_config(), "sm_90"));
  CHECK_FALSE(refused.ok);
  CHECK_THAT(refused.error, Contains("--compiler nvcc"));
}

TEST_CASE("auto: -O3, which NVRTC rejects, goes to nvcc, and cutune.Compiler names one", "[jit][nvcc]") {
  testing::TempDir dir;
  const KernelProblem p = KernelProblem::load(write_problem(dir, kPlain, R"(["-O3"])"));
  const jit::CompilerDecision d = jit::decide_compiler(p, "sm_90");
  INFO(d.reason);
  CHECK(d.compiler == Compiler::Nvcc);
  CHECK_THAT(d.reason, Contains("-O3"));

  KernelProblem named = KernelProblem::load(write_problem(dir, kPlain, "[]", R"({"Compiler": "nvcc"})"));
  CHECK(named.compiler() == Compiler::Nvcc);
  CHECK(jit::decide_compiler(named, "sm_90").compiler == Compiler::Nvcc);
  named.set_compiler(Compiler::Nvrtc);  // --compiler nvrtc over the file's choice
  CHECK(jit::compile_request(named, named.space().default_config(), "sm_90").compiler == Compiler::Nvrtc);
  CHECK(KernelProblem::load(write_problem(dir, kPlain, "[]", R"({"Lang": "cupy"})")).lang() == KernelLang::CuPy);
  CHECK_THROWS_WITH(KernelProblem::load(write_problem(dir, kPlain, "[]", R"({"Compiler": "gcc"})")),
                    Contains("cutune.Compiler") && Contains("'gcc'"));
}

TEST_CASE("nvcc's cubin: a template kernel and an extern \"C\" kernel are found by name", "[jit][nvcc]") {
  const std::string source = R"(#include <cmath>
namespace ns {
template <typename T, unsigned N>
__global__ void scale(T* x) { x[threadIdx.x] *= std::sqrt(static_cast<T>(N)); }
}
extern "C" __global__ void plain(float* x) { x[0] = 1; }
__global__ void other(float* x) { x[0] = 2; }
)";
  const auto r = jit::compile(request(source, {"ns::scale<float, 4>", "plain", "other"}, Compiler::Nvcc));
  INFO(r.error << "\n" << r.log);
  REQUIRE(r.ok);
  CHECK(r.lowered_names == std::vector<std::string>{"_ZN2ns5scaleIfLj4EEEvPT_", "plain", "_Z5otherPf"});
  CHECK(r.full_options.front() == "-cubin");
  // Spelling: spaces, integer suffixes ("4u"), and a typedef whose template has one instantiation.
  const std::vector<jit::EntrySymbol> entries{{"_ZN2ns5scaleIfLj4EEEvPT_", "void ns::scale<float, 4u>(float*)"},
                                              {"g", "g"}};
  CHECK(jit::find_entry_symbol(entries, "ns::scale<float,4>") == entries[0].symbol);
  CHECK(jit::find_entry_symbol(entries, "ns::scale<real_t, 4>") == entries[0].symbol);
  CHECK(jit::find_entry_symbol(entries, "g") == std::string("g"));
  CHECK_FALSE(jit::find_entry_symbol(entries, "scale"));
  // A name the source does not have: the problem's mistake, named as such.
  const auto bad = jit::compile(request(source, {"ns::missing<float, 4>"}, Compiler::Nvcc));
  CHECK_FALSE(bad.ok);
  CHECK_THAT(bad.error, Contains("names no __global__ function") && Contains("scale"));
}

TEST_CASE("the cache keys of the two compilers differ, and nvcc's cubins come back from the cache", "[jit][nvcc]") {
  const auto nvrtc = request(kPlain, {"k"}, Compiler::Nvrtc);
  auto nvcc = nvrtc;
  nvcc.compiler = Compiler::Nvcc;
  CHECK(jit::compile_key(nvrtc, jit::nvrtc_version()) != jit::compile_key(nvcc, jit::nvrtc_version()));
  CHECK_THAT(jit::nvcc_identity(), Contains("release"));

  testing::TempDir dir;
  const KernelProblem p = KernelProblem::load(write_problem(dir, kHostHeaders, "[]", R"({"Compiler": "nvcc"})"));
  testing::TempPath cache("cutune-nvcc-cubins");
  runner::CompilePoolOptions o;
  o.workers = 1;
  o.cache_dir = cache.path();  // process workers: the request's compiler crosses the pipe
  for (int round = 0; round < 2; ++round) {
    runner::CompilePool pool(p, "sm_90", o);
    pool.submit(p.space().default_config());
    const auto done = pool.next();
    REQUIRE(done);
    INFO(done->result.error);
    CHECK(done->result.ok);
    CHECK(done->result.lowered_names == std::vector<std::string>{"_Z1kPf"});
    CHECK(pool.stats().compiled == (round == 0 ? 1u : 0u));
    CHECK(pool.stats().cache_hits == (round == 0 ? 0u : 1u));
  }
}

TEST_CASE("a compile failure names the compiler used and the switch to the other", "[jit][nvcc]") {
  const std::string broken = "__global__ void k(float* x) { x[0] = undeclared; }\n";
  const auto nvrtc = jit::compile(request(broken, {"k"}, Compiler::Nvrtc));
  CHECK_THAT(nvrtc.error, Contains("undeclared") && EndsWith("(compiled with NVRTC; --compiler nvcc to use nvcc)"));
  const auto nvcc = jit::compile(request(broken, {"k"}, Compiler::Nvcc));
  CHECK_THAT(nvcc.error, Contains("undeclared") && EndsWith("(compiled with nvcc; --compiler nvrtc to use NVRTC)"));
  CHECK_THAT(nvcc.log, Contains("k.cu("));  // the user's file, not the temporary copy's path
}

TEST_CASE("cutune compile --compiler nvcc works, and a bad --compiler value is one line, exit 2", "[cli][nvcc]") {
  testing::TempDir dir;
  const std::string json = write_problem(dir, kPlain).string();
  const std::vector<std::string> args{"compile", json, "--compiler", "nvcc", "--config", "block_size_x=128"};
  const auto r = testing::cli::run_cli(args);
  INFO(testing::cli::describe(args, r));
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("bytes of cubin for sm_90") && Contains("by nvcc"));
  testing::cli::expect_bad_input({"compile", json, "--compiler", "gcc"}, {"--compiler", "gcc"});
}

TEST_CASE("lang cupy: CuPy's headers from $CUTUNE_CUPY_INCLUDE (the package's interpreter), half without an include",
          "[cli][cupy]") {
  // The package names the CuPy of the interpreter the script runs in; the python3 on PATH may
  // have none. A header there stands in for <cupy/complex.cuh>.
  testing::TempDir dir;
  fs::create_directories(dir.path() / "cupyinc" / "cupy");
  dir.write("cupyinc/cupy/stand_in.cuh", "#define CUPY_STAND_IN 2\n");
  const std::string source = "#include <cupy/stand_in.cuh>\n"
                             "__global__ void k(float* x) { half h = __float2half(x[0]); x[0] = __half2float(h) * CUPY_STAND_IN; }\n";
  const std::string json = write_problem(dir, source, "[]", R"({"Lang": "cupy"})").string();
  const std::vector<std::string> args{"compile", json};
  ::setenv("CUTUNE_CUPY_INCLUDE", (dir.path() / "cupyinc").c_str(), 1);
  const auto found = testing::cli::run_cli(args);
  ::setenv("CUTUNE_CUPY_INCLUDE", (dir.path() / "absent").c_str(), 1);
  const auto absent = testing::cli::run_cli(args);
  ::unsetenv("CUTUNE_CUPY_INCLUDE");
  INFO(testing::cli::describe(args, found));
  CHECK(found.status == 0);
  INFO(testing::cli::describe(args, absent));
  CHECK(absent.status != 0);
  CHECK_THAT(absent.out + absent.err, Contains("cupy/stand_in.cuh"));
}
