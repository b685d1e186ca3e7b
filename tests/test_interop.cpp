// Kernel Tuner interoperability through the command line: cutune import and
// export, the T1 writer, and tune --cache ([gpu]). The checks against the real Kernel Tuner
// are in tests/kt/ (Python, CTest "kt-interop:*").
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "result_helpers.hpp"
#include "cli_runner.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/db/store.hpp"
#include "cutune/formats/t4.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

using namespace cutune;
using namespace cutune::testing::cli;
using cutune::testing::material;
using json = nlohmann::ordered_json;

namespace {

fs::path strategies_cache() { return material("formats/kernel_tuner/examples/strategies/test_cache_file.json"); }
fs::path recorded(const std::string& name) { return material("data/spaces/" + name); }

CliResult ok(const std::vector<std::string>& args) {
  CliResult r = run_cli(args);
  INFO(describe(args, r));
  REQUIRE(r.status == 0);
  return r;
}

/// A run of `kernel` on the problem n=1 on an sm_90 GPU `name` (uuid empty: unknown), for the
/// tests that write a DB through the store directly.
db::RunSpec run_on(const std::string& name, const std::string& uuid, const std::string& kernel) {
  db::RunSpec spec;
  spec.device.name = name;
  spec.device.cc_major = 9;
  spec.device.uuid = uuid;
  spec.kernel = kernel;
  spec.source_hash = "x";
  spec.problem_key = "n=1";
  spec.problem_json = R"({"ProblemSize":[1]})";
  return spec;
}

/// The configuration {"tile": tile} measured at `median_ms`, one sample.
db::Measurement tile_measurement(int tile, double median_ms) {
  db::Measurement m;
  m.config = cutune::testing::config_of(std::to_string(tile), "{\"tile\":" + std::to_string(tile) + "}");
  m.median_ms = median_ms;
  m.samples_ms = {median_ms};
  return m;
}

std::size_t count_rows(const std::string& db, const std::string& table) {
  // A second connection, read-only: what a user would see.
  const db::Store s = db::Store::open(db, false);
  const auto targets = s.measurement_targets({});
  std::size_t n = 0;
  if (table == "measurements")
    for (const auto& t : targets) n += t.count;
  return n;
}

/// A small cache for vector_add (n = 1000), written with cutune's own writer; `problem_field`, when
/// given, is its db::kt::kProblemField.
void write_vector_add_cache(const fs::path& path, const std::vector<std::int64_t>& problem_size,
                            const std::string& block_value = "128", const json& problem_field = nullptr) {
  const KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  DeviceIdentity d;
  d.name = "NVIDIA Test GPU";
  db::kt::KtCacheWriter w;
  auto header = db::kt::cache_header(p.kernel_name(), p.space(), problem_size, d);
  if (!problem_field.is_null()) header.extra[db::kt::kProblemField] = problem_field;
  w.open(path, header);
  for (int i = 0; i < 3; ++i) {
    db::kt::KtEntry e;
    e.params = json{{"block_size_x", json::parse(block_value)}, {"elements_per_thread", 1 << i}, {"vector_width", 1}};
    e.times_ms = {1.0 + i, 1.5 + i, 1.25 + i};
    e.time_ms = db::kt::kt_mean(e.times_ms);
    if (i == 2) {
      e.status = Status::Compile;
      e.times_ms.clear();
    }
    w.append(e);
  }
  w.close();
}

}  // namespace

TEST_CASE("import: a Kernel Tuner cache, failures included, once however often", "[interop][material]") {
  CliTempDir dir;
  const std::string db = dir / "kt.db";
  const auto r = ok({"import", strategies_cache().string(), "--db", db, "--problem", "n=1000"});
  CHECK_THAT(r.out, Contains("15 configurations, 15 stored now"));
  {
    const db::Store s = db::Store::open(db, false);
    const auto targets = s.measurement_targets({});
    REQUIRE(targets.size() == 1);
    CHECK(targets[0].kernel == "vector_add");
    CHECK(targets[0].gpu_model.rfind("NVIDIA RTX A4000/", 0) == 0);
    CHECK(targets[0].count == 15);
    const auto ms = s.measurements(targets[0].kernel_id, targets[0].problem_id, targets[0].device_id);
    const auto found = std::find_if(ms.begin(), ms.end(), [](const auto& m) { return m.config.key() == "128,alg_2,15,True,2.45"; });
    REQUIRE(found != ms.end());
    CHECK(found->samples_ms.size() > 1);
    CHECK(found->median_ms > 0);
    // Provenance: a run with strategy "import" naming the file.
    const auto run = s.run(1);
    REQUIRE(run);
    CHECK(run->strategy == "import");
    CHECK_THAT(run->command, Contains("test_cache_file.json"));
    CHECK_THAT(run->command, Contains("Kernel Tuner cache"));
    CHECK(!run->finished_at.empty());
    CHECK(s.winners({"vector_add", "", "", "time"}).size() == 1);
  }
  const auto again = ok({"import", strategies_cache().string(), "--db", db, "--problem", "n=1000"});
  CHECK_THAT(again.out, Contains("0 stored now (0 failed), 15 already stored"));
  const db::Store s = db::Store::open(db, false);
  CHECK(!s.run(2));  // the second import kept no run either
  CHECK(count_rows(db, "measurements") == 15);
}

