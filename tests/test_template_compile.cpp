// A sample of every built-in template's valid configurations (every value of every
// parameter, seeded picks, the default) compiles to cubin for sm_90 with NVRTC (no GPU
// needed), and each template's default compiles with no defines at all.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/templates/catalog.hpp"
#include "test_paths.hpp"

using namespace cutune;

namespace {

jit::CompileRequest request_for(const KernelProblem& p, const Config& c) {
  jit::CompileRequest r;
  r.source = p.configured_source(c);
  r.source_name = p.kernel_file().filename().string();
  r.kernel_names = p.kernel_names();
  r.options = p.compiler_options();
  r.arch = "sm_90";
  return r;
}

}  // namespace

namespace {

// Every T1 file of every template folder (reduction/reduction_int32.json included).
std::vector<std::filesystem::path> builtin_templates() {
  std::vector<std::filesystem::path> out;
  for (const auto& [name, path] : templates::builtin_templates(testing::template_dir())) out.push_back(path);
  return out;
}

// The sample compiled per template: every value of every parameter at least once (each
// value changes the generated code), then seeded random picks up to this many, and the
// default. 160 random picks per template took 500 s of CI's 505 s of CTest on 2 cores
// (~0.45 s per NVRTC compile); the covering sample keeps what each value does to the source
// compiled, at a fraction of that.
constexpr std::size_t kSampleSize = 24;

std::vector<Config> covering_sample(const Space& space, std::vector<Config> valid) {
  if (valid.size() <= kSampleSize) return valid;
  std::mt19937_64 rng(20261122);
  std::shuffle(valid.begin(), valid.end(), rng);
  std::set<std::pair<std::size_t, std::size_t>> uncovered;  // (parameter, value index)
  for (const Config& c : valid)
    for (std::size_t i = 0; i < c.index.size(); ++i) uncovered.insert({i, c.index[i]});
  std::vector<Config> chosen{space.default_config()};
  std::vector<bool> taken(valid.size(), false);
  for (std::size_t k = 0; k < valid.size() && !uncovered.empty(); ++k) {
    bool adds = false;
    for (std::size_t i = 0; i < valid[k].index.size(); ++i) adds = uncovered.erase({i, valid[k].index[i]}) > 0 || adds;
    if (adds) {
      chosen.push_back(valid[k]);
      taken[k] = true;
    }
  }
  for (std::size_t k = 0; k < valid.size() && chosen.size() < kSampleSize; ++k)
    if (!taken[k]) chosen.push_back(valid[k]);
  return chosen;
}

}  // namespace

TEST_CASE("built-in templates: a sample covering every parameter value compiles for sm_90",
          "[jit][templates]") {
  auto files = builtin_templates();
  REQUIRE(files.size() >= 8);
  for (const auto& file : files) {
    KernelProblem p = KernelProblem::load(file);
    std::vector<Config> valid;
    p.space().for_each_valid([&](const Config& c) {
      valid.push_back(c);
      return true;
    });
    REQUIRE_FALSE(valid.empty());
    const std::vector<Config> chosen = covering_sample(p.space(), valid);
    std::vector<std::string> failures;
    for (const auto& c : chosen) {
      auto res = jit::compile(request_for(p, c));
      if (!res.ok || res.cubin.empty()) failures.push_back(p.space().key(c) + ": " + res.error);
    }
    // Says how many: all of a space, or the size of the sample.
    WARN(p.name() << ": compiled " << chosen.size() << " of " << valid.size()
                  << " valid configurations for sm_90, " << failures.size() << " failed");
    for (const auto& f : failures) UNSCOPED_INFO(f);
    CHECK(failures.empty());
  }
}

TEST_CASE("each template's default compiles with no defines at all", "[jit][templates]") {
  for (const auto& file : builtin_templates()) {
    KernelProblem p = KernelProblem::load(file);
    jit::CompileRequest r = request_for(p, p.space().default_config());
    r.source = p.source();  // no #define lines
    // Only the options that select the element type of a shared .cu (-DCUTUNE_INT32=1) stay.
    r.options.erase(std::remove_if(r.options.begin(), r.options.end(),
                                   [](const std::string& o) { return o.rfind("-DCUTUNE_", 0) != 0; }),
                    r.options.end());
    auto res = jit::compile(r);
    INFO(file.string() << "\n" << res.log);
    CHECK(res.ok);
  }
}

TEST_CASE("a failing compile is data: the log, the options and a one-line error", "[jit]") {
  jit::CompileRequest r;
  r.source = "extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }\n";
  r.source_name = "broken.cu";
  r.kernel_names = {"k"};
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

TEST_CASE("a kernel that is not extern \"C\" is found by its C++ name", "[jit]") {
  jit::CompileRequest r;
  r.source = "__global__ void k(float* x) { x[0] = 1.0f; }\n";
  r.kernel_names = {"k"};
  auto res = jit::compile(r);
  CHECK(res.ok);
  CHECK(res.lowered_names == std::vector<std::string>{"_Z1kPf"});
}

TEST_CASE("NVRTC reports its version and supports sm_90", "[jit]") {
  CHECK(jit::nvrtc_version() >= 12000);
  auto archs = jit::supported_archs();
  CHECK(std::find(archs.begin(), archs.end(), "sm_90") != archs.end());
}
