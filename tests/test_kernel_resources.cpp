// What a compiled configuration costs the GPU (KernelResources): several launches merged, the
// JSON it is kept as, and cutune.ResourceRestrictions read from a T1 file and checked against
// a configuration's resources (CPU: the values stand in for what the GPU worker reads).
#include <catch2/catch.hpp>
#include <string>

#include "cutune/model/errors.hpp"
#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

using cutune::InputError;
using cutune::KernelProblem;
using cutune::KernelResources;
using Catch::Matchers::Contains;

namespace {

KernelResources resources(int registers, std::int64_t local, std::int64_t shared, double occupancy) {
  KernelResources r;
  r.registers = registers;
  r.local_bytes = local;
  r.static_shared_bytes = shared;
  r.dynamic_shared_bytes = 0;
  r.max_threads_per_block = 1024;
  r.block_threads = 128;
  r.active_blocks_per_sm = static_cast<int>(occupancy * 16);
  r.occupancy = occupancy;
  return r;
}

// A T1 file of one kernel, two parameters, a problem variable n, and `extra` in its cutune section.
std::string t1_with(const std::string& cutune_section) {
  return R"({
  "General": {"BenchmarkName": "tiny", "OutputFormat": "JSON"},
  "cutune": {"ProblemVariables": [{"Name": "n", "Default": 1000}], )" +
         cutune_section + R"(},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": [64, 128, 256], "Default": 128},
      {"Name": "tile", "Type": "int", "Values": [1, 2], "Default": 1}
    ],
    "Conditions": []
  },
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "tiny_kernel", "KernelFile": "tiny.cu", "ProblemSize": "n",
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random",
       "Size": "n", "FillValue": 1.0, "Output": 1}
    ]
  }
})";
}

KernelProblem load(const cutune::testing::TempDir& dir, const std::string& cutune_section) {
  dir.write("tiny.cu", "extern \"C\" __global__ void tiny_kernel(float* x) {}\n");
  return KernelProblem::load(dir.write("tiny.json", t1_with(cutune_section)));
}

}  // namespace

TEST_CASE("resources: a configuration of several launches reports its most demanding kernel", "[resources]") {
  KernelResources a = resources(32, 0, 4096, 1.0);
  const KernelResources b = resources(72, 128, 1024, 0.375);
  a.combine(b);
  CHECK(a.registers == 72);
  CHECK(a.local_bytes == 128);
  CHECK(a.static_shared_bytes == 4096);
  CHECK(a.occupancy == 0.375);
  CHECK(a.active_blocks_per_sm == b.active_blocks_per_sm);
  // A launch whose occupancy is unknown (refused before it was asked) leaves the known one.
  KernelResources unknown = resources(16, 0, 0, 0.5);
  unknown.occupancy.reset();
  a.combine(unknown);
  CHECK(a.occupancy == 0.375);
}

TEST_CASE("resources: the JSON form reads back equal, and a row of older versions has none", "[resources]") {
  KernelResources r = resources(40, 16, 2048, 0.625);
  r.dynamic_shared_bytes = 512;
  r.const_bytes = 8;
  const auto j = cutune::to_json(r);
  CHECK(j["registers"] == 40);
  CHECK_FALSE(j.contains("shared_bytes"));  // derived: static plus dynamic
  CHECK(cutune::kernel_resources_of(j) == r);
  r.occupancy.reset();
  r.active_blocks_per_sm.reset();
  CHECK_FALSE(cutune::to_json(r).contains("occupancy"));
  CHECK(cutune::kernel_resources_of(cutune::to_json(r)) == r);
  CHECK_FALSE(cutune::kernel_resources_of(nlohmann::ordered_json::object()));
  CHECK_FALSE(cutune::kernel_resources_of(nlohmann::ordered_json::parse(R"({"registers":"many"})")));
  CHECK_FALSE(cutune::kernel_resources_of(nlohmann::ordered_json(nullptr)));
}

TEST_CASE("resources: every name a restriction may read has a value, shared_bytes the sum", "[resources]") {
  KernelResources r = resources(40, 16, 2048, 0.625);
  r.dynamic_shared_bytes = 512;
  const auto values = cutune::resource_values(r);
  REQUIRE(values.size() == cutune::resource_names().size());
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i].first == cutune::resource_names()[i]);
  CHECK(values[4].first == "shared_bytes");
  CHECK(values[4].second.as_int() == 2560);
  r.occupancy.reset();
  CHECK(cutune::resource_values(r).back().second.is_none());
}

TEST_CASE("resources: cutune.ResourceRestrictions hold or name what they read", "[resources][problem]") {
  cutune::testing::TempDir dir;
  const KernelProblem p =
      load(dir, R"("ResourceRestrictions": ["registers <= 64 and local_bytes == 0",
                                             "occupancy >= 0.5 or block_size_x * tile >= n // 8"])");
  REQUIRE(p.resource_restrictions().size() == 2);
  const auto inst = p.instantiate("");
  const auto config = p.space().parse_assignments("block_size_x=64,tile=1");
  CHECK(p.violated_resource_restriction(inst, config, resources(32, 0, 0, 1.0)).empty());

  const std::string spills = p.violated_resource_restriction(inst, config, resources(32, 24, 0, 1.0));
  CHECK_THAT(spills, Contains("registers=32 local_bytes=24"));
  CHECK_THAT(spills, Contains("registers <= 64 and local_bytes == 0"));

  // The parameters and the problem variables are there too: 64 * 1 < 1000 // 8.
  const std::string low = p.violated_resource_restriction(inst, config, resources(32, 0, 0, 0.25));
  CHECK_THAT(low, Contains("occupancy=0.25"));
  CHECK(p.violated_resource_restriction(inst, p.space().parse_assignments("block_size_x=256,tile=1"),
                                        resources(32, 0, 0, 0.25))
            .empty());

  // An occupancy the worker could not ask for: Python's TypeError, said as such.
  KernelResources unknown = resources(32, 0, 0, 0.25);
  unknown.occupancy.reset();
  CHECK_THAT(p.violated_resource_restriction(inst, config, unknown), Contains("could not be evaluated"));
}

TEST_CASE("resources: a resource restriction naming something unknown is refused at load", "[resources][problem]") {
  cutune::testing::TempDir dir;
  const auto error_of = [&](const std::string& section) {
    try {
      (void)load(dir, section);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const std::string unknown = error_of(R"("ResourceRestrictions": ["regs <= 64"])");
  CHECK_THAT(unknown, Contains("cutune.ResourceRestrictions[0]"));
  CHECK_THAT(unknown, Contains("'regs'"));
  CHECK_THAT(unknown, Contains("registers"));  // the names it could have meant
  CHECK(unknown.find('\n') == std::string::npos);
  CHECK_THAT(error_of(R"("ResourceRestrictions": "registers <= 64")"), Contains("cutune.ResourceRestrictions"));
  CHECK_THAT(error_of(R"("ResourceRestrictions": [64])"), Contains("must be a string"));
  CHECK_THAT(error_of(R"("ResourceRestrictions": ["registers <="])"), Contains("cutune.ResourceRestrictions[0]"));
}
