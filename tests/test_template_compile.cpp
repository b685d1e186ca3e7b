// Every valid configuration of every built-in template compiles to cubin for sm_90 with
// NVRTC (no GPU needed), and each template's default compiles with no defines at all.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

using namespace cutune;

namespace {

jit::CompileRequest request_for(const KernelProblem& p, const Config& c) {
  jit::CompileRequest r;
  r.source = p.configured_source(c);
  r.source_name = p.kernel_file().filename().string();
  r.kernel_name = p.kernel_name();
  r.options = p.compiler_options();
  r.arch = "sm_90";
  return r;
}

}  // namespace

TEST_CASE("every valid configuration of every built-in template compiles for sm_90", "[jit][templates]") {
  auto name = GENERATE(as<std::string>{}, "vector_add", "reduction");
  KernelProblem p = KernelProblem::load(testing::template_json(name));
  std::uint64_t compiled = 0;
  std::vector<std::string> failures;
  p.space().for_each_valid([&](const Config& c) {
    auto res = jit::compile(request_for(p, c));
    ++compiled;
    if (!res.ok || res.cubin.empty()) failures.push_back(p.space().key(c) + ": " + res.error);
    return true;
  });
  INFO(name << ": " << compiled << " configurations compiled");
  CHECK(compiled == p.space().count_valid());
  CHECK(compiled > 0);
  CHECK(failures.empty());
  for (const auto& f : failures) UNSCOPED_INFO(f);
}

TEST_CASE("each template's default compiles with no defines at all", "[jit][templates]") {
  auto name = GENERATE(as<std::string>{}, "vector_add", "reduction");
  KernelProblem p = KernelProblem::load(testing::template_json(name));
  jit::CompileRequest r = request_for(p, p.space().default_config());
  r.source = p.source();  // no #define lines
  r.options.clear();      // and not even the template's CompilerOptions
  auto res = jit::compile(r);
  INFO(res.log);
  CHECK(res.ok);
}

TEST_CASE("a failing compile is data: the log, the options and a one-line error", "[jit]") {
  jit::CompileRequest r;
  r.source = "extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }\n";
  r.source_name = "broken.cu";
  r.kernel_name = "k";
  r.options = {"-Dfoo=1"};
  auto res = jit::compile(r);
  CHECK_FALSE(res.ok);
  CHECK(res.cubin.empty());
  CHECK(res.log.find("undefined_name") != std::string::npos);
  CHECK(res.error.find("undefined_name") != std::string::npos);
  CHECK(res.error.find('\n') == std::string::npos);
  CHECK(std::find(res.full_options.begin(), res.full_options.end(), "-Dfoo=1") != res.full_options.end());
  CHECK(std::find(res.full_options.begin(), res.full_options.end(), "--gpu-architecture=sm_90") !=
        res.full_options.end());
}

TEST_CASE("a kernel that is not extern \"C\" is reported, not silently missing", "[jit]") {
  jit::CompileRequest r;
  r.source = "__global__ void k(float* x) { x[0] = 1.0f; }\n";
  r.kernel_name = "k";
  auto res = jit::compile(r);
  CHECK_FALSE(res.ok);
  CHECK(res.error.find("extern \"C\"") != std::string::npos);
}

TEST_CASE("NVRTC reports its version and supports sm_90", "[jit]") {
  CHECK(jit::nvrtc_version() >= 12000);
  auto archs = jit::supported_archs();
  CHECK(std::find(archs.begin(), archs.end(), "sm_90") != archs.end());
}
