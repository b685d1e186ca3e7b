// Tests of the cutune command line, run as a subprocess: exit codes, one-line messages for
// bad input, and that bad input writes nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>
#include <thread>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "result_helpers.hpp"
#include "cutune/db/store.hpp"

#include "cli_runner.hpp"
#include "nameless_default_problem.hpp"
#include "test_paths.hpp"

using namespace cutune::testing::cli;

namespace {

// A small valid T1 file and its kernel, written into `dir`; returns the JSON text.
const std::string kCliT1 = R"({
  "General": {"BenchmarkName": "clitiny", "OutputFormat": "JSON"},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]", "Default": 64}
    ],
    "Conditions": ["block_size_x >= 32"]
  },
  "KernelSpecification": {
    "Language": "CUDA",
    "KernelName": "clitiny",
    "KernelFile": "clitiny.cu",
    "ProblemSize": 100,
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "FillType": "Random", "Size": 100, "FillValue": 1.0}
    ]
  }
})";

bool gpu_driver_present() {
  if (fs::exists("/dev/nvidia0")) return true;
  if (void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(h);
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("cli: bad input exits 2 with one line naming the problem, writing nothing",
          "[cli]") {
  CliTempDir dir;
  const std::string db = dir / "out.db", report = dir / "report.json";
  const auto before = dir.listing();

  SECTION("unknown kernel") {
    expect_bad_input({"space", "nosuch_kernel"}, {"nosuch_kernel"});
    expect_bad_input({"compile", "nosuch_kernel"}, {"nosuch_kernel"});
    expect_bad_input({"tune", "nosuch_kernel", "--db", db, "--report", report}, {"nosuch_kernel"});
    expect_bad_input({"space", dir / "absent.json"}, {"absent.json"});
  }
  SECTION("unknown parameter in compile --config") {
    expect_bad_input({"compile", "vector_add", "--config", "nope=1"}, {"nope"});
  }
  SECTION("a value outside the declared list") {
    expect_bad_input({"compile", "vector_add", "--config", "block_size_x=100"},
                     {"block_size_x", "100"});
  }
  SECTION("a configuration that violates a restriction") {
    expect_bad_input(
        {"compile", "vector_add", "--config", "block_size_x=1024,elements_per_thread=8"},
        {"block_size_x < 1024"});
  }
  SECTION("an objective that is not time, energy or a metric; a direction time cannot have") {
    expect_bad_input({"tune", "vector_add", "--objective", "GFLOPs", "--db", db, "--report", report},
                     {"--objective GFLOPs", "gbps"});
    expect_bad_input({"tune", "vector_add", "--objective-higher-is-better", "--db", db}, {"time"});
    expect_bad_input({"tune", "vector_add", "--objective", "gbps", "--objective-higher-is-better",
                      "--objective-lower-is-better", "--db", db},
                     {"--objective-lower-is-better"});
  }
  SECTION("--problem n=abc") {
    expect_bad_input({"space", "vector_add", "--problem", "n=abc"}, {"n", "abc"});
    expect_bad_input({"tune", "vector_add", "--problem", "n=abc", "--db", db, "--report", report},
                     {"n", "abc"});
  }
  SECTION("--problem m=1") {
    expect_bad_input({"space", "reduction", "--problem", "m=1"}, {"'m'"});
    expect_bad_input({"tune", "reduction", "--problem", "m=1", "--db", db}, {"'m'"});
  }
  SECTION("--problem n=0 (below Min)") {
    expect_bad_input({"space", "vector_add", "--problem", "n=0"}, {"n=0"});
    expect_bad_input({"tune", "vector_add", "--problem", "n=0", "--db", db}, {"n=0"});
  }
  SECTION("a T1 file with a malformed restriction") {
    CliTempDir t1;
    t1.write("clitiny.cu", "extern \"C\" __global__ void clitiny(float* x) {}\n");
    std::string text = kCliT1;
    text.replace(text.find("block_size_x >= 32"), 18, "block_size_x >= ");
    const std::string file = t1.write("clitiny.json", text).string();
    expect_bad_input({"space", file}, {file, "block_size_x >= "});
    expect_bad_input({"compile", file}, {file});
    expect_bad_input({"tune", file, "--db", db}, {file});

    // The same file with the restriction fixed is fine.
    t1.write("clitiny.json", kCliT1);
    CliResult ok = run_cli({"space", file});
    INFO(describe({"space", file}, ok));
    CHECK(ok.status == 0);
    CHECK_THAT(ok.out, Contains("valid size:     3"));
  }
  SECTION("a malformed JSON file") {
    const std::string file = dir.write("broken.json", "{\"General\": {\"BenchmarkName\": ").string();
    expect_bad_input({"space", file}, {file, "malformed JSON"});
    expect_bad_input({"compile", file}, {file});
    fs::remove(file);
  }
  SECTION("query --db on a missing file") {
    const std::string missing = dir / "missing.db";
    expect_bad_input({"query", "--db", missing}, {missing});
    CHECK_FALSE(fs::exists(missing));
    CHECK_FALSE(fs::exists(missing + "-journal"));
    CHECK_FALSE(fs::exists(missing + "-wal"));
  }
  SECTION("query --db on a garbage file leaves it byte-for-byte unchanged") {
    std::string garbage;
    for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 131 + 7) % 256));
    const fs::path file = dir.write("garbage.db", garbage);
    expect_bad_input({"query", "--db", file.string()}, {file.string()});
    expect_bad_input({"query", "--db", file.string(), "--json"}, {file.string()});
    CHECK(slurp(file) == garbage);

    // A file that starts like SQLite but is not.
    std::string fake = std::string("SQLite format 3") + '\0' + garbage;
    dir.write("fake.db", fake);
    expect_bad_input({"query", "--db", dir / "fake.db"}, {"fake.db"});
    CHECK(slurp(dir.path() / "fake.db") == fake);
    fs::remove(file);
    fs::remove(dir.path() / "fake.db");
  }
  SECTION("query --db on a SQLite file that is not cutune's") {
    const fs::path copy = dir.path() / "not_cutune.sqlite";
    fs::copy_file(std::string(CUTUNE_TEST_DATA_DIR) + "/not_cutune.sqlite", copy);
    const std::string original = slurp(copy);
    REQUIRE(original.substr(0, 15) == "SQLite format 3");
    expect_bad_input({"query", "--db", copy.string()}, {copy.string(), "not a cutune database"});
    CHECK(slurp(copy) == original);
    fs::remove(copy);
  }
  SECTION("tune --strategy nope") {
    expect_bad_input({"tune", "vector_add", "--strategy", "nope", "--db", db, "--report", report},
                     {"nope"});
  }
  SECTION("tune --budget 0") {
    expect_bad_input({"tune", "vector_add", "--budget", "0", "--db", db, "--report", report},
                     {"--budget"});
  }
  SECTION("tune --lookahead 0") {
    expect_bad_input({"tune", "vector_add", "--lookahead", "0", "--db", db}, {"--lookahead"});
  }
  SECTION("tune --samples 0") {
    expect_bad_input({"tune", "vector_add", "--samples", "0", "--db", db}, {"--samples"});
  }
  SECTION("compile --arch that NVRTC does not know") {
    expect_bad_input({"compile", "vector_add", "--arch", "sm_1"}, {"sm_1"});
  }
  SECTION("an unknown subcommand") {
    expect_bad_input({"frobnicate"}, {"frobnicate"});
  }
  SECTION("an unknown option") {
    expect_bad_input({"kernels", "--bogus"}, {"--bogus"});
    expect_bad_input({"space", "vector_add", "--nope=3"}, {"--nope"});
  }
  SECTION("no subcommand") {
    CliResult r = run_cli({});
    INFO(describe({}, r));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
  }

  // Nothing was created next to the inputs: no database, no report.
  CHECK_FALSE(fs::exists(db));
  CHECK_FALSE(fs::exists(report));
  CHECK(dir.listing() == before);
}

