// cutune::loader: the ladder over a DB filled through the store API, the wisdom
// round trip, tampered values rejected, compile-once under threads, the cache shared with
// the tuner; [gpu]: tuned reduction and matmul launched through the loader and checked.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <fmt/format.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "result_helpers.hpp"
#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/formats/wisdom.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;
using loader::Loader;
using loader::LoaderOptions;
using loader::Rung;

namespace {

DeviceIdentity gpu(const std::string& name, int major, int minor, const std::string& uuid = "") {
  DeviceIdentity d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  d.driver_version = 13000;
  d.nvrtc_version = 13000;
  d.uuid = uuid;
  return d;
}

/// `c` as a DB row gives it back: its key and values, without the space.
ResultConfig stored_config(const Space& space, const Config& c) {
  nlohmann::ordered_json j;
  for (const auto& [name, v] : space.assignments(c)) j[name] = v.to_int();
  return testing::config_of(space.key(c), j.dump());
}

/// A run of `p` on `d` (its winners are stored the way the tuner stores them).
db::RunSpec run_spec(const KernelProblem& p, const DeviceIdentity& d, const ProblemInstance& inst) {
  db::RunSpec spec;
  spec.device = d;
  spec.kernel = p.name();
  spec.source_hash = "hash-" + p.name();
  spec.problem_key = inst.key();
  spec.problem_json = inst.json();
  spec.tool_version = "test";
  spec.strategy = "brute_force";
  spec.seed = 1;
  spec.command = "test";
  return spec;
}

/// The n-th valid configuration of the space (distinct n, distinct configurations).
Config nth_valid(const Space& space, std::size_t n) {
  Config out;
  std::size_t i = 0;
  space.for_each_valid([&](const Config& c) {
    out = c;
    return i++ < n;
  });
  return out;
}

/// A DB with winners for several GPUs and sizes, stored the way the tuner stores them.
struct LadderDb {
  TempPath path{"cutune-loader.db"};
  KernelProblem reduction = KernelProblem::load(testing::template_json("reduction"));
  KernelProblem matmul = KernelProblem::load(testing::template_json("matmul"));
  std::map<std::string, std::string> key_of;  ///< "gpu|problem" -> config key stored

  void add(db::Store& s, const KernelProblem& p, const DeviceIdentity& d, const std::string& problem, std::size_t nth) {
    const ProblemInstance inst = p.instantiate(problem);
    db::Run run = s.begin_run(run_spec(p, d, inst));
    const Config c = nth_valid(p.space(), nth);
    db::WinnerChoice w;
    w.config = stored_config(p.space(), c);
    w.median_ms = 1.0 + static_cast<double>(nth);
    w.default_ms = 9.0;
    w.verdict = Verdict::Separated;
    run.set_winner(w);
    run.end();
    key_of[d.model_key() + "|" + inst.key()] = w.config.key();
  }

