// What a configuration costs the GPU, on the GPU ([gpu]): the worker's KernelResources against
// the driver's own answers (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor)
// asked in this process for the same cubin, with a kernel whose static shared memory is known
// (16 bytes a thread); then `tune` with a resource restriction and `query` showing them.
// CPU: theoretical_occupancy's arithmetic.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "cutune/cuda/device.hpp"
#include "cutune/cuda/driver.hpp"
#include "cutune/cuda/function_resources.hpp"
#include "cutune/db/store.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/runner/gpu_worker.hpp"

using namespace cutune;
using namespace cutune::testing::cli;
using Catch::Matchers::Contains;

namespace {

// 4 floats of shared memory per thread: static shared memory is 16 * block_size_x bytes.
const char* kStagedSource = R"(extern "C" __global__ void staged(float* x, int n) {
  __shared__ float tile[block_size_x * 4];
  int i = blockIdx.x * block_size_x + threadIdx.x;
  for (int k = 0; k < 4; ++k) tile[threadIdx.x * 4 + k] = i < n ? x[i] + k : 0.0f;
  __syncthreads();
  if (i < n) x[i] = tile[threadIdx.x * 4 + 3] - 2.0f;  // x + 1 whatever the block size
}
)";

std::string staged_problem(const std::string& cutune_section) {
  return R"({
  "General": {"BenchmarkName": "staged", "OutputFormat": "JSON"},
  "cutune": {)" + cutune_section + R"(},
  "ConfigurationSpace": {
    "TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": [64, 128, 256, 512], "Default": 64}],
    "Conditions": []
  },
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "staged", "KernelFile": "staged.cu", "ProblemSize": 100000,
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random",
       "Size": 100000, "FillValue": 1.0, "Output": 1},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 100000}
    ]
  }
})";
}

}  // namespace

TEST_CASE("resources: theoretical occupancy is resident warps over the SM's warps", "[resources]") {
  CHECK(cuda::theoretical_occupancy(8, 256, 2048, 32) == 1.0);
  CHECK(cuda::theoretical_occupancy(3, 256, 2048, 32) == 0.375);
  CHECK(cuda::theoretical_occupancy(16, 96, 2048, 32) == 0.75);  // 3 warps a block
  CHECK(cuda::theoretical_occupancy(1, 33, 2048, 32) == 2.0 / 64.0);  // a partial warp is a warp
  CHECK(cuda::theoretical_occupancy(0, 256, 2048, 32) == 0.0);
  CHECK(cuda::theoretical_occupancy(4, 256, 0, 32) == 0.0);  // limits unknown
}

TEST_CASE("resources: the GPU worker reports what cuFuncGetAttribute and the occupancy API say", "[gpu][resources]") {
  CliTempDir dir;
  dir.write("staged.cu", kStagedSource);
  const KernelProblem p = KernelProblem::load(dir.write("staged.json", staged_problem("")));
  runner::GpuWorker w(p, "", 0, worker::MeasureOptions{}, 7);
  const DeviceIdentity device = w.wait_identified();
  w.wait_ready();
  cuda::Context context(0);  // this process asks the driver itself
  const cuda::DeviceLimits limits = cuda::limits(0);
  p.space().for_each_valid([&](const Config& config) {
    const int block = static_cast<int>(p.space().assignments(config).front().second.as_int());
    INFO("block_size_x=" << block);
    const jit::CompileResult compiled = jit::compile(jit::compile_request(p, config, device.arch()));
    REQUIRE(compiled.ok);
    const GpuEvaluation ev = w.evaluate(config, compiled.cubin, compiled.lowered_names, std::nullopt);
    INFO(ev.error);
    CHECK(ev.status == Status::Ok);
    REQUIRE(ev.resources);
    const KernelResources& r = *ev.resources;

    const cuda::Module module(compiled.cubin);
    const CUfunction f = module.function(compiled.lowered_names.front());
    CHECK(r.registers == cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS));
    CHECK(r.local_bytes == cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    CHECK(r.static_shared_bytes == cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
    CHECK(r.static_shared_bytes == 16 * block);  // the kernel's own declaration
    CHECK(r.dynamic_shared_bytes == 0);
    CHECK(r.const_bytes == cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES));
    CHECK(r.max_threads_per_block == cuda::Module::attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    CHECK(r.block_threads == block);
    int blocks = 0;
    CUTUNE_CU(CU_FN(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&blocks, f, block, 0));
    REQUIRE(r.active_blocks_per_sm);
    CHECK(*r.active_blocks_per_sm == blocks);
    REQUIRE(r.occupancy);
    CHECK(*r.occupancy == cuda::theoretical_occupancy(blocks, static_cast<unsigned>(block), limits.max_threads_per_sm,
                                                      limits.warp_size));
    CHECK(*r.occupancy > 0.0);
    return true;
  });
}

TEST_CASE("resources: tune skips what a resource restriction rules out, query shows what each costs",
          "[gpu][resources]") {
  CliTempDir dir;
  dir.write("staged.cu", kStagedSource);
  // 16 bytes a thread: block 256 uses 4096 bytes and 512 uses 8192, beyond the bound.
  const fs::path problem =
      dir.write("staged.json", staged_problem(R"("ResourceRestrictions": ["static_shared_bytes <= 2048"])"));
  const std::string db = dir / "staged.db";
  const std::vector<std::string> tune{"tune", problem.string(), "--db", db, "--finalists", "0"};
  const CliResult r = run_cli(tune);
  INFO(describe(tune, r));
  REQUIRE(r.status == 0);
  const db::Store s = db::Store::open(db, false);
  const auto t = s.measurement_targets({});
  REQUIRE(t.size() == 1);
  const auto rows = s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id);
  REQUIRE(rows.size() == 4);
  for (const auto& m : rows) {
    INFO(m.config.key() << ": " << m.error);
    REQUIRE(m.measured());
    REQUIRE(m.measured()->resources);
    const bool over = m.measured()->resources->static_shared_bytes > 2048;
    CHECK(over == (m.config.key() == "256" || m.config.key() == "512"));
    CHECK(m.status == (over ? Status::Constraints : Status::Ok));
    if (over) CHECK_THAT(m.error, Contains("static_shared_bytes=") && Contains("static_shared_bytes <= 2048"));
  }
  const std::vector<std::string> query{"query", "--db", db};
  const CliResult q = run_cli(query);
  INFO(describe(query, q));
  REQUIRE(q.status == 0);
  CHECK_THAT(q.out, Contains("regs") && Contains("occupancy"));
  const std::vector<std::string> query_json{"query", "--db", db, "--json"};
  const CliResult qj = run_cli(query_json);
  REQUIRE(qj.status == 0);
  const auto winners = nlohmann::json::parse(qj.out);
  REQUIRE(winners.size() == 1);
  CHECK(winners[0]["resources"]["static_shared_bytes"].get<int>() <= 2048);
}