TEST_CASE("cli: bad tune input leaves an existing DB and its results as they were", "[cli]") {
  CliTempDir dir;
  const std::string db = dir / "results.db";
  {
    cutune::db::Store store = cutune::db::Store::open(db, true);
    cutune::db::RunSpec spec;
    spec.device.name = "NVIDIA H200";
    spec.kernel = "vector_add";
    spec.source_hash = "h";
    spec.problem_key = "n=1000";
    cutune::db::Run run = store.begin_run(spec);
    cutune::db::Measurement m;
    m.config = cutune::testing::config_of("256,4,4", R"({"block_size_x":256})");
    m.median_ms = 0.5;
    m.samples_ms = {0.5};
    REQUIRE(run.add(m));
    cutune::db::WinnerChoice w;
    w.config = m.config;
    w.median_ms = m.median_ms;
    run.set_winner(w);
    run.end();
  }
  const std::string before = slurp(db);
  const auto listing = dir.listing();
  expect_bad_input({"tune", "vector_add", "--strategy", "nope", "--db", db}, {"nope"});
  expect_bad_input({"tune", "vector_add", "--try", "block_size_x=100", "--db", db}, {"--try", "100"});
  expect_bad_input({"tune", "vector_add", "--objective", "GFLOPs", "--db", db}, {"GFLOPs"});
  expect_bad_input({"tune", "vector_add", "--verify", "nonsense", "--db", db}, {"nonsense"});
  CHECK(slurp(db) == before);
  CHECK(dir.listing() == listing);
  const CliResult q = run_cli({"query", "--db", db, "--json"});
  REQUIRE(q.status == 0);
  const auto winners = nlohmann::json::parse(q.out);
  REQUIRE(winners.size() == 1);
  CHECK(winners[0]["config_key"] == "256,4,4");

  // A file that is not a cutune DB: tune refuses it (one line) before any GPU work and
  // leaves it byte for byte.
  const std::string garbage = dir / "garbage.db";
  const std::string text(5000, 'g');
  dir.write("garbage.db", text);
  expect_bad_input({"tune", "vector_add", "--db", garbage}, {garbage});
  CHECK(slurp(garbage) == text);
}