  LadderDb() {
    db::Store s = db::Store::open(path.path(), true);
    const auto h200 = gpu("NVIDIA H200", 9, 0, "GPU-h200"), a100 = gpu("NVIDIA A100", 8, 0, "GPU-a100");
    add(s, reduction, h200, "n=1048576", 1);    // 2^20
    add(s, reduction, h200, "n=16777216", 2);   // 2^24
    add(s, reduction, h200, "n=268435456", 3);  // 2^28
    add(s, reduction, a100, "n=16777216", 4);
    add(s, matmul, h200, "m=4096,n=64,k=4096", 5);
    add(s, matmul, h200, "m=512,n=512,k=4096", 6);
  }
};

LoaderOptions options_for(const std::filesystem::path& winners, const std::filesystem::path& cache = {}) {
  LoaderOptions o;
  o.winners = winners;
  o.template_dir = testing::template_dir();
  o.cache_dir = cache;
  o.use_cache = !cache.empty();
  return o;
}

void check_ladder(Loader& l, const LadderDb& db) {
  const auto h200 = gpu("NVIDIA H200", 9, 0), h100 = gpu("NVIDIA H100 80GB HBM3", 9, 0), l4 = gpu("NVIDIA L4", 8, 9);
  // Rung 1: exact GPU model and problem.
  auto s = l.select("reduction", "n=16777216", h200);
  CHECK(s.rung == Rung::Exact);
  CHECK(s.config_key == db.key_of.at("NVIDIA H200/sm_90|n=16777216"));
  CHECK(s.tuned_gpu == "NVIDIA H200/sm_90");
  CHECK(s.median_ms == 3.0);
  CHECK(s.default_ms == 9.0);
  CHECK(s.verdict == "separated");
  CHECK(s.run_id > 0);
  CHECK(s.distance == 0.0);
  // Rung 2: same GPU model, nearest problem (2^23 is one doubling from 2^24, three from 2^20).
  s = l.select("reduction", "n=8388608", h200);
  CHECK(s.rung == Rung::NearestProblem);
  CHECK(s.tuned_problem == "n=16777216");
  CHECK(s.distance == Approx(std::log(2.0)));
  CHECK(s.config_key == db.key_of.at("NVIDIA H200/sm_90|n=16777216"));
  s = l.select("reduction", "n=134217728", h200);  // 2^27: nearest is 2^28
  CHECK(s.rung == Rung::NearestProblem);
  CHECK(s.tuned_problem == "n=268435456");
  // Per dimension, not by product: m=4096,n=128 is nearer 4096x64 (one doubling) than
  // 512x512 (8x and 4x), though both products differ from it by 2x.
  s = l.select("matmul", "m=4096,n=128,k=4096", h200);
  CHECK(s.rung == Rung::NearestProblem);
  CHECK(s.tuned_problem == "k=4096,m=4096,n=64");
  CHECK(s.distance == Approx(std::log(2.0)));
  // Rung 3: another GPU of the same compute capability (nearest problem among its winners).
  s = l.select("reduction", "n=16777216", h100);
  CHECK(s.rung == Rung::SameComputeCapability);
  CHECK(s.tuned_gpu == "NVIDIA H200/sm_90");
  CHECK(s.tuned_problem == "n=16777216");
  REQUIRE(s.tuned_device.has_value());
  CHECK(s.tuned_device->sm_count == 132);
  // A100 (sm_80) has a winner of its own: exact there; an L4 (sm_89) has nothing: default.
  CHECK(l.select("reduction", "n=16777216", gpu("NVIDIA A100", 8, 0)).rung == Rung::Exact);
  s = l.select("reduction", "n=16777216", l4);
  CHECK(s.rung == Rung::TemplateDefault);
  CHECK(s.config_key == db.reduction.space().key(db.reduction.space().default_config()));
  CHECK(s.run_id == 0);
  // A kernel without winners: default.
  CHECK(l.select("vector_add", "n=1000", h200).rung == Rung::TemplateDefault);
}

}  // namespace

TEST_CASE("loader: the ladder over a DB and the rung reported", "[loader]") {
  LadderDb db;
  Loader l(options_for(db.path.path()));
  check_ladder(l, db);
  const auto s = l.select("reduction", "n=16777216", gpu("NVIDIA H200", 9, 0));
  CHECK(s.source == "db:" + db.path.path().string());
  CHECK_THAT(s.describe(), Catch::Contains("rung 1 (exact)") && Catch::Contains("run "));
  // Another objective has no winners: the template default.
  LoaderOptions energy = options_for(db.path.path());
  energy.objective = "energy";
  Loader e(energy);
  CHECK(e.select("reduction", "n=16777216", gpu("NVIDIA H200", 9, 0)).rung == Rung::TemplateDefault);
}

TEST_CASE("loader: no winners source gives template defaults and bad sources are input errors", "[loader]") {
  Loader l(options_for({}));
  CHECK(l.select("reduction", "n=1000", gpu("NVIDIA H200", 9, 0)).rung == Rung::TemplateDefault);
  CHECK_THROWS_AS(Loader(options_for("/nonexistent/cutune.db")), InputError);
  CHECK_THROWS_AS(l.select("no_such_kernel", "", gpu("NVIDIA H200", 9, 0)), InputError);
  CHECK_THROWS_AS(l.select("reduction", "n=-5", gpu("NVIDIA H200", 9, 0)), InputError);
  TempPath junk("cutune-junk.json");
  std::ofstream(junk.path()) << R"({"format": "something else"})";
  CHECK_THROWS_WITH(Loader(options_for(junk.path())), Catch::Contains("format"));
}