TEST_CASE("import: failures keep their status", "[interop]") {
  CliTempDir dir;
  const std::string db = dir / "v.db";
  write_vector_add_cache(dir / "va.json", {1000});
  ok({"import", dir / "va.json", "--db", db, "--kernel", "vector_add", "--problem", "n=1000"});
  const db::Store s = db::Store::open(db, false);
  const auto t = s.measurement_targets({"vector_add", "", "n=1000", ""});
  REQUIRE(t.size() == 1);
  const auto ms = s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id);
  REQUIRE(ms.size() == 3);
  CHECK(ms[0].status == Status::Ok);
  CHECK(ms[0].median_ms == Approx(1.25));
  CHECK(ms[2].status == Status::Compile);
  CHECK(ms[2].error == "CompilationFailedConfig");
}

TEST_CASE("import: bad input exits 2 with one line and leaves the DB as it was", "[interop][material]") {
  CliTempDir dir;
  const std::string db = dir / "bad.db";
  SECTION("no DB is created for a bad file") {
    expect_bad_input({"import", dir.write("x.json", "not json").string(), "--db", db}, {"x.json"});
    expect_bad_input({"import", dir.write("y.json", R"({"a": 1})").string(), "--db", db}, {"y.json", "cache"});
    expect_bad_input({"import", dir.write("z.json", R"({"device_name": "d", "kernel_name": "k", "cache": {}})").string(),
                      "--db", db},
                     {"z.json", "tune_params_keys"});
    expect_bad_input({"import", (dir / "absent.json"), "--db", db}, {"absent.json"});
    CHECK(!fs::exists(db));
  }
  SECTION("a cache that disagrees with the named kernel's space") {
    ok({"import", strategies_cache().string(), "--db", db, "--problem", "n=1000"});
    const std::string before = slurp(db);
    expect_bad_input({"import", strategies_cache().string(), "--db", db, "--kernel", "vector_add"},
                     {"test_cache_file.json", "tune_params_keys"});
    write_vector_add_cache(dir / "va.json", {1000});
    expect_bad_input({"import", dir / "va.json", "--db", db, "--kernel", "vector_add", "--problem", "n=2000"},
                     {"va.json", "problem_size", "2000"});
    write_vector_add_cache(dir / "va96.json", {1000}, "96");
    expect_bad_input({"import", dir / "va96.json", "--db", db, "--kernel", "vector_add", "--problem", "n=1000"},
                     {"va96.json", "96", "block_size_x"});
    CHECK(slurp(db) == before);
    CHECK(count_rows(db, "measurements") == 15);
  }
  SECTION("a T4 file that names no device or kernel") {
    const auto t4 = dir.write("r.json", R"({"schema_version": "1.0.0", "results": [{"configuration": {"a": 1},
      "times": {"runtimes": [1.0]}, "invalidity": "correct", "correctness": 1}]})");
    // Everything the file does not say, asked for in one line (one flag per run took three).
    expect_bad_input({"import", t4.string(), "--db", db},
                     {"r.json", "names no device, kernel or problem size", "--device-name", "--kernel-name", "--problem"});
    const auto r2 = expect_bad_input({"import", t4.string(), "--db", db, "--device-name", "GPU X"},
                                     {"r.json", "names no kernel or problem size", "--kernel-name", "--problem"});
    CHECK_THAT(r2.err, !Contains("--device-name"));
    expect_bad_input({"import", t4.string(), "--db", db, "--device-name", "GPU X", "--kernel-name", "k"},
                     {"r.json", "names no problem size", "--problem"});
    CHECK(!fs::exists(db));
    // The problem is stored under its canonical key, as tune and query write it.
    const auto r = ok({"import", t4.string(), "--db", db, "--device-name", "GPU X", "--kernel-name", "k", "--problem",
                       "n=2**24"});
    CHECK_THAT(r.out, Contains("1 stored now"));
    CHECK_THAT(r.out, Contains("problem n=16777216"));
    CHECK_THAT(r.out, !Contains("unknown"));
    CHECK_THAT(ok({"query", "--db", db, "--problem", "n=16777216"}).out, Contains("GPU X"));
  }
  SECTION("a cache without problem_size (older Kernel Tuner) asks for the problem") {
    expect_bad_input({"import", strategies_cache().string(), "--db", db},
                     {"test_cache_file.json", "names no problem size", "--problem"});
    CHECK(!fs::exists(db));
    const auto r = ok({"import", strategies_cache().string(), "--db", db, "--problem", "ProblemSize=4096x4096"});
    CHECK_THAT(r.out, Contains("problem ProblemSize=4096x4096"));
  }
  SECTION("a --problem that is not name=integer items, without --kernel") {
    // Each was stored as a problem key nobody could name again.
    const std::string cache = strategies_cache().string();
    expect_bad_input({"import", cache, "--db", db, "--problem", "n=1/0"}, {"n='1/0'", "division by zero"});
    expect_bad_input({"import", cache, "--db", db, "--problem", "n=2**"}, {"n='2**'", "SyntaxError"});
    expect_bad_input({"import", cache, "--db", db, "--problem", "n=2**100"}, {"n='2**100'", "overflow"});
    expect_bad_input({"import", cache, "--db", db, "--problem", "n=100,n=200"}, {"n", "given twice"});
    expect_bad_input({"import", cache, "--db", db, "--problem", "recorded"}, {"recorded", "name=value"});
    expect_bad_input({"import", cache, "--db", db, "--problem", "ProblemSize=40x0"}, {"ProblemSize=40x0"});
    CHECK(!fs::exists(db));
  }
}