TEST_CASE("cli: --help of every subcommand", "[cli]") {
  const std::vector<std::vector<std::string>> cases{
      {"--help"},          {"devices", "--help"}, {"kernels", "--help"}, {"space", "--help"},
      {"compile", "--help"}, {"tune", "--help"},  {"query", "--help"},   {"-h"}};
  for (const auto& args : cases) {
    CliResult r = run_cli(args);
    INFO(describe(args, r));
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("Usage"));
    CHECK(r.err.empty());
  }
  CliResult top = run_cli({"--help"});
  for (const char* sub : {"devices", "kernels", "space", "compile", "tune", "query"})
    CHECK_THAT(top.out, Contains(sub));
  CHECK_THAT(run_cli({"tune", "--help"}).out, Contains("--strategy") && Contains("--budget"));
  CHECK_THAT(run_cli({"compile", "--help"}).out, Contains("--config") && Contains("--arch"));
}

TEST_CASE("cli: kernels lists the built-in templates with their sizes", "[cli]") {
  CliResult r = run_cli({"kernels"});
  INFO(describe({"kernels"}, r));
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("reduction  (720 of 2592 configurations valid)"));
  CHECK_THAT(r.out, Contains("vector_add  (59 of 60 configurations valid)"));
  CHECK(r.out.find("reduction") < r.out.find("vector_add"));
}

