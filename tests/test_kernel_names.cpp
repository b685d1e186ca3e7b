// Kernels by their C++ names (NVRTC name expressions), as Kernel Tuner 1.5 finds them:
// kernels that are not extern "C", in namespaces, templates whose arguments name tuning
// parameters; the lowered names travelling with the cubin (cache, worker pipes); the errors
// for a wrong name, a redefined parameter macro and a failing compile. CPU only: NVRTC
// needs no GPU. The real kernels are Kernel Tuner's and BAT's own files (../shared).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/global_functions.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/worker/protocol.hpp"
#include "test_paths.hpp"

using namespace cutune;
using Catch::Matchers::Contains;
using cutune::testing::TempPath;
namespace fs = std::filesystem;

namespace {

jit::CompileRequest request(const std::string& source, std::vector<std::string> names) {
  jit::CompileRequest r;
  r.source = source;
  r.source_name = "k.cu";
  r.kernel_names = std::move(names);
  r.arch = "sm_90";
  return r;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A T1 problem whose KernelName is a template instantiated with a tuning parameter that the
// source never mentions (`tile`): it reaches the code through the name alone.
const std::string kTemplateCu = R"(
namespace tiles {
template <typename T, int N>
__global__ void scale(T* x, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * N;
  for (int k = 0; k < N; ++k)
    if (i + k < n) x[i + k] *= 2;
}
}  // namespace tiles
)";

std::string template_t1(const std::string& kernel_name) {
  return R"({
  "General": {"BenchmarkName": "scale", "OutputFormat": "JSON"},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": [64, 128], "Default": 64},
      {"Name": "tile", "Type": "int", "Values": [1, 2, 4], "Default": 1}
    ]
  },
  "KernelSpecification": {
    "Language": "CUDA",
    "KernelName": ")" + kernel_name + R"(",
    "KernelFile": "scale.cu",
    "GridDivX": ["block_size_x", "tile"],
    "ProblemSize": 1024,
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random", "Size": 1024, "FillValue": 1.0},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 1024}
    ]
  }
})";
}

struct TemplateProblem {
  testing::cli::CliTempDir dir;
  fs::path json;
  explicit TemplateProblem(const std::string& kernel_name, const std::string& source = kTemplateCu) {
    std::ofstream(dir.path() / "scale.cu") << source;
    json = dir.path() / "scale.json";
    std::ofstream(json) << template_t1(kernel_name);
  }
};

}  // namespace

TEST_CASE("kernel names: a kernel that is not extern \"C\" compiles and lowers to its mangled name",
          "[jit][names]") {
  auto r = jit::compile(request("__global__ void k(float* x) { x[0] = 1.0f; }\n", {"k"}));
  INFO(r.error << "\n" << r.log);
  REQUIRE(r.ok);
  REQUIRE(r.lowered_names.size() == 1);
  CHECK(r.lowered_names[0] == "_Z1kPf");
  // extern "C": the lowered name is the name itself.
  auto c = jit::compile(request("extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }\n", {"k"}));
  REQUIRE(c.ok);
  CHECK(c.lowered_names == std::vector<std::string>{"k"});
}

TEST_CASE("kernel names: a kernel in a namespace, by its qualified name", "[jit][names]") {
  auto r = jit::compile(request("namespace outer { namespace inner { __global__ void k(int* x) { *x = 1; } } }\n",
                                {"outer::inner::k"}));
  INFO(r.error << "\n" << r.log);
  REQUIRE(r.ok);
  REQUIRE(r.lowered_names.size() == 1);
  CHECK(r.lowered_names[0] == "_ZN5outer5inner1kEPi");
}

TEST_CASE("kernel names: tuning parameters in template arguments are replaced as Kernel Tuner does",
          "[jit][names]") {
  const std::vector<std::pair<std::string, Value>> params{{"tile", Value(4)}, {"block_size_x", Value(128)},
                                                          {"flag", Value(true)}};
  CHECK(jit::replace_parameter_names("matmul<float, tile>", params) == "matmul<float, 4>");
  // Whole tokens only: tile_x and xtile are other names (util.replace_param_occurrences).
  CHECK(jit::replace_parameter_names("k<tile_x, xtile, tile*block_size_x>", params) ==
        "k<tile_x, xtile, 4*128>");
  CHECK(jit::replace_parameter_names("k<flag>", params) == "k<True>");  // Python's str(True)
  CHECK(jit::replace_parameter_names("plain_kernel", params) == "plain_kernel");
}