TEST_CASE("export: a recorded space round-trips through the DB as a cache and as T4", "[interop][material]") {
  CliTempDir dir;
  const std::string db = dir / "conv.db";
  const fs::path src = recorded("convolution_A100.json.gz");
  const db::kt::KtCache original = db::kt::read_cache(src);
  ok({"import", src.string(), "--db", db});

  const std::string out = dir / "conv_cache.json";
  ok({"export", "--format", "cache", "--db", db, "-o", out});
  const db::kt::KtCache back = db::kt::read_cache(out);
  CHECK(back.file_state == db::kt::KtFileState::Closed);
  CHECK(back.device_name == original.device_name);
  CHECK(back.kernel_name == original.kernel_name);
  CHECK(back.tune_params_keys == original.tune_params_keys);
  CHECK(back.tune_params == original.tune_params);
  CHECK(back.problem_size == original.problem_size);
  REQUIRE(back.entries.size() == original.entries.size());
  for (std::size_t i = 0; i < back.entries.size(); i += 97) {
    const auto& a = original.entries[i];
    const auto& b = back.entries[i];
    INFO(a.key);
    CHECK(b.key == a.key);
    CHECK(b.status == a.status);
    if (a.status != Status::Ok) continue;
    CHECK(b.times_ms == a.times_ms);
    CHECK(b.time_ms == db::kt::kt_mean(a.times_ms));  // Kernel Tuner's "time": the mean
    std::vector<double> sorted = a.times_ms;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    CHECK(b.extra.at(db::kt::kMedianField).get<double>() == median);
    CHECK(b.extra.at(db::kt::kSampleCountField).get<std::size_t>() == n);
    CHECK(b.compile_time_ms == a.compile_time_ms);
  }
  // The exported file imports back onto the same device row: nothing new.
  CHECK_THAT(ok({"import", out, "--db", db}).out, Contains("0 stored now"));

  const std::string t4 = dir / "conv_t4.json";
  ok({"export", "--format", "t4", "--t4-version", "1.1.0", "--db", db, "-o", t4});
  const auto results = db::kt::read_t4(t4);
  CHECK(results.schema_version == "1.1.0");
  CHECK(results.entries.size() == original.entries.size());
  CHECK(results.metadata.device == original.device_name);
}