TEST_CASE("loader: wisdom round trip gives the same answers as the DB", "[loader]") {
  LadderDb db;
  TempPath wisdom("cutune-wisdom.json");
  std::vector<db::WisdomEntry> entries;
  {
    const db::Store s = db::Store::open(db.path.path(), false);
    entries = db::wisdom_from_store(s);
  }
  REQUIRE(entries.size() == 6);
  db::write_wisdom(wisdom.path(), entries);
  const auto back = db::read_wisdom(wisdom.path());
  REQUIRE(back.size() == entries.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    const auto &a = entries[i].winner, &b = back[i].winner;
    CHECK(a.kernel == b.kernel);
    CHECK(a.problem_key == b.problem_key);
    CHECK(a.gpu_model == b.gpu_model);
    CHECK(a.config.to_json() == b.config.to_json());
    CHECK(a.run_id == b.run_id);
    CHECK(a.median_ms == b.median_ms);
    CHECK(a.default_ms == b.default_ms);
    CHECK(a.verdict == b.verdict);
    REQUIRE(back[i].device.has_value());
    REQUIRE(entries[i].device.has_value());
    CHECK(back[i].device->model_key() == entries[i].device->model_key());
    CHECK(back[i].device->sm_count == entries[i].device->sm_count);
  }
  Loader l(options_for(wisdom.path()));
  check_ladder(l, db);
  CHECK_THAT(l.select("reduction", "n=16777216", gpu("NVIDIA H200", 9, 0)).source, Catch::StartsWith("wisdom:"));
}

namespace {

/// Rewrites the config of the first reduction winner of a wisdom file.
void tamper_wisdom(const std::filesystem::path& file, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(file);
  nlohmann::json doc = nlohmann::json::parse(in);
  in.close();
  for (auto& w : doc["winners"])
    if (w["kernel"] == "reduction" && w["problem"] == "n=16777216" && w["gpu"]["model"] == "NVIDIA H200/sm_90")
      edit(w["config"]);
  std::ofstream(file) << doc.dump();
}

}  // namespace

TEST_CASE("loader: tampered wisdom values are rejected before any compile", "[loader]") {
  LadderDb db;
  TempPath wisdom("cutune-tampered.json"), cache("cutune-tampered-cache");
  {
    const db::Store s = db::Store::open(db.path.path(), false);
    db::write_wisdom(wisdom.path(), db::wisdom_from_store(s));
  }
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {"undeclared value", [](auto& c) { c["block_size_x"] = 4096; }, {"reduction", "block_size_x", "4096"}},
      {"code in a value", [](auto& c) { c["block_size_x"] = "128\n#include </etc/passwd>"; }, {"reduction", "block_size_x", "passwd"}},
      {"a string for a number", [](auto& c) { c["block_size_x"] = "128"; }, {"block_size_x", "\"128\""}},
      {"a bool for a number", [](auto& c) { c["warp_tail"] = true; }, {"warp_tail", "true"}},
      {"unknown parameter", [](auto& c) { c["EVIL"] = 1; }, {"reduction", "EVIL", "not declared"}},
      {"missing parameter", [](auto& c) { c.erase("unroll"); }, {"unroll", "missing"}},
      // Every value declared, but "addressing == 2 or vector_width == 1" violated.
      {"restriction violated", [](auto& c) { c["addressing"] = 0; c["vector_width"] = 4; c["warp_tail"] = 0;
                                            c["unroll"] = 0; c["combine"] = 0; },
       {"reduction", "violates", "vector_width == 1"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    TempPath copy("cutune-tampered-copy.json");
    std::filesystem::copy_file(wisdom.path(), copy.path());
    tamper_wisdom(copy.path(), c.edit);
    Loader l(options_for(copy.path(), cache.path()));
    try {
      l.compile("reduction", "n=16777216", gpu("NVIDIA H200", 9, 0));
      FAIL("accepted");
    } catch (const InputError& e) {
      for (const auto& s : c.says) CHECK_THAT(e.what(), Catch::Contains(s));
    }
    CHECK(l.stats().nvrtc_compiles == 0);
    CHECK(l.stats().cache_hits == 0);
    // Other lookups are not affected: the nearest-problem winner is intact.
    CHECK(l.select("reduction", "n=268435456", gpu("NVIDIA H200", 9, 0)).rung == Rung::Exact);
  }
}

TEST_CASE("loader: a tampered DB row is rejected", "[loader]") {
  LadderDb db;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.path.path().c_str(), &raw) == SQLITE_OK);
    const char* sql =
        "UPDATE winners SET config_json = json_set(config_json, '$.elements_per_thread', 3) "
        "WHERE problem_id = (SELECT id FROM problems WHERE problem_key = 'n=16777216') "
        "AND gpu_model = 'NVIDIA H200/sm_90'";
    REQUIRE(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    CHECK(sqlite3_changes(raw) == 1);
    sqlite3_close(raw);
  }
  Loader l(options_for(db.path.path()));
  CHECK_THROWS_WITH(l.select("reduction", "n=16777216", gpu("NVIDIA H200", 9, 0)),
                    Catch::Contains("reduction") && Catch::Contains("elements_per_thread") &&
                        Catch::Contains("value 3 is not declared"));
}