TEST_CASE("cli: space shows sizes and configurations", "[cli]") {
  CliResult r = run_cli({"space", "reduction"});
  INFO(describe({"space", "reduction"}, r));
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("valid size:     720"));
  CHECK_THAT(r.out, Contains("cartesian size: 2592"));
  CHECK_THAT(r.out, Contains("default: 256,2,8,4,1,1"));
  CHECK(r.out.find("named by no Default") == std::string::npos);  // the template names it
  CHECK_THAT(r.out, Contains("problem n=268435456"));

  CliResult v = run_cli({"space", "vector_add", "--problem", "n=2**20+7", "--show", "2"});
  INFO(describe({"space", "vector_add", "--problem", "n=2**20+7", "--show", "2"}, v));
  CHECK(v.status == 0);
  CHECK_THAT(v.out, Contains("valid size:     59"));
  CHECK_THAT(v.out, Contains("problem n=1048583"));
  // First valid configuration 64,1,1: grid ceil(1048583 / 64) = 16385.
  CHECK_THAT(v.out, Contains("grid (16385,1,1) block (64,1,1)"));
}

// A problem that names no default: a tuning starts with its strategy, unless an output without a
// reference is verified against the default's output, which then comes first.
TEST_CASE("cli: space says why a default a problem does not name is evaluated first or not", "[cli]") {
  CliTempDir dir;
  dir.write("k.cu", cutune::testing::kNamelessKernelSource);
  auto problem = [&](const std::string& name, const std::string& extra) {
    return dir.write(name, cutune::testing::nameless_default_problem(extra));
  };
  const CliResult against_default = run_cli({"space", problem("k.json", "").string()});
  INFO(describe({"space k.json"}, against_default));
  REQUIRE(against_default.status == 0);
  CHECK_THAT(against_default.out, Contains("default: 32 (named by no Default, but an output without a reference"));
  const CliResult unverified =
      run_cli({"space", problem("unverified.json", R"(, "cutune": {"Verification": {"x": "none"}})").string()});
  INFO(describe({"space unverified.json"}, unverified));
  REQUIRE(unverified.status == 0);
  CHECK_THAT(unverified.out, Contains("default: 32 (named by no Default: a tuning starts with its strategy instead)"));
}

TEST_CASE("cli: space --show N prints exactly N configurations", "[cli]") {
  auto count_configs = [](const std::string& out) {
    std::size_t n = 0;
    for (std::size_t pos = out.find("grid ("); pos != std::string::npos;
         pos = out.find("grid (", pos + 1))
      ++n;
    return n;
  };
  for (int show : {0, 1, 3, 59, 100}) {
    const std::vector<std::string> args{"space", "vector_add", "--show", std::to_string(show)};
    CliResult r = run_cli(args);
    INFO(describe(args, r));
    CHECK(r.status == 0);
    CHECK(count_configs(r.out) == static_cast<std::size_t>(std::min(show, 59)));
  }
}

TEST_CASE("cli: compile builds one configuration without a GPU", "[cli]") {
  {
    CliResult r = run_cli({"compile", "vector_add"});
    INFO(describe({"compile", "vector_add"}, r));
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("vector_add 256,4,4") && Contains("bytes of cubin for sm_90"));
  }
  {
    const std::vector<std::string> args{"compile", "vector_add", "--config", "block_size_x=128",
                                        "--arch", "sm_90"};
    CliResult r = run_cli(args);
    INFO(describe(args, r));
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("vector_add 128,4,4") && Contains("bytes of cubin for sm_90"));
  }
}

TEST_CASE("cli: devices succeeds with or without a GPU", "[cli]") {
  CliResult r = run_cli({"devices"});
  INFO(describe({"devices"}, r));
  CHECK(r.status == 0);
  CHECK_FALSE(r.out.empty());
  CliResult j = run_cli({"devices", "--json"});
  INFO(describe({"devices", "--json"}, j));
  CHECK(j.status == 0);
  CHECK_THAT(j.out, Contains("\"devices\""));
}