TEST_CASE("kernel names: a templated kernel instantiated per configuration, two lowered names, both found",
          "[jit][names]") {
  TemplateProblem t("tiles::scale<float, tile>");
  const KernelProblem p = KernelProblem::load(t.json);
  // `tile` appears in the name only: not in the #define prefix, but in the compile key.
  const Config c1 = p.space().parse_assignments("block_size_x=64,tile=1");
  const Config c4 = p.space().parse_assignments("block_size_x=64,tile=4");
  const auto r1 = jit::compile_request(p, c1, "sm_90"), r4 = jit::compile_request(p, c4, "sm_90");
  CHECK(r1.kernel_names == std::vector<std::string>{"tiles::scale<float, 1>"});
  CHECK(r4.kernel_names == std::vector<std::string>{"tiles::scale<float, 4>"});
  CHECK(jit::compile_key(r1, jit::nvrtc_version()) != jit::compile_key(r4, jit::nvrtc_version()));
  const auto a = jit::compile(r1), b = jit::compile(r4);
  INFO(a.error << "\n" << b.error);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  REQUIRE(a.lowered_names.size() == 1);
  REQUIRE(b.lowered_names.size() == 1);
  CHECK(a.lowered_names[0] == "_ZN5tiles5scaleIfLi1EEEvPT_i");
  CHECK(b.lowered_names[0] == "_ZN5tiles5scaleIfLi4EEEvPT_i");
  // Both symbols are in their cubins (the GPU side's cuModuleGetFunction finds them there).
  CHECK(std::string(a.cubin.begin(), a.cubin.end()).find(a.lowered_names[0]) != std::string::npos);
  CHECK(std::string(b.cubin.begin(), b.cubin.end()).find(b.lowered_names[0]) != std::string::npos);
}

TEST_CASE("kernel names: the source's __global__ functions, templates with their parameter lists",
          "[jit][names]") {
  const std::string source = R"(
// __global__ void commented_out(int*) {}
#define WRAP(x) x
extern "C" {
  __global__ void plain(int* a);
}
__global__ void plain(int* a) { *a = 0; }
namespace ns {
template <typename T, int tile_size_x>
__global__ void
#if 1
__launch_bounds__(256, 2)
#endif
tiled(T* a) {}
namespace { __global__ void hidden() {} }
}
void __global__ after_void() {}
static __device__ void helper() {}
)";
  std::vector<std::string> shown;
  for (const auto& f : jit::global_functions(source)) shown.push_back(f.display());
  CHECK(shown == std::vector<std::string>{"plain", "template <typename T, int tile_size_x> ns::tiled", "ns::hidden",
                                          "after_void"});
  CHECK(jit::unqualified_name("ns::tiled<float, 16>") == "tiled");
  CHECK(jit::unqualified_name(" &plain ") == "plain");
}

TEST_CASE("kernel names: an unknown name fails with the __global__ functions the source has", "[jit][names]") {
  const std::string source =
      "__global__ void first(float* x) {}\n"
      "template <int N> __global__ void second(float* x) {}\n";
  auto r = jit::compile(request(source, {"frist"}));
  CHECK_FALSE(r.ok);
  CHECK(r.lowered_names.empty());
  INFO(r.error);
  CHECK_THAT(r.error, Contains("'frist'"));
  CHECK_THAT(r.error, Contains("first, template <int N> second"));
  CHECK(r.error.find('\n') == std::string::npos);
  // Wrong in every configuration: kernel_name_error says so; a right name costs no compile.
  CHECK_THAT(jit::kernel_name_error(request(source, {"frist"})), Contains("first"));
  CHECK(jit::kernel_name_error(request(source, {"second<4>"})).empty());
  // A name the text has, with template arguments that do not fit: a compile failure of the
  // configuration, not a wrong name.
  auto bad_args = jit::compile(request(source, {"second<float>"}));
  CHECK_FALSE(bad_args.ok);
  CHECK_FALSE(bad_args.error.empty());
  CHECK(jit::kernel_name_error(request(source, {"second<float>"})).empty());
}

