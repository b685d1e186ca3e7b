// The prior on the command line: `cutune tune --simulate ... --prior-from` says which prior
// it used and from what, a prior of another kernel is not used (and the reason is given),
// a prior from the DB's other GPU is found by itself, and --prior none with files is refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <fmt/format.h>

#include "cli_runner.hpp"
#include "test_paths.hpp"

using namespace cutune::testing::cli;

namespace {
std::string space_file(const std::string& name) {
  return cutune::testing::material("data/spaces/" + std::string(name)).string();
}
}  // namespace

TEST_CASE("tune --simulate --prior-from reports the prior used and what it came from", "[material]") {
  const auto r = run_cli({"tune", "--simulate", space_file("convolution_A4000.json.gz"), "--prior-from",
                          space_file("convolution_A100.json.gz"), "--budget", "12"});
  INFO(describe({"tune --simulate --prior-from"}, r));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("prior from convolution_kernel on NVIDIA A100-PCIE-40GB, problem [4096,4096]: 4362 "
                             "measurements"));
  CHECK_THAT(r.out, Contains("prior used: 4362 measurements from 1 source(s)"));
  CHECK_THAT(r.out, Contains("12 evaluations"));
}

// The trace names the prior's source; a Kernel Tuner recording names no CUDA function, and the
// trace says so with null rather than an empty name.
TEST_CASE("tune --simulate --trace: the prior's function is null when the recording names none", "[material]") {
  CliTempDir dir;
  const auto r = run_cli({"tune", "--simulate", space_file("convolution_A4000.json.gz"), "--prior-from",
                          space_file("convolution_A100.json.gz"), "--budget", "4", "--db", dir / "t.db",
                          "--trace", dir / "trace.json"});
  INFO(describe({"tune --simulate --trace"}, r));
  REQUIRE(r.status == 0);
  const std::string trace = slurp(dir / "trace.json");
  CHECK_THAT(trace, Contains("\"kernel\": \"convolution_kernel\""));
  CHECK_THAT(trace, Contains("\"function\": null"));
  CHECK_THAT(trace, !Contains("\"function\": \"\""));
}

TEST_CASE("tune --simulate: a prior of another kernel is not used, and says why", "[material]") {
  const auto r = run_cli({"tune", "--simulate", space_file("convolution_A4000.json.gz"), "--prior-from",
                          space_file("dedispersion_A100.json.gz"), "--budget", "5"});
  INFO(describe({"tune --simulate --prior-from (other kernel)"}, r));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("no prior used; not used: dedispersion_kernel on NVIDIA A100-PCIE-40GB"));
  CHECK_THAT(r.out, Contains("kernel 'dedispersion_kernel', not 'convolution_kernel'"));
  CHECK_THAT(r.out, !Contains("prior used:"));
}

TEST_CASE("tune --simulate --db: the DB's run of the kernel on another GPU is the prior, and --prior none turns it off", "[material]") {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_prior_cli_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "runs.db").string();
  REQUIRE(run_cli({"tune", "--simulate", space_file("dedispersion_A100.json.gz"), "--db", db, "--budget", "25"})
              .status == 0);
  const auto with = run_cli({"tune", "--simulate", space_file("dedispersion_A4000.json.gz"), "--db", db, "--budget",
                             "5", "--prior", "on"});
  INFO(describe({"second run"}, with));
  REQUIRE(with.status == 0);
  CHECK_THAT(with.out, Contains("prior from dedispersion_kernel on NVIDIA A100-PCIE-40GB"));
  CHECK_THAT(with.out, Contains("prior used: 25 measurements from 1 source(s)"));
  const auto without = run_cli({"tune", "--simulate", space_file("dedispersion_A4000.json.gz"), "--db", db,
                                "--budget", "5", "--prior", "none", "--seed", "2"});
  REQUIRE(without.status == 0);
  CHECK_THAT(without.out, !Contains("prior from"));
  CHECK_THAT(without.out, !Contains("prior used"));
  expect_bad_input({"tune", "--simulate", space_file("dedispersion_A4000.json.gz"), "--prior", "none",
                    "--prior-from", space_file("dedispersion_A100.json.gz")},
                   {"--prior none with --prior-from"});
  std::filesystem::remove_all(dir);
}

// BAT's convolution names its kernel "convolution" (its BenchmarkName) and the CUDA function
// "convolution_kernel"; the RTX 2080 Ti's Kernel Tuner cache names only the function. The DB
// keeps both names of a run's kernel, so the second finds the first by the function's name.
TEST_CASE("tune --simulate --db: a kernel stored under another name is the prior by its function's name") {
  const auto spaces = std::filesystem::path(CUTUNE_TEST_DATA_DIR).parent_path().parent_path() / "results" / "spaces";
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cutune_prior_function_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "runs.db").string();
  REQUIRE(run_cli({"tune", "--simulate", (spaces / "bat_convolution" / "bat_convolution_nvidia_h200.json.gz").string(),
                   "--db", db, "--budget", "20"})
              .status == 0);
  const auto with = run_cli({"tune", "--simulate",
                             (spaces / "autotuning_methodology" / "convolution_rtx_2080_ti.json.gz").string(), "--db",
                             db, "--budget", "5", "--prior", "on"});
  INFO(describe({"second run"}, with));
  REQUIRE(with.status == 0);
  CHECK_THAT(with.out, Contains("prior from convolution (function convolution_kernel) on NVIDIA H200"));
  CHECK_THAT(with.out, Contains("measurements from 1 source(s)"));
  // Exported as a cache, the first run's kernel carries its function's name beside cutune's.
  const std::string exported = (dir / "convolution.json").string();
  const auto e = run_cli({"export", "--format", "cache", "--db", db, "--kernel", "convolution", "-o", exported});
  INFO(describe({"export"}, e));
  REQUIRE(e.status == 0);
  std::ifstream in(exported);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Contains("\"cutune_kernel_function\"") && Contains("\"convolution_kernel\""));
  std::filesystem::remove_all(dir);
}