TEST_CASE("cli: tune without a GPU exits 3 saying it needs one", "[cli]") {
  if (gpu_driver_present()) {
    WARN("skipped: this machine has /dev/nvidia0 or a loadable libcuda.so.1");
    return;
  }
  CliTempDir dir;
  const std::string db = dir / "tune.db", report = dir / "report.json";
  const std::vector<std::string> args{"tune", "vector_add", "--db", db, "--report", report};
  CliResult r = run_cli(args);
  INFO(describe(args, r));
  CHECK(r.status == 3);
  CHECK_THAT(r.err, Contains("needs a GPU"));
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(db));
  CHECK_FALSE(fs::exists(report));
}

TEST_CASE("cli: tune killed with SIGKILL at any point resumes and finishes the space", "[gpu]") {
  CliTempDir dir;
  const std::string db = dir / "resume.db", cache = dir / "cubins";
  auto args = [&](const std::string& report) {
    return std::vector<std::string>{"tune", "reduction", "--problem", "n=2**20", "--samples", "3", "--finalists",
                                    "0", "--db", db, "--cache-dir", cache, "--report", report};
  };
  // Killed early (start-up, first compiles), in the middle, and late.
  for (double at : {0.2, 0.7, 1.5, 2.5, 4.0}) run_cli(args(dir / "killed.json"), at);
  const CliResult finish = run_cli(args(dir / "finish.json"));
  INFO(describe(args(""), finish));
  REQUIRE(finish.status == 0);
  const auto f = nlohmann::json::parse(slurp(dir / "finish.json"));
  CHECK(f["configs_tried"].get<std::uint64_t>() + f["configs_resumed"].get<std::uint64_t>() ==
        f["space_valid"].get<std::uint64_t>());
  CHECK(f["configs_resumed"].get<std::uint64_t>() > 0);  // the killed runs had committed work
  const CliResult again = run_cli(args(dir / "again.json"));
  REQUIRE(again.status == 0);
  const auto a = nlohmann::json::parse(slurp(dir / "again.json"));
  CHECK(a["configs_tried"] == 0);
  CHECK(a["configs_resumed"] == a["space_valid"]);
  CHECK(cutune::db::Store::open(db, false).integrity_ok());
}

// What a new user hit on a fresh machine: input that was accepted and acted on, and
// messages that did not say what was wrong.
namespace {

fs::path recorded() { return cutune::testing::material("data/spaces/convolution_A100.json.gz"); }

// A DB of a simulated tuning of the recorded convolution space: 5 evaluations, its winner.
void simulate_into(const std::string& db) {
  const std::vector<std::string> args{"tune", "--simulate", recorded().string(), "--budget", "5", "--db", db};
  const CliResult r = run_cli(args);
  INFO(describe(args, r));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("in " + db + " under kernel convolution_kernel, problem recorded:convolution_A100"));
}

// The lines of `cutune SUB --help` that describe an option, each with its description
// lines joined.
std::vector<std::string> help_options(const std::string& sub) {
  const CliResult r = run_cli({sub, "--help"});
  REQUIRE(r.status == 0);
  std::vector<std::string> options;
  std::istringstream in(r.out);
  bool in_options = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Options:", 0) == 0) in_options = true;
    else if (!in_options || line.empty()) continue;
    else if (line.rfind("  -", 0) == 0) options.push_back(line);
    else if (line.rfind("      ", 0) == 0 && !options.empty()) options.back() += " " + line;
  }
  return options;
}

}  // namespace