// The matmul template's problem_size is [n, m]: only the variables tell k=1024 from k=4096.
TEST_CASE("a cache names its problem's variables: import keys the problem by them, export writes them back",
          "[interop]") {
  CliTempDir dir;
  const std::string db = dir / "va.db";
  write_vector_add_cache(dir / "va.json", {1000}, "128", json{{"n", 1000}});
  CHECK(db::kt::read_results_file(dir / "va.json").problem_variables == std::map<std::string, std::int64_t>{{"n", 1000}});
  ok({"import", dir / "va.json", "--db", db});
  {
    const db::Store store = db::Store::open(db, false);
    const auto targets = store.measurement_targets({});
    REQUIRE(targets.size() == 1);
    CHECK(targets[0].problem_key == "n=1000");  // as a tuning of vector_add at n=1000 keys it
    CHECK(db::kt::stored_problem_variables(json::parse(targets[0].problem_json)) == std::map<std::string, std::int64_t>{{"n", 1000}});
  }
  const std::string out = dir / "back.json";
  ok({"export", "--format", "cache", "--db", db, "-o", out});
  CHECK(db::kt::read_cache(out).extra.at(db::kt::kProblemField) == json{{"n", 1000}});
  // With --kernel and no --problem, the file's problem is the instance (not the kernel's default).
  ok({"import", dir / "va.json", "--db", dir / "checked.db", "--kernel", "vector_add"});
  CHECK(db::Store::open(dir / "checked.db", false).measurement_targets({}).at(0).problem_key == "n=1000");

  const std::string before = slurp(db);
  expect_bad_input({"import", dir / "va.json", "--db", db, "--problem", "n=2000"},
                   {"va.json", "cutune_problem", "n=1000", "n=2000"});
  write_vector_add_cache(dir / "bad.json", {1000}, "128", json{{"n", "a thousand"}});
  expect_bad_input({"import", dir / "bad.json", "--db", db}, {"bad.json", "cutune_problem", "\"n\""});
  write_vector_add_cache(dir / "list.json", {1000}, "128", json::array({1000}));
  expect_bad_input({"import", dir / "list.json", "--db", db}, {"list.json", "cutune_problem"});
  CHECK(slurp(db) == before);
  // Resuming the file for another problem of the same extent is refused, naming the field.
  CHECK_THROWS_WITH(write_vector_add_cache(dir / "va.json", {1000}, "128", json{{"n", 1001}}),
                    Contains("va.json") && Contains("cutune_problem"));
  // A file without the field is known by its size only: its import stores no variables, and the
  // file's tune_params kept beside the size are none.
  write_vector_add_cache(dir / "plain.json", {1000});
  ok({"import", dir / "plain.json", "--db", dir / "plain.db"});
  const auto plain = db::Store::open(dir / "plain.db", false).measurement_targets({});
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].problem_key == "ProblemSize=1000");
  CHECK(db::kt::stored_problem_variables(json::parse(plain[0].problem_json)).empty());
}

TEST_CASE("export: bad input exits 2", "[interop][material]") {
  CliTempDir dir;
  const std::string db = dir / "two.db";
  expect_bad_input({"export", "--db", db, "-o", dir / "o.json"}, {"two.db"});
  ok({"import", strategies_cache().string(), "--db", db, "--problem", "n=1000"});
  ok({"import", recorded("dedispersion_A100.json.gz").string(), "--db", db});
  expect_bad_input({"export", "--db", db, "-o", dir / "o.json"}, {"2 kernel/problem/GPU targets", "--kernel"});
  expect_bad_input({"export", "--db", db, "--kernel", "nosuch", "-o", dir / "o.json"}, {"nosuch"});
  expect_bad_input({"export", "--db", db, "--format", "wisdom2", "-o", dir / "o.json"}, {"wisdom2"});
  CHECK(!fs::exists(dir / "o.json"));
  ok({"export", "--db", db, "--kernel", "vector_add", "--format", "t4", "-o", dir / "o.json"});
  CHECK(db::kt::read_t4(dir / "o.json").entries.size() == 15);
}