TEST_CASE("kernel names: redefining a tuned parameter's macro fails, an unrelated warning does not",
          "[jit][names]") {
  const std::string prefix = "#define block_size_x 32\n#define tile 2\n#line 1 \"k.cu\"\n";
  auto redefined = jit::compile(request(prefix + "#define block_size_x 16\n__global__ void k(int* x) { *x = block_size_x; }\n",
                                        {"k"}));
  INFO(redefined.log);
  CHECK_FALSE(redefined.ok);
  CHECK(redefined.cubin.empty());
  CHECK_THAT(redefined.error, Contains("block_size_x"));
  CHECK_THAT(redefined.error, Contains("redefinition"));
  // The same value again is no redefinition; a redefined macro of the kernel's own and an
  // unused variable are warnings that stay warnings.
  auto fine = jit::compile(request(prefix +
                                       "#define block_size_x 32\n#define own 1\n#define own 2\n"
                                       "__global__ void k(int* x) { int unused; *x = block_size_x + own; }\n",
                                   {"k"}));
  INFO(fine.error << "\n" << fine.log);
  CHECK(fine.ok);
  CHECK_THAT(fine.log, Contains("own"));  // NVRTC did warn
  // Without a prefix (no #line), nothing is a tuned parameter.
  auto no_prefix = jit::compile(request("#define a 1\n#define a 2\n__global__ void k() {}\n", {"k"}));
  CHECK(no_prefix.ok);
}

TEST_CASE("kernel names: the cubin cache round-trips lowered names, and older entries are misses",
          "[jit][names][cache]") {
  TempPath dir("cutune-names-cache");
  jit::CubinCache cache(dir.path());
  auto req = request("template <int N> __global__ void k(int* x) { *x = N; }\n", {"k<3>"});
  const std::string key = jit::compile_key(req, jit::nvrtc_version());
  auto r = jit::compile(req);
  REQUIRE(r.ok);
  cache.put(key, r);
  auto got = cache.get(key);
  REQUIRE(got);
  CHECK(got->lowered_names == std::vector<std::string>{"_Z1kILi3EEvPi"});
  CHECK(got->cubin == r.cubin);
  // An entry of format 1 (before lowered names): a miss, removed, never a cubin without names.
  {
    std::fstream f(cache.entry_path(key), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    const char v1[4] = {1, 0, 0, 0};
    f.write(v1, 4);
  }
  CHECK_FALSE(cache.get(key));
  CHECK_FALSE(fs::exists(cache.entry_path(key)));
}

TEST_CASE("kernel names: the worker protocol round-trips lowered names", "[jit][names][worker]") {
  jit::CompileResult r;
  r.ok = true;
  r.lowered_names = {"_Z1kPf", "_ZN2ns5otherEv"};
  r.full_options = {"--gpu-architecture=sm_90"};
  const auto back = worker::decode<worker::Compiled>(worker::encode(worker::Compiled{r})).result;
  CHECK(back.lowered_names == r.lowered_names);
  auto req = request("__global__ void k() {}", {"ns::k<4>", "k"});
  CHECK(worker::decode<worker::Compile>(worker::encode(worker::Compile{req})).request.kernel_names == req.kernel_names);

  // Tuner -> GPU worker: the evaluation request carries them (the fake worker echoes them).
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  ::setenv("CUTUNE_WORKER", FAKE_GPU_WORKER_PATH, 1);
  ::setenv("FAKE_GPU_WORKER_SCRIPT", (p.space().key(p.space().default_config()) + "=names").c_str(), 1);
  {
    runner::GpuWorker w(p, "n=1024", 0, worker::MeasureOptions{}, 42);
    const auto ev = w.evaluate(p.space().default_config(), std::vector<char>(10, 'x'), r.lowered_names, std::nullopt);
    CHECK(ev.error == "_Z1kPf _ZN2ns5otherEv");
  }
  ::unsetenv("CUTUNE_WORKER");
  ::unsetenv("FAKE_GPU_WORKER_SCRIPT");
}

TEST_CASE("kernel names: compile errors reach the user, a wrong KernelName is bad input", "[jit][names][cli]") {
  using namespace cutune::testing::cli;
  SECTION("a failing compile prints its error line and NVRTC's log") {
    TemplateProblem t("tiles::scale<float, tile>", kTemplateCu + "__global__ void broken() { undefined_thing(); }\n");
    const auto r = run_cli({"compile", t.json.string(), "--config", "tile=2"});
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("compile failed"));
    CHECK_THAT(r.err, Contains("undefined_thing"));
    CHECK_THAT(r.err, Contains("tiles::scale<float, 2>"));
    CHECK(r.err.find("(empty)") == std::string::npos);
  }
  SECTION("a redefined parameter macro: the error line, though NVRTC's log has only a warning") {
    TemplateProblem t("tiles::scale<float, tile>", "#define block_size_x 16\n" + kTemplateCu +
                                                        "__global__ void uses() { int b = block_size_x; (void)b; }\n");
    const auto r = run_cli({"compile", t.json.string(), "--config", "block_size_x=128"});
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("redefines a tuning parameter's macro"));
    CHECK_THAT(r.err, Contains("block_size_x"));
  }
  SECTION("a KernelName the source does not have: exit 2, one line listing the kernels") {
    TemplateProblem t("tiles::scael<float, tile>");
    expect_bad_input({"compile", t.json.string()}, {"KernelName", "scael", "template <typename T, int N> tiles::scale"});
    expect_bad_input({"compile", t.json.string(), "--all", "--quiet"}, {"KernelName", "scael"});
  }
  SECTION("the templated kernel compiles in every configuration") {
    TemplateProblem t("tiles::scale<float, tile>");
    const auto r = run_cli({"compile", t.json.string(), "--all", "--quiet", "--mode", "thread"});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("6 ok, 0 failed"));
  }
}