TEST_CASE("cli: a new user's bad input is refused in one line and writes nothing", "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "new.db";
  const std::string rec = recorded().string();
  const auto before = dir.listing();

  SECTION("negative numbers for unsigned options (CLI11 read -5 as 2^64 - 5)") {
    expect_bad_input({"tune", "--simulate", rec, "--budget", "-5", "--db", db}, {"--budget", "-5", "at least 1"});
    expect_bad_input({"tune", "--simulate", rec, "--budget", "0", "--db", db}, {"--budget", "0"});
    expect_bad_input({"tune", "--simulate", rec, "--seed", "-1", "--db", db}, {"--seed", "-1"});
    expect_bad_input({"tune", "vector_add", "--seed", "-1", "--db", db}, {"--seed", "-1"});
    expect_bad_input({"tune", "--simulate", rec, "--seed", "1e3", "--db", db}, {"--seed", "1e3"});
    expect_bad_input({"score", "--spaces", rec, "--seed", "-1"}, {"--seed", "-1"});
    expect_bad_input({"score", "--spaces", rec, "--threads", "-2"}, {"--threads", "-2"});
    expect_bad_input({"score", "--spaces", rec, "--batch", "0"}, {"--batch", "0"});
  }
  SECTION("--time-budget -3 says what it wants, without a 300-digit bound") {
    const auto r = expect_bad_input({"tune", "--simulate", rec, "--time-budget", "-3", "--db", db},
                                    {"--time-budget", "-3", "seconds above 0"});
    CHECK(r.err.size() < 120);
    expect_bad_input({"tune", "vector_add", "--time-budget", "0", "--db", db}, {"--time-budget", "0"});
  }
  SECTION("a KERNEL beside --simulate CACHE (it was ignored)") {
    expect_bad_input({"tune", "--simulate", rec, "vector_add", "--db", db}, {"vector_add", "--simulate"});
    expect_bad_input({"tune", "vector_add", "--simulate", rec, "--db", db}, {"vector_add", "--simulate"});
  }
  SECTION("--problem with a repeated name, a division by zero, an overflow, a syntax error, a float") {
    expect_bad_input({"space", "vector_add", "--problem", "n=100,n=200"}, {"n=100", "n=200", "given twice"});
    expect_bad_input({"tune", "vector_add", "--problem", "n=100,n=200", "--db", db}, {"given twice"});
    expect_bad_input({"space", "vector_add", "--problem", "n=1/0"}, {"n='1/0'", "division by zero"});
    expect_bad_input({"space", "vector_add", "--problem", "n=2**100"}, {"n='2**100'", "overflow"});
    expect_bad_input({"space", "vector_add", "--problem", "n=2**"}, {"n='2**'", "SyntaxError"});
    expect_bad_input({"space", "vector_add", "--problem", "n=1.5"}, {"n='1.5'", "not an integer"});
    const auto r = expect_bad_input({"space", "vector_add", "--problem", "n=1/0"}, {"n"});
    CHECK_THAT(r.err, !Contains("is not an integer"));  // it is not a type problem
  }
  SECTION("an output in a missing directory (--db made it silently; export named its temporary file)") {
    const std::string missing = dir / "no_such_dir";
    expect_bad_input({"tune", "--simulate", rec, "--budget", "2", "--db", missing + "/x.db"},
                     {"--db", "no_such_dir", "does not exist"});
    expect_bad_input({"tune", "vector_add", "--db", missing + "/x.db"}, {"--db", "no_such_dir"});
    expect_bad_input({"import", rec, "--db", missing + "/x.db"}, {"--db", "no_such_dir"});
    expect_bad_input({"merge", db, "-o", missing + "/x.db"}, {"no_such_dir"});
    expect_bad_input({"tune", "--simulate", rec, "--trace", missing + "/t.json"}, {"--trace", "no_such_dir"});
    expect_bad_input({"export", "--db", db, "-o", missing + "/out.json"}, {"no_such_dir", "does not exist"});
    const auto r = expect_bad_input({"export", "--db", db, "-o", dir.path().string()}, {"is a directory"});
    CHECK_THAT(r.err, !Contains("cutune-tmp"));
    CHECK_FALSE(fs::exists(missing));
  }
  SECTION("--traces that is not JSON: where, not the library's text") {
    const std::string file = dir.write("notjson.json", "not json {").string();
    const auto r = expect_bad_input({"score", "--spaces", rec, "--traces", file}, {file, "malformed JSON", "line 1"});
    CHECK_THAT(r.err, !Contains("json.exception"));
    fs::remove(file);
  }
  CHECK_FALSE(fs::exists(db));
  CHECK(dir.listing() == before);
}