TEST_CASE("export: one file holds every physical GPU of the model, the first GPU's value of a configuration "
          "measured on two",
          "[interop]") {
  // Shards of one space on two GPUs of one model (or one space recorded over calls on two
  // machines) are two targets in the store, one per uuid, and one GPU model in a file.
  CliTempDir dir;
  const std::string db = dir / "two_gpus.db";
  auto record = [&](const std::string& gpu, const std::string& uuid, std::initializer_list<int> tiles, double scale) {
    db::Store store = db::Store::open(db, true);
    db::Run run = store.begin_run(run_on(gpu, uuid, "tile_kernel"));
    for (int tile : tiles) REQUIRE(run.add(tile_measurement(tile, scale * tile)));
    run.end();
    return store.measurement_targets({}).size();
  };
  record("NVIDIA H200", "GPU-first", {1, 2}, 1.0);
  REQUIRE(record("NVIDIA H200", "GPU-second", {2, 3}, 10.0) == 2);
  const std::string out = dir / "cache.json";
  CHECK_THAT(ok({"export", "--format", "cache", "--db", db, "-o", out}).out,
             Contains("3 configurations") && Contains("from 2 GPUs of the model"));
  const db::kt::KtCache back = db::kt::read_cache(out);
  CHECK(back.device_name == "NVIDIA H200");
  REQUIRE(back.entries.size() == 3);
  std::map<std::string, double> time_of;
  for (const auto& e : back.entries) time_of[e.key] = e.time_ms;
  CHECK(time_of.at("1") == 1.0);
  CHECK(time_of.at("2") == 2.0);  // the first GPU's, not the second's 20
  CHECK(time_of.at("3") == 30.0);
  // Another GPU model is another file: still refused, naming both.
  REQUIRE(record("NVIDIA H100 80GB HBM3", "GPU-h100", {1}, 5.0) == 3);
  expect_bad_input({"export", "--db", db, "-o", dir / "o.json"},
                   {"2 kernel/problem/GPU targets", "from 2 GPUs of the model", "H100", "--gpu"});
  CHECK(!fs::exists(dir / "o.json"));
  CHECK_THAT(ok({"export", "--db", db, "--gpu", "H100", "-o", dir / "h100.json"}).out, Contains("1 configurations"));
}

TEST_CASE("export --space: the cache lists the kernel file's values in its declared order", "[interop][material]") {
  // Measurements whose header lists each parameter's default first, as brute force stores a BAT
  // file's (the default is measured first): BLOCK_SIZE 256,64,128,512 for the declared 64..512.
  CliTempDir dir;
  const fs::path caff = material("data/real_kernels/bat/nbody/nbody-CAFF.json");
  const KernelProblem nbody = KernelProblem::load(caff);
  DeviceIdentity d;
  d.name = "NVIDIA Test GPU";
  db::kt::KtCacheHeader h = db::kt::cache_header(nbody.name(), nbody.space(), {131072}, d);
  const json declared = h.tune_params;
  REQUIRE(declared["BLOCK_SIZE"] == json::parse("[64, 128, 256, 512]"));
  h.tune_params["BLOCK_SIZE"] = json::parse("[256, 64, 128, 512]");
  const std::string scrambled = dir / "nbody_scrambled.json";
  db::kt::KtCacheWriter w;
  w.open(scrambled, h);
  for (int block : {256, 64}) {
    db::kt::KtEntry e;
    for (const auto& name : h.tune_params_keys) e.params[name] = h.tune_params[name][0];
    e.params["BLOCK_SIZE"] = block;
    e.times_ms = {1.0, 1.1, 1.2};
    e.time_ms = db::kt::kt_mean(e.times_ms);
    w.append(e);
  }
  w.close();
  const std::string db = dir / "nbody.db";
  ok({"import", scrambled, "--db", db});

  const std::string out = dir / "nbody_cache.json";
  ok({"export", "--db", db, "--space", caff.string(), "-o", out});
  const db::kt::KtCache back = db::kt::read_cache(out);
  CHECK(back.kernel_name == "nbody");
  CHECK(db::kt::kernel_function(back) == "nbody_kernel");  // the CUDA function, as Kernel Tuner names it
  CHECK(back.tune_params == declared);
  CHECK(back.entries.size() == 2);

  // Kernel Tuner's cache of the same kernel names the function: a prior for the export, and the
  // export for it.
  db::kt::KtCacheHeader kt = h;
  kt.kernel_name = "nbody_kernel";
  kt.device_name = "NVIDIA Other GPU";
  kt.extra.erase(db::kt::kDeviceField);
  const std::string kt_file = dir / "nbody_kernel_other_gpu.json";
  db::kt::KtCacheWriter kw;
  kw.open(kt_file, kt);
  for (const auto& e : back.entries) kw.append(e);
  kw.close();
  const auto with_prior = ok({"tune", "--simulate", out, "--prior-from", kt_file, "--budget", "2"});
  CHECK_THAT(with_prior.out, Contains("prior from nbody_kernel on NVIDIA Other GPU"));
  const auto other_way = ok({"tune", "--simulate", kt_file, "--prior-from", out, "--budget", "2"});
  CHECK_THAT(other_way.out, Contains("prior from nbody (function nbody_kernel) on NVIDIA Test GPU"));
  // Imported into a DB, Kernel Tuner's cache is stored under the function's name, and found there.
  const std::string kt_db = dir / "kt.db";
  ok({"import", kt_file, "--db", kt_db});
  const auto from_db = ok({"tune", "--simulate", out, "--db", kt_db, "--prior", "on", "--budget", "2"});
  CHECK_THAT(from_db.out, Contains("prior from nbody_kernel on NVIDIA Other GPU"));

  // A file of another kernel is refused by name, and nothing is written.
  const std::string wrong = dir / "wrong.json";
  expect_bad_input({"export", "--db", db, "--space", material("data/real_kernels/bat/GEMM/GEMM-CAFF.json").string(),
                    "-o", wrong},
                   {"--space", "GEMM", "nbody"});
  CHECK(!fs::exists(wrong));
}

