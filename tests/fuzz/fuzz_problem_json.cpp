// Fuzz target: T1 problem files as KernelProblem::load reads them.
// The input is written to problem.json in a private temporary folder beside kernel.cu (and
// the header it includes), so seeds name "KernelFile": "kernel.cu". A file that loads is
// then used as `cutune tune` uses it: default instance, a few valid configurations with
// their launch plans and sources, argument sizes and fills, metrics. InputError (one line
// naming file and field) is the expected failure; anything else is a finding. See README.md.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cutune/model/errors.hpp"
#include "cutune/model/expression.hpp"
#include "cutune/model/problem.hpp"

namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz_problem_json: cannot write %s\n", path.c_str());
    std::abort();
  }
}

struct WorkDir {
  fs::path dir;
  WorkDir() {
    dir = fs::temp_directory_path() / ("cutune-fuzz-problem-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string kernel =
        "#include \"kernel.cuh\"\n"
        "extern \"C\" __global__ void kernel(float* out, const float* in, int n) {\n"
        "  int i = blockIdx.x * block_size_x + threadIdx.x;  // tile_size_x, use_ldg\n"
        "  // Kernel Tuner's names: grid_size_x block_size_y BLOCK_SIZE MDIMC kernel_tuner\n"
        "  #pragma unroll loop_unroll_factor_k\n"
        "  for (int k = 0; k < 4; ++k)\n"
        "  if (i < n) out[i] = SCALE * in[i];\n"
        "}\n";
    const std::string header = "#define SCALE 2.0f  // unroll_factor\n#include \"kernel.cuh\"\n";
    write_file(dir / "kernel.cu", kernel.data(), kernel.size());
    write_file(dir / "kernel.cuh", header.data(), header.size());
    const float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};  // "DataSource": "data.bin" (BinaryRaw)
    write_file(dir / "data.bin", reinterpret_cast<const char*>(data), sizeof data);
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const WorkDir& work_dir() {
  static const WorkDir w;
  return w;
}

template <typename F>
void expect_input_error(F&& f) {
  try {
    f();
  } catch (const cutune::InputError&) {
  }
}

void use(const cutune::KernelProblem& p) {
  using namespace cutune;
  (void)p.kernel_names();
  (void)p.launch_only_parameters();
  (void)p.warnings();
  (void)p.general_objective();
  (void)p.block_size_names();
  const Space& space = p.space();
  ProblemInstance inst;
  try {
    inst = p.instantiate();
  } catch (const InputError&) {
    return;
  }
  (void)inst.key();
  (void)inst.json();
  for (const auto& a : p.arguments()) {
    std::int64_t count = -1;
    expect_input_error([&] { count = p.argument_size(a, inst); });
    expect_input_error([&] { (void)p.argument_fill(a, inst); });
    // Generators are evaluated per element: only the first few, as a tuning would start.
    if (count > 0)
      expect_input_error([&] { p.generate(a, inst, 0, std::min<std::int64_t>(count, 64), [](std::int64_t, const Value&) {}); });
  }
  expect_input_error([&] { (void)p.evaluate_metrics(inst, 1.5e-3); });

  auto use_config = [&](const Config& c) {
    const std::string key = space.key(c);
    expect_input_error([&] { (void)space.parse_key(key); });
    expect_input_error([&] { (void)space.violated_restriction(c); });
    (void)p.defines(c);
    expect_input_error([&] { (void)p.configured_source(c, inst); });
    expect_input_error([&] { (void)p.plan(c, inst); });
  };
  use_config(space.default_config());
  // Finding the first valid configuration may walk the whole Cartesian product, as in
  // Kernel Tuner; only small spaces are enumerated, so that a big one is not a "hang".
  if (space.cartesian_size() <= 4096) {
    // A device with fewer threads per block prunes a copy, never the original.
    KernelProblem small = p;
    small.set_max_threads_per_block(64);
    expect_input_error([&] { (void)small.space().count_valid(); });
    int seen = 0;
    expect_input_error([&] {
      space.for_each_valid([&](const Config& c) {
        use_config(c);
        return ++seen < 8;
      });
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return -1;
  const fs::path json = work_dir().dir / "problem.json";
  write_file(json, reinterpret_cast<const char*>(data), size);
  try {
    const cutune::KernelProblem p = cutune::KernelProblem::load(json);
    use(p);
  } catch (const cutune::InputError&) {
  }
  return 0;
}