TEST_CASE("loader: many threads compile the same kernel once and a second process start compiles nothing",
          "[loader]") {
  TempPath cache("cutune-loader-cache");
  LadderDb db;
  const auto h200 = gpu("NVIDIA H200", 9, 0);
  constexpr int kThreads = 8;
  std::string key;
  {
    Loader l(options_for(db.path.path(), cache.path()));
    std::vector<std::shared_ptr<const loader::CompiledKernel>> got(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ++ready;
        while (ready < kThreads) std::this_thread::yield();  // all ask at once
        got[t] = l.compile("reduction", "n=16777216", h200);
      });
    for (auto& t : threads) t.join();
    const auto st = l.stats();
    CHECK(st.nvrtc_compiles == 1);
    CHECK(st.cache_hits == 0);
    CHECK(st.memo_hits == kThreads - 1);
    for (const auto& g : got) {
      REQUIRE(g);
      CHECK(g->cubin == got[0]->cubin);
      CHECK(g->selection.rung == Rung::Exact);
    }
    CHECK_FALSE(got[0]->cubin.empty());
    key = got[0]->compile_key;
  }
  {
    Loader again(options_for(db.path.path(), cache.path()));  // as a second process would
    auto c = again.compile("reduction", "n=16777216", h200);
    CHECK(again.stats().nvrtc_compiles == 0);
    CHECK(again.stats().cache_hits == 1);
    CHECK(c->from_cache);
    CHECK(c->compile_key == key);
  }
  // The tuner's compile pool finds the loader's cubin under the same key (one cache).
  const KernelProblem& p = db.reduction;
  runner::CompilePoolOptions po;
  po.workers = 1;
  po.mode = runner::CompilePoolOptions::Mode::Thread;
  po.cache_dir = cache.path();
  runner::CompilePool pool(p, "sm_90", po);
  pool.submit(p.space().parse_key(db.key_of.at("NVIDIA H200/sm_90|n=16777216")));
  auto compiled = pool.next();
  REQUIRE(compiled);
  CHECK(compiled->key == key);
  CHECK(compiled->result.from_cache);
  CHECK(pool.stats().cache_hits == 1);
  CHECK(pool.stats().compiled == 0);
}

TEST_CASE("loader: without a GPU load() says so", "[loader]") {
  std::string why;
  if (cuda::device_count(&why) > 0) {
    WARN("a GPU is present: the no-GPU path is not exercised here (SKIPPED)");
    return;
  }
  Loader l(options_for({}));
  CHECK_THROWS_AS(l.load("reduction", "n=1000"), cuda::NoDriver);
}