TEST_CASE("entries and measurements map both ways", "[interop]") {
  db::kt::KtEntry e;
  e.params = json{{"a", 1}};
  e.times_ms = {3.0, 1.0, 2.0, 10.0};
  e.time_ms = 4.0;
  e.compile_time_ms = 12.5;
  e.timestamp = "2023-12-22 09:54:05.502007+00:00";
  e.extra["GFLOP/s"] = 7.5;
  const db::Measurement m =
      db::kt::measurement_of_entry(e, cutune::testing::config_of("1", R"({"a":1})"), "2026-01-01T00:00:00.000Z");
  CHECK(m.median_ms == 2.5);
  CHECK(m.compile_ms == 12.5);
  CHECK(m.started_at == "2023-12-22T09:54:05.502Z");
  REQUIRE(m.imported());
  CHECK(m.imported()->mean_ms == 4.0);
  CHECK(m.imported()->file_fields["GFLOP/s"] == 7.5);

  db::Measurement tuned = m;
  ResultStats tuned_stats;
  tuned_stats.summary.mean = 4.0;
  tuned_stats.summary.ci_low = 1.9;
  tuned_stats.summary.ci_high = 3.1;
  tuned.origin = MeasuredOrigin{tuned_stats, std::nullopt, std::nullopt, {}};
  const db::kt::KtEntry out = db::kt::entry_of_measurement(tuned);
  CHECK(out.time_ms == db::kt::kt_mean(e.times_ms));
  CHECK(out.times_ms == e.times_ms);
  CHECK(out.extra.at("time_median") == 2.5);
  CHECK(out.extra.at("time_ci_low") == 1.9);
  CHECK(out.extra.at("time_ci_high") == 3.1);
  CHECK(out.extra.at("time_samples") == 4);
  CHECK(out.timestamp == "2023-12-22 09:54:05.502000+00:00");  // from finished_at
  // cutune's own measurement: its timed launches are its benchmark time (the recorded cost);
  // an imported one keeps what its file said, here nothing.
  REQUIRE(out.benchmark_time_ms);
  CHECK(*out.benchmark_time_ms == 16.0);
  CHECK(!db::kt::entry_of_measurement(m).benchmark_time_ms);
  CHECK(db::kt::entry_of_measurement(m).timestamp == e.timestamp);  // the file's own, kept with the result
  CHECK(db::kt::entry_of_measurement(m).extra.at("GFLOP/s") == 7.5);
  // What cutune writes, it reads back with the same median.
  CHECK(db::kt::measurement_of_entry(out, cutune::testing::config_of("1", R"({"a":1})"), "").median_ms == 2.5);

  db::Measurement failed;
  failed.config = cutune::testing::config_of("", R"({"a":2})");
  failed.status = Status::Correctness;
  const auto f = db::kt::entry_of_measurement(failed);
  CHECK(f.status == Status::Correctness);
  CHECK(f.times_ms.empty());
  CHECK(std::isnan(f.time_ms));
  CHECK(!f.benchmark_time_ms);
}