// A recording at another problem size is a prior whose winners are checked first (matmul's
// 2048^3 winners are among the worst at 1024^3); one at the same size on another GPU is not.
TEST_CASE("tune --simulate --prior-from: a recording at another problem size is checked, one at the same size is not") {
  const auto spaces = std::filesystem::path(CUTUNE_TEST_DATA_DIR).parent_path().parent_path() / "results" / "spaces";
  const auto other_size = run_cli({"tune", "--simulate", (spaces / "matmul_1024_nvidia_h200.json.gz").string(),
                                   "--prior-from", (spaces / "matmul_2048_nvidia_h200.json.gz").string(), "--budget", "12"});
  INFO(describe({"tune --simulate --prior-from (2048^3 for 1024^3)"}, other_size));
  REQUIRE(other_size.status == 0);
  CHECK_THAT(other_size.out, Contains("problem [2048,2048]: 842 measurements, 842 valid here; measured at other "
                                      "problem sizes only"));
  const auto same_size = run_cli({"tune", "--simulate", (spaces / "matmul_2048_nvidia_h200.json.gz").string(),
                                  "--prior-from", (spaces / "matmul_2048_nvidia_h100_80gb_hbm3.json.gz").string(),
                                  "--budget", "12"});
  INFO(describe({"tune --simulate --prior-from (H100 for H200)"}, same_size));
  REQUIRE(same_size.status == 0);
  CHECK_THAT(same_size.out, Contains("prior from matmul on NVIDIA H100 80GB HBM3, problem [2048,2048]"));
  CHECK_THAT(same_size.out, !Contains("other problem sizes"));
}

// A cutune-written recording names its problem's variables beside problem_size ([n, m] for matmul):
// at the target's extent, one at another k is from another problem; a DB import of a Kernel Tuner
// cache (size only, its tune_params kept beside) is at the target's size.
TEST_CASE("tune --simulate: a recording at the target's extent but another k is from another problem") {
  const auto spaces = std::filesystem::path(CUTUNE_TEST_DATA_DIR).parent_path().parent_path() / "results" / "spaces";
  const std::string h100 = (spaces / "matmul_2048_nvidia_h100_80gb_hbm3.json.gz").string();
  const std::string h200 = (spaces / "matmul_2048_nvidia_h200.json.gz").string();
  CliTempDir dir;
  // Each recording through the DB at a named problem: the export writes the variables.
  auto at = [&](const std::string& file, const std::string& problem, const std::string& name) {
    const std::string db = dir / (name + ".db"), out = dir / (name + ".json");
    REQUIRE(run_cli({"import", file, "--db", db, "--problem", problem}).status == 0);
    const auto e = run_cli({"export", "--format", "cache", "--db", db, "-o", out});
    INFO(describe({"export"}, e));
    REQUIRE(e.status == 0);
    CHECK_THAT(slurp(out), Contains("\"cutune_problem\""));
    return out;
  };
  const std::string target = at(h200, "k=2048,m=2048,n=2048", "h200_k2048");
  const auto other_k = run_cli({"tune", "--simulate", target, "--prior-from",
                                at(h100, "k=1024,m=2048,n=2048", "h100_k1024"), "--budget", "12"});
  INFO(describe({"tune --simulate (prior at k=1024)"}, other_k));
  REQUIRE(other_k.status == 0);
  CHECK_THAT(other_k.out, Contains("measured at other problem sizes only"));
  const auto same_k = run_cli({"tune", "--simulate", target, "--prior-from",
                               at(h100, "k=2048,m=2048,n=2048", "h100_k2048"), "--budget", "12"});
  INFO(describe({"tune --simulate (prior at k=2048)"}, same_k));
  REQUIRE(same_k.status == 0);
  CHECK_THAT(same_k.out, Contains("prior used:"));
  CHECK_THAT(same_k.out, !Contains("other problem sizes"));
  // The DB's import of the recording as Kernel Tuner writes it (no variables) is taken at its size.
  const std::string db = dir / "imported.db";
  REQUIRE(run_cli({"import", h100, "--db", db}).status == 0);
  const auto from_db = run_cli({"tune", "--simulate", target, "--db", db, "--prior", "on", "--budget", "12"});
  INFO(describe({"tune --simulate --db (an import)"}, from_db));
  REQUIRE(from_db.status == 0);
  CHECK_THAT(from_db.out, Contains("prior from matmul on NVIDIA H100 80GB HBM3"));
  CHECK_THAT(from_db.out, !Contains("other problem sizes"));
}