TEST_CASE("cli: query after tune --simulate --db shows the winner readably", "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "sim.db";
  simulate_into(db);
  const CliResult q = run_cli({"query", "--db", db});
  INFO(describe({"query", "--db", db}, q));
  REQUIRE(q.status == 0);
  // The device of a recording has no compute capability: its name, not "NAME/sm_00"; no
  // default was measured: "-", not "0.0000" and "0.000x".
  CHECK_THAT(q.out, Contains("NVIDIA A100-PCIE-40GB "));
  CHECK_THAT(q.out, !Contains("sm_00"));
  CHECK_THAT(q.out, !Contains("0.000x"));
  CHECK_THAT(q.out, !Contains("0.0000 "));
  // Columns stay in line with a kernel name longer than the old fixed width (16).
  std::istringstream lines(q.out);
  std::string head, row;
  std::getline(lines, head);
  std::getline(lines, row);
  REQUIRE(row.rfind("convolution_kernel", 0) == 0);
  for (const char* column : {"problem", "gpu", "verdict", "configuration"}) {
    INFO(column);
    const auto at = head.find(column);
    REQUIRE(at != std::string::npos);
    CHECK(row[at - 1] == ' ');
    CHECK(row[at] != ' ');
    CHECK(row[at - 2] == ' ');  // at least two spaces between columns
  }
}