TEST_CASE("observers' values are fields of the cache entry, and an import keeps them for the next export",
          "[interop]") {
  db::Measurement tuned;
  tuned.config = cutune::testing::config_of("1", R"({"a":1})");
  tuned.median_ms = 2.0;
  tuned.samples_ms = {2.0, 2.0};
  tuned.finished_at = "2026-01-01T00:00:00.000Z";
  tuned.metrics = {{"GFLOP/s", 3.0}};
  MeasuredOrigin origin;
  origin.stats = ResultStats{};
  // A parameter's name and one of Kernel Tuner's own fields would change what the file says:
  // left out of the entry (the package refuses them before they get here).
  origin.observed = {{"error_rmse", 0.125}, {"num_regs", 40.0}, {"a", 9.0}, {"time", 9.0},
                     {"nan_error", std::numeric_limits<double>::quiet_NaN()}};
  tuned.origin = origin;
  const db::kt::KtEntry out = db::kt::entry_of_measurement(tuned);
  CHECK(out.extra.at("error_rmse") == 0.125);
  CHECK(out.extra.at("num_regs") == 40.0);
  CHECK(std::isnan(out.extra.at("nan_error").get<double>()));
  CHECK(out.params.at("a") == 1);
  CHECK_FALSE(out.extra.contains("time"));
  CHECK_FALSE(out.extra.contains("a"));
  // The line Kernel Tuner reads: observers' fields before the metrics, as its rows have them.
  const std::string line = db::kt::format_cache_line(out);
  CHECK_THAT(line, Contains(R"("num_regs": 40.0, "nan_error": NaN, "GFLOP/s": 3.0)"));

  // Imported back: kept as the file's fields, exported again as they were.
  const db::kt::KtCache read = db::kt::parse_cache(
      R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": [1]},
          "cache": {)" + line.substr(1, line.size() - 2) + "}}", "observed.json");
  REQUIRE(read.entries.size() == 1);
  const db::Measurement imported = db::kt::measurement_of_entry(read.entries[0], tuned.config, "");
  REQUIRE(imported.imported());
  CHECK(imported.imported()->file_fields.at("error_rmse") == 0.125);
  const db::kt::KtEntry again = db::kt::entry_of_measurement(imported);
  CHECK(again.extra.at("error_rmse") == 0.125);
  CHECK(again.extra.at("num_regs") == 40.0);
  CHECK(std::isnan(again.extra.at("nan_error").get<double>()));
}

TEST_CASE("space --t1 writes a T1 file that loads back to the same space", "[interop]") {
  CliTempDir dir;
  for (const std::string kernel : {"vector_add", "reduction", "transpose", "matmul"}) {
    const std::string out = dir / (kernel + "_t1.json");
    ok({"space", kernel, "--problem", kernel == "matmul" ? "m=512,n=512,k=512" : "", "--t1", out, "--show", "0"});
    const json doc = json::parse(slurp(out));
    CHECK(!doc.contains("cutune"));
    CHECK(fs::path(doc["KernelSpecification"]["KernelFile"].get<std::string>()).is_absolute());
    const KernelProblem a = KernelProblem::load(testing::template_json(kernel));
    const KernelProblem b = KernelProblem::load(out);
    CHECK(a.space().count_valid() == b.space().count_valid());
  }
  expect_bad_input({"space", "vector_add", "--t1", dir / "no/such/dir/x.json"}, {"--t1"});
  // A T1 file whose KernelFile is not there: exit 2 naming the file and the field.
  const auto t1 = dir.write("nokernel.json", slurp(testing::template_json("vector_add")));
  expect_bad_input({"space", t1.string()}, {"nokernel.json", "KernelFile"});
}

TEST_CASE("tune --cache appends Kernel Tuner's cache lines and refuses a disagreeing one", "[interop][gpu]") {
  CliTempDir dir;
  const std::string db = dir / "t.db", cache = dir / "va_cache.json";
  ok({"tune", "vector_add", "--problem", "n=1048576", "--budget", "4", "--finalists", "0", "--db", db, "--cache",
      cache});
  const auto c = db::kt::read_cache(cache);
  CHECK(c.file_state == db::kt::KtFileState::Closed);
  CHECK(c.kernel_name == "vector_add");
  CHECK(c.entries.size() == 4);
  for (const auto& e : c.entries)
    if (e.status == Status::Ok) {
      CHECK(e.time_ms == db::kt::kt_mean(e.times_ms));
      CHECK(e.extra.contains("time_median"));
    }
  // Resumed with the same problem (to 6 in all): the stored configurations are written once.
  ok({"tune", "vector_add", "--problem", "n=1048576", "--budget", "6", "--resume", "--finalists", "0", "--db", db,
      "--cache", cache});
  CHECK(db::kt::read_cache(cache).entries.size() == 6);
  CHECK(db::kt::read_cache(cache).extra.at(db::kt::kProblemField) == json{{"n", 1048576}});
  const std::string before = slurp(cache);
  expect_bad_input({"tune", "vector_add", "--problem", "n=2048", "--budget", "2", "--db", db, "--cache", cache},
                   {"va_cache.json", "problem_size"});
  CHECK(slurp(cache) == before);
}