TEST_CASE("loader: cutune export --format wisdom writes what the loader reads and leaves the DB untouched", "[loader]") {
  LadderDb db;
  TempPath out("cutune-export.json");
  auto read_bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = read_bytes(db.path.path());
  const std::string cmd = fmt::format("'{}' export --format wisdom --db '{}' --kernel reduction -o '{}' 2>/dev/null",
                                      CUTUNE_CLI_PATH, db.path.path().string(), out.path().string());
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(read_bytes(db.path.path()) == before);
  const auto entries = db::read_wisdom(out.path());
  CHECK(entries.size() == 4);  // the reduction winners only
  Loader l(options_for(out.path()));
  CHECK(l.select("reduction", "n=8388608", gpu("NVIDIA H200", 9, 0)).rung == Rung::NearestProblem);
  CHECK(l.select("matmul", "m=512,n=512,k=4096", gpu("NVIDIA H200", 9, 0)).rung == Rung::TemplateDefault);
  // Bad input: exit 2, nothing written.
  TempPath none("cutune-export-none.json");
  const std::string bad = fmt::format("'{}' export --format wisdom --db /nonexistent/cutune.db -o '{}' 2>/dev/null",
                                      CUTUNE_CLI_PATH, none.path().string());
  CHECK(WEXITSTATUS(std::system(bad.c_str())) == 2);
  CHECK_FALSE(std::filesystem::exists(none.path()));
}

TEST_CASE("loader: the benchmark's shipped wisdom file is valid for the templates", "[loader]") {
  const auto file = testing::template_dir().parent_path() / "bench/loader/h200.wisdom.json";
  if (!std::filesystem::exists(file)) {
    WARN("bench/loader/h200.wisdom.json not beside the templates: SKIPPED");
    return;
  }
  Loader l(options_for(file));
  const auto h200 = gpu("NVIDIA H200", 9, 0), h100 = gpu("NVIDIA H100 80GB HBM3", 9, 0);
  CHECK(l.select("reduction", "n=268435456", h200).rung == Rung::Exact);
  CHECK(l.select("matmul", "m=4096,n=4096,k=4096", h200).rung == Rung::Exact);
  CHECK(l.select("reduction", "n=16777216", h200).rung == Rung::NearestProblem);
  CHECK(l.select("matmul", "m=4096,n=4096,k=4096", h100).rung == Rung::SameComputeCapability);
}

TEST_CASE("loader: the winners' own objective when none is asked for, and a choice asked for between others",
          "[loader][objective]") {
  TempPath path("cutune-loader-objective.db");
  const KernelProblem matmul = KernelProblem::load(testing::template_json("matmul"));
  const DeviceIdentity h200 = gpu("NVIDIA H200", 9, 0, "GPU-h200");
  const ProblemInstance inst = matmul.instantiate("m=512,n=512,k=512");
  {
    db::Store s = db::Store::open(path.path(), true);
    db::Run run = s.begin_run(run_spec(matmul, h200, inst));
    const Config c = nth_valid(matmul.space(), 3);
    run.set_winner({stored_config(matmul.space(), c), 1.0, 2.0, Objective::of_metric("gflops", true), 900.0,
                    Verdict::Separated, {}});
  }
  // Only a gflops winner: picked without naming it; "time" names no winner.
  LoaderOptions o = options_for(path.path());
  Loader any(o);
  const auto s = any.select("matmul", "m=512,n=512,k=512", h200);
  CHECK(s.rung == Rung::Exact);
  CHECK(s.config_key == matmul.space().key(nth_valid(matmul.space(), 3)));
  o.objective = "time";
  CHECK(Loader(o).select("matmul", "m=512,n=512,k=512", h200).rung == Rung::TemplateDefault);
  o.objective = "gflops";
  CHECK(Loader(o).select("matmul", "m=512,n=512,k=512", h200).rung == Rung::Exact);
  {
    db::Store s = db::Store::open(path.path(), true);
    const Config c = nth_valid(matmul.space(), 4);
    s.begin_run(run_spec(matmul, h200, inst))
        .set_winner({stored_config(matmul.space(), c), 1.5, 2.0, Objective::energy(), 3.0});
  }
  // Two objectives, neither time: the loader asks for one.
  Loader two(options_for(path.path()));
  CHECK_THROWS_WITH(two.select("matmul", "m=512,n=512,k=512", h200),
                    Catch::Contains("energy, gflops") && Catch::Contains("LoaderOptions::objective"));
}