TEST_CASE("cli: query says what is stored when no winner matches", "[cli][material]") {
  CliTempDir dir;
  const std::string db = dir / "sim.db";
  simulate_into(db);
  SECTION("a kernel name that is not the stored one (the recording's file name)") {
    const CliResult q = run_cli({"query", "--db", db, "--kernel", "convolution_A100"});
    INFO(q.out);
    REQUIRE(q.status == 0);
    CHECK_THAT(q.out, Contains("no winner stored"));
    CHECK_THAT(q.out, Contains("--kernel convolution_kernel --problem recorded:convolution_A100"));
    CHECK_THAT(q.out, Contains("5 measurements, a winner for time"));
  }
  SECTION("an objective nobody tuned for") {
    const CliResult q = run_cli({"query", "--db", db, "--objective", "energy"});
    REQUIRE(q.status == 0);
    CHECK_THAT(q.out, Contains("a winner for time"));
    CHECK_THAT(q.out, Contains("--objective"));
  }
  SECTION("measurements without a winner (an interrupted run)") {
    {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
      CHECK(sqlite3_exec(raw, "DELETE FROM winners", nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    const CliResult q = run_cli({"query", "--db", db});
    INFO(q.out);
    REQUIRE(q.status == 0);
    CHECK_THAT(q.out, Contains("5 measurements, no winner"));
    CHECK_THAT(q.out, Contains("--resume"));
  }
}

TEST_CASE("cli: query and export only read: no -wal or -shm left, and a read-only folder is fine", "[cli][material]") {
  CliTempDir dir;
  const fs::path folder = dir.path() / "readonly";
  fs::create_directories(folder);
  const std::string db = (folder / "sim.db").string();
  simulate_into(db);
  REQUIRE_FALSE(fs::exists(db + "-wal"));  // the writer's last close removed it
  const std::string before = slurp(db);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // As root the folder's mode stops no write: the reads are then checked for side files only.
  const bool enforced = !std::ofstream(folder / "probe");
  if (!enforced) {
    fs::remove(folder / "probe");
    WARN("running as root: a read-only folder does not stop writes here; checking that nothing is written");
  }
  const auto listing = dir.listing();
  const CliResult q = run_cli({"query", "--db", db});
  INFO(describe({"query", "--db", db}, q));
  CHECK(q.status == 0);
  CHECK_THAT(q.out, Contains("convolution_kernel"));
  const CliResult j = run_cli({"query", "--db", db, "--json"});
  CHECK(j.status == 0);
  const std::string out = dir / "export.json";
  const CliResult e = run_cli({"export", "--db", db, "-o", out});
  INFO(describe({"export", "--db", db, "-o", out}, e));
  CHECK(e.status == 0);
  CHECK_FALSE(fs::exists(db + "-wal"));
  CHECK_FALSE(fs::exists(db + "-shm"));
  CHECK(slurp(db) == before);
  fs::remove(out);
  CHECK(dir.listing() == listing);
  fs::permissions(folder, fs::perms::owner_all);
}

TEST_CASE("cli: --help shows every default and what --time-budget counts", "[cli]") {
  // Options whose value is a file to write or read have no default: not giving them is the default.
  const std::set<std::string> files{"--t1", "--json", "--report", "--cache", "--trace", "-o,--output",
                                    "--simulate", "--spaces", "--traces", "--config", "--db"};
  for (const char* sub : {"space", "compile", "tune", "measure", "query", "import", "export", "merge", "score"}) {
    for (const auto& line : help_options(sub)) {
      const std::string name = line.substr(2, line.find(' ', 2) - 2);
      const bool takes_value = line.find(" TEXT") != std::string::npos || line.find(" INT") != std::string::npos ||
                               line.find(" UINT") != std::string::npos || line.find(" FLOAT") != std::string::npos;
      if (!takes_value || files.count(name)) continue;
      INFO(sub << ": " << line);
      const std::string type_part = line.substr(0, line.find("  ", 2 + name.size() + 1));
      const bool shown = type_part.find('=') != std::string::npos || line.find("default") != std::string::npos ||
                         line.find("(0: ") != std::string::npos;
      CHECK(shown);
    }
  }
  const CliResult tune = run_cli({"tune", "--help"});
  CHECK_THAT(tune.out, Contains("--seed UINT:UINT=1"));
  CHECK_THAT(tune.out, Contains("--samples INT:INT in [1 - 100000]=10"));
  CHECK_THAT(tune.out, Contains("wall-clock seconds since the tuning began on a GPU"));
  CHECK_THAT(tune.out, Contains("with --simulate, the recorded costs"));
}

TEST_CASE("cli: score says what its numbers mean", "[cli][material]") {
  const std::vector<std::string> args{"score", "--spaces", recorded().string(), "--strategies", "random,brute_force",
                                      "--repeats", "3"};
  const CliResult r = run_cli(args);
  INFO(describe(args, r));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("brute_force"));
  CHECK_THAT(r.out, Contains("0 = as good as the calculated random search"));
  CHECK_THAT(r.out, Contains("below 0 = worse than random search"));
}

TEST_CASE("cli: compile --all --quiet shows progress", "[cli]") {
  CliTempDir t1;
  t1.write("clitiny.cu", "extern \"C\" __global__ void clitiny(float* x) {}\n");
  const std::string file = t1.write("clitiny.json", kCliT1).string();
  const std::vector<std::string> args{"compile", file, "--all", "--quiet", "--no-cache", "--mode", "thread"};
  const CliResult r = run_cli(args);
  INFO(describe(args, r));
  REQUIRE(r.status == 0);
  // Not a terminal here: a line per tenth (each of the 3), then the summary.
  CHECK_THAT(r.out, Contains("compiled [1/3] 0 failed"));
  CHECK_THAT(r.out, Contains("compiled [2/3] 0 failed"));
  CHECK_THAT(r.out, Contains("3 ok, 0 failed"));
  CHECK_THAT(r.out, !Contains("ok 32"));  // quiet: no line per configuration
}

TEST_CASE("cli: without a driver the reason names libcuda.so.1 once", "[cli]") {
  if (gpu_driver_present()) {
    WARN("skipped: this machine has /dev/nvidia0 or a loadable libcuda.so.1");
    return;
  }
  const CliResult r = run_cli({"devices"});
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("libcuda.so.1"));
  CHECK_THAT(r.out, !Contains("libcuda.so.1: libcuda.so.1"));
}