TEST_CASE("kernel names: Kernel Tuner's and BAT's own C++ kernels compile by name for sm_90", "[jit][names][real][material]") {
  const fs::path real = testing::material("data/real_kernels");
  INFO("material: " << real.string());
  REQUIRE(fs::is_directory(real));
  struct Case {
    fs::path file;
    std::string kernel;
    std::string defines;  ///< the prefix Kernel Tuner would write for one configuration
    bool cxx_linkage = true;  ///< false: declared in an extern "C" block
  };
  const std::vector<Case> cases{
      {real / "kernel_tuner_examples" / "matmul.cu", "matmul_kernel",
       "#define block_size_x 32\n#define block_size_y 8\n#define tile_size_x 2\n#define tile_size_y 4\n"},
      {real / "kernel_tuner_examples" / "convolution.cu", "convolution_kernel",
       "#define filter_height 15\n#define filter_width 15\n#define block_size_x 32\n#define block_size_y 8\n"
       "#define tile_size_x 2\n#define tile_size_y 2\n#define use_padding 1\n#define read_only 1\n"},
      {real / "kernel_tuner_examples" / "convolution.cu", "convolution_naive", "#define block_size_x 16\n"},
      {real / "bat" / "GEMM" / "gemm.cu", "gemm_fast",
       "#define MWG 64\n#define NWG 64\n#define KWG 32\n#define MDIMC 16\n#define NDIMC 16\n#define MDIMA 16\n"
       "#define NDIMB 16\n#define KWI 2\n#define VWM 1\n#define VWN 1\n#define STRM 0\n#define STRN 0\n"
       "#define SA 1\n#define SB 1\n#define PRECISION 32\n", false},
  };
  for (const auto& c : cases) {
    auto req = request(c.defines + "#line 1 \"" + c.file.filename().string() + "\"\n" + read_text(c.file), {c.kernel});
    req.source_name = c.file.filename().string();
    const auto r = jit::compile(req);
    INFO(c.file.string() << " " << c.kernel << ": " << r.error << "\n" << r.log);
    CHECK(r.ok);
    REQUIRE(r.lowered_names.size() == 1);
    // C++ linkage: the symbol is mangled (_Z<length><name>...), not the plain name.
    if (c.cxx_linkage) CHECK(r.lowered_names[0].rfind("_Z" + std::to_string(c.kernel.size()) + c.kernel, 0) == 0);
    else CHECK(r.lowered_names[0] == c.kernel);
    // The listing a wrong name gets names the file's kernels.
    CHECK_THAT(jit::kernel_name_error(request(req.source, {c.kernel + "_typo"})), Contains(c.kernel));
  }
}

TEST_CASE("kernel names: a templated C++ kernel tunes end to end, found on the GPU by its lowered names",
          "[gpu][names]") {
  using namespace cutune::testing::cli;
  TemplateProblem t("tiles::scale<float, tile>");
  const fs::path db = t.dir.path() / "names.db", report = t.dir.path() / "report.json";
  // Every configuration (6), then the finalists re-measured: both GPU paths (evaluate and
  // remeasure) look the kernel up by the worker's lowered names.
  const auto r = run_cli({"tune", t.json.string(), "--db", db.string(), "--report", report.string(), "--finalists", "2"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(report));
  INFO(j.dump(2));
  CHECK_FALSE(j.at("winner_key").get<std::string>().empty());
  CHECK((!j.contains("failures_by_status") || j["failures_by_status"].empty()));
}