TEST_CASE("query and export carry the metrics and the objective with its direction", "[interop][objective]") {
  CliTempDir dir;
  const std::string db = dir / "m.db";
  {
    db::Store store = db::Store::open(db, true);
    db::Run run = store.begin_run(run_on("NVIDIA H200", "", "metric_kernel"));
    for (int tile : {1, 2}) {
      db::Measurement m = tile_measurement(tile, 1.0 * tile);
      m.metrics = {{"GFLOP/s", 100.0 * tile * tile}, {"per_tile", 0.5 * tile}};
      REQUIRE(run.add(m));
    }
    db::WinnerChoice w;
    w.config = cutune::testing::config_of("2", R"({"tile":2})");
    w.median_ms = 2.0;
    w.default_ms = 1.0;
    w.objective = Objective::of_metric("GFLOP/s", true);
    w.objective_value = 400.0;
    run.set_winner(w);
    run.end();
  }
  const CliResult q = ok({"query", "--db", db, "--objective", "GFLOP/s", "--json"});
  const json winners = json::parse(q.out);
  REQUIRE(winners.size() == 1);
  CHECK(winners[0]["objective"] == "GFLOP/s");
  CHECK(winners[0]["objective_value"] == 400.0);
  CHECK(winners[0]["objective_higher_is_better"] == true);
  CHECK(winners[0]["config_key"] == "2");
  CHECK(ok({"query", "--db", db}).out.find("GFLOP/s 400 (max)") != std::string::npos);
  CHECK(json::parse(ok({"query", "--db", db, "--objective", "time", "--json"}).out).empty());

  // The cache names the winner's objective, and every line carries the metrics as Kernel
  // Tuner's process_metrics leaves them: fields of their own names.
  ok({"export", "--db", db, "--format", "cache", "-o", dir / "c.json"});
  const auto c = db::kt::read_cache(dir / "c.json");
  CHECK(c.objectives() == std::vector<std::string>{"GFLOP/s"});
  REQUIRE(c.entries.size() == 2);
  CHECK(c.entries[1].extra.at("GFLOP/s") == 400.0);
  CHECK(c.entries[0].extra.at("per_tile") == 0.5);
  // T4: the metrics are measurements (unit ""), the objectives list names the objective.
  ok({"export", "--db", db, "--format", "t4", "-o", dir / "t.json"});
  const json t4 = json::parse(slurp(dir / "t.json"));
  CHECK(t4["results"][1]["objectives"] == json::array({"GFLOP/s"}));
  bool found = false;
  for (const auto& m : t4["results"][1]["measurements"])
    if (m["name"] == "GFLOP/s") found = m["value"] == 400.0 && m["unit"] == "";
  CHECK(found);
  // Wisdom: the winner with its objective and direction.
  ok({"export", "--db", db, "--format", "wisdom", "--objective", "GFLOP/s", "-o", dir / "w.json"});
  const json w = json::parse(slurp(dir / "w.json"));
  CHECK(w["winners"][0]["objective"] == "GFLOP/s");
  CHECK(w["winners"][0]["provenance"]["objective_higher_is_better"] == true);
  expect_bad_input({"export", "--db", db, "--format", "cache", "--objective", "GFLOPs", "-o", dir / "x.json"},
                   {"--objective GFLOPs"});
}

TEST_CASE("tune with a metric objective ranks by the metric in its direction", "[interop][gpu][objective]") {
  CliTempDir dir;
  for (const bool higher : {true, false}) {
    const std::string db = dir / (higher ? "hi.db" : "lo.db");
    ok({"tune", "vector_add", "--problem", "n=1048576", "--budget", "6", "--finalists", "0", "--db", db,
        "--objective", "gbps", higher ? "--objective-higher-is-better" : "--objective-lower-is-better"});
    const db::Store s = db::Store::open(db, false);
    const auto t = s.measurement_targets({});
    REQUIRE(t.size() == 1);
    std::vector<double> values;
    for (const auto& m : s.measurements(t[0].kernel_id, t[0].problem_id, t[0].device_id))
      if (m.status == Status::Ok) {
        REQUIRE(m.metrics.size() == 1);
        CHECK(m.metrics[0].first == "gbps");
        values.push_back(m.metrics[0].second);
      }
    REQUIRE(values.size() >= 2);
    const auto w = s.winners({"", "", "", "gbps"});
    REQUIRE(w.size() == 1);
    CHECK(w[0].objective == Objective::of_metric("gbps", higher));
    CHECK(w[0].objective_value == (higher ? *std::max_element(values.begin(), values.end())
                                          : *std::min_element(values.begin(), values.end())));
  }
}
