// Distilled selectors end to end without a GPU: a DB holding a sweep's winners and a cross
// matrix (filled through the store API as `cutune distill` fills it on a GPU), `cutune distill
// --no-measure`, the wisdom round trip with the selector, the loader choosing by it (and
// describing so), `cutune select`, tampered selectors refused, an old DB migrated, and the
// sweep's bad input refused before any GPU work.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "cutune/db/store.hpp"
#include "cutune/formats/wisdom.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "result_helpers.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;
using loader::Loader;
using loader::LoaderOptions;
using loader::Rung;

namespace {

DeviceIdentity gpu(const std::string& name, int major, int minor) {
  DeviceIdentity d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  d.uuid = "GPU-" + name;
  return d;
}

Config nth_valid(const Space& space, std::size_t n) {
  Config out;
  std::size_t i = 0;
  space.for_each_valid([&](const Config& c) {
    out = c;
    return i++ < n;
  });
  return out;
}

ResultConfig stored_config(const Space& space, const Config& c) {
  nlohmann::ordered_json j;
  for (const auto& [name, v] : space.assignments(c)) j[name] = v.to_int();
  return testing::config_of(space.key(c), j.dump());
}

const char* const kH200 = "NVIDIA H200/sm_90";

/// Four tuned shapes n = 2^20, 2^22, 2^24, 2^26 on an H200, and the cross matrix of three
/// candidates A, B, C:  A is best at 2^20 and 2% off at 2^22, C best at 2^24 and 2^26, B best
/// at 2^22 only. Within 5%: {C, A}, split at n <= 2^23.
struct SweepDb {
  TempPath path{"cutune-sweep.db"};
  KernelProblem p = KernelProblem::load(testing::template_json("reduction"));
  ResultConfig a = stored_config(p.space(), nth_valid(p.space(), 10)), b = stored_config(p.space(), nth_valid(p.space(), 20)),
               c = stored_config(p.space(), nth_valid(p.space(), 30));
  std::vector<std::string> keys{"n=1048576", "n=4194304", "n=16777216", "n=67108864"};

  SweepDb() {
    db::Store s = db::Store::open(path.path(), true);
    const std::vector<std::vector<double>> ms = {{1.0, 1.5, 2.0}, {1.02, 1.0, 1.5}, {2.0, 1.5, 1.0}, {3.0, 2.0, 1.0}};
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const ProblemInstance inst = p.instantiate(keys[i]);
      db::RunSpec spec;
      spec.device = gpu("NVIDIA H200", 9, 0);
      spec.kernel = p.name();
      spec.source_hash = "hash";
      spec.problem_key = inst.key();
      spec.problem_json = inst.json();
      spec.tool_version = spec.strategy = spec.command = "test";
      db::Run run = s.begin_run(spec);
      db::WinnerChoice w;
      w.config = i == 1 ? b : i < 1 ? a : c;
      w.median_ms = 1.0;
      w.default_ms = 2.0;
      run.set_winner(w);
      std::vector<db::CrossCell> row;
      for (std::size_t col = 0; col < 3; ++col)
        row.push_back({keys[i], col == 0 ? a : col == 1 ? b : c, ms[i][col], Status::Ok, "", ""});
      s.put_cross_row(run.kernel_id(), run.problem_id(), run.device_id(), row);
      run.end();
    }
  }
};

int run_cli(const std::string& args, std::string* out = nullptr) {
  TempPath capture("cutune-cli-out");
  const std::string cmd = fmt::format("'{}' {} >'{}' 2>&1", CUTUNE_CLI_PATH, args, capture.path().string());
  const int rc = WEXITSTATUS(std::system(cmd.c_str()));
  std::ifstream in(capture.path());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (out) *out = text;
  UNSCOPED_INFO(cmd << "\n" << text);
  return rc;
}

LoaderOptions options_for(const std::filesystem::path& winners) {
  LoaderOptions o;
  o.winners = winners;
  o.template_dir = testing::template_dir();
  o.use_cache = false;
  return o;
}

void check_selection(Loader& l, const SweepDb& db) {
  const auto h200 = gpu("NVIDIA H200", 9, 0);
  auto s = l.select("reduction", "n=2097152", h200);  // 2^21: not tuned, below the split
  CHECK(s.rung == Rung::Selector);
  CHECK(s.config_key == db.a.key());
  CHECK_THAT(s.describe(), Catch::Contains("rung 5 (selector)") && Catch::Contains("config 2 of 2 (n <= 8388608)") &&
                               Catch::Contains("within 5% of the best at 4 tuned shapes (worst 2%)"));
  s = l.select("reduction", "n=33554432", h200);  // 2^25
  CHECK(s.rung == Rung::Selector);
  CHECK(s.config_key == db.c.key());
  CHECK(s.selector.find("n > 8388608") != std::string::npos);
  // A tuned shape: its own winner (the measured best there) before the selector.
  s = l.select("reduction", "n=4194304", h200);
  CHECK(s.rung == Rung::Exact);
  CHECK(s.config_key == db.b.key());
  // Another GPU model of the same compute capability has no selector: the ladder.
  CHECK(l.select("reduction", "n=2097152", gpu("NVIDIA H100 80GB HBM3", 9, 0)).rung == Rung::SameComputeCapability);
}

}  // namespace

TEST_CASE("selector: distill --no-measure, export, the loader and select agree", "[loader][distill]") {
  SweepDb db;
  TempPath json("cutune-distill.json"), wisdom("cutune-sweep-wisdom.json");
  std::string out;
  REQUIRE(run_cli(fmt::format("distill reduction --no-measure --gpu '{}' --db '{}' --json '{}'", kH200,
                              db.path.path().string(), json.path().string()),
                  &out) == 0);
  CHECK_THAT(out, Catch::Contains("kept 2 configurations (greedy set cover), worst slowdown 2%"));
  {
    const db::Store s = db::Store::open(db.path.path(), false);
    const auto selectors = s.selectors({"reduction", "", "", ""});
    REQUIRE(selectors.size() == 1);
    REQUIRE(selectors[0].configs.size() == 2);
    CHECK(selectors[0].configs[0].to_json() == db.c.to_json());  // greedy: C and A each cover 2; C is less slow elsewhere
    CHECK(selectors[0].configs[1].to_json() == db.a.to_json());
    CHECK(selectors[0].worst_slowdown == Approx(0.02));
    CHECK(selectors[0].shapes == db.keys);
  }
  std::ifstream in(json.path());
  const auto doc = nlohmann::json::parse(in);
  CHECK(doc["ms"].size() == 4);
  CHECK(doc["selector"]["tree"][0]["at_most"] == 8388608);

  REQUIRE(run_cli(fmt::format("export --format wisdom --db '{}' --kernel reduction -o '{}'", db.path.path().string(),
                              wisdom.path().string()),
                  &out) == 0);
  CHECK_THAT(out, Catch::Contains("4 winners and 1 selector written"));
  const db::WisdomFile file = db::read_wisdom_file(wisdom.path());
  CHECK(file.winners.size() == 4);
  REQUIRE(file.selectors.size() == 1);
  CHECK(file.selectors[0].nodes.size() == 3);
  // An older reader's view: the winners alone.
  CHECK(db::read_wisdom(wisdom.path()).size() == 4);

  Loader from_wisdom(options_for(wisdom.path()));
  check_selection(from_wisdom, db);
  Loader from_db(options_for(db.path.path()));
  check_selection(from_db, db);
  // Without selectors: the ladder as before (nearest problem).
  LoaderOptions no_sel = options_for(wisdom.path());
  no_sel.use_selectors = false;
  Loader ladder(no_sel);
  CHECK(ladder.select("reduction", "n=2097152", gpu("NVIDIA H200", 9, 0)).rung == Rung::NearestProblem);

  // `cutune select` (what python's cutune.best_config calls) gives the same.
  REQUIRE(run_cli(fmt::format("select reduction --problem 'n=2**21' --winners '{}' --gpu '{}' --json", wisdom.path().string(),
                              kH200),
                  &out) == 0);
  const auto sel = nlohmann::json::parse(out);
  CHECK(sel["rung_name"] == "selector");
  CHECK(sel["config_key"] == db.a.key());
  REQUIRE(run_cli(fmt::format("select reduction --problem 'n=2**21' --winners '{}' --gpu '{}' --no-selectors",
                              wisdom.path().string(), kH200),
                  &out) == 0);
  CHECK_THAT(out, Catch::Contains("(nearest problem)"));
  CHECK(run_cli(fmt::format("select reduction --winners '{}' --gpu H200", wisdom.path().string())) == 2);
}

TEST_CASE("selector: a tampered selector in a wisdom file is refused like any stored value", "[loader][distill]") {
  SweepDb db;
  TempPath wisdom("cutune-sweep-tampered.json");
  {
    const db::Store s = db::Store::open(db.path.path(), false);
    db::write_wisdom(wisdom.path(), db::wisdom_from_store(s), {});
  }
  REQUIRE(run_cli(fmt::format("distill reduction --no-measure --gpu '{}' --db '{}'", kH200, db.path.path().string())) == 0);
  {
    const db::Store s = db::Store::open(db.path.path(), false);
    db::write_wisdom(wisdom.path(), db::wisdom_from_store(s), s.selectors());
  }
  const auto edit = [&](const std::function<void(nlohmann::json&)>& change) {
    std::ifstream in(wisdom.path());
    nlohmann::json doc = nlohmann::json::parse(in);
    change(doc["selectors"][0]);
    TempPath* copy = new TempPath("cutune-sweep-tampered-copy.json");
    std::ofstream(copy->path()) << doc.dump();
    return std::unique_ptr<TempPath>(copy);
  };
  // A configuration the space does not declare: refused whichever leaf the problem reaches.
  auto bad_value = edit([](auto& s) { s["configs"][1]["block_size_x"] = 4096; });
  Loader l(options_for(bad_value->path()));
  for (const char* n : {"n=2097152", "n=33554432"})
    CHECK_THROWS_WITH(l.select("reduction", n, gpu("NVIDIA H200", 9, 0)),
                      Catch::Contains("selector of reduction on NVIDIA H200/sm_90, configs[1]") &&
                          Catch::Contains("block_size_x") && Catch::Contains("4096"));
  auto code = edit([](auto& s) { s["configs"][0]["block_size_x"] = "128\n#include </etc/passwd>"; });
  Loader l2(options_for(code->path()));
  CHECK_THROWS_AS(l2.select("reduction", "n=33554432", gpu("NVIDIA H200", 9, 0)), InputError);
  // A malformed tree or a missing field: the file is refused when read, naming the field.
  auto bad_tree = edit([](auto& s) { s["tree"][0]["low"] = 7; });
  CHECK_THROWS_WITH(Loader(options_for(bad_tree->path())), Catch::Contains("selectors[0].tree[0].low: 7 is not a later node"));
  auto bad_leaf = edit([](auto& s) { s["tree"][1]["config"] = 5; });
  CHECK_THROWS_WITH(Loader(options_for(bad_leaf->path())), Catch::Contains("selectors[0].tree[1].config"));
  auto no_bound = edit([](auto& s) { s.erase("bound"); });
  CHECK_THROWS_WITH(Loader(options_for(no_bound->path())), Catch::Contains("selectors[0].bound: missing"));
}

TEST_CASE("selector: a version-4 DB gets the sweep tables, keeping its rows", "[db][distill]") {
  SweepDb db;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.path.path().c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "DROP TABLE cross_measurements; DROP TABLE selectors; DROP TABLE tuning_claims; PRAGMA user_version = 4", nullptr,
                         nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  {
    const db::Store reader = db::Store::open(db.path.path(), false);  // read through a migrated copy
    CHECK(reader.selectors().empty());
    CHECK(reader.cross_cells("reduction", kH200).empty());
    CHECK(reader.winners().size() == 4);
  }
  db::Store s = db::Store::open(db.path.path(), true);
  CHECK(s.schema_version() == db::Store::kSchemaVersion);
  CHECK(s.winners().size() == 4);
  CHECK(s.cross_cells("reduction", kH200).empty());
  ShapeSelector sel;
  sel.kernel = "reduction";
  sel.gpu_model = kH200;
  sel.configs = {db.a};
  sel.nodes = {SelectorNode{}};
  s.set_selector(sel);
  sel.bound = 0.1;
  s.set_selector(sel);  // replaces
  REQUIRE(s.selectors().size() == 1);
  CHECK(s.selectors()[0].bound == 0.1);
}

TEST_CASE("sweep: bad sweeps are one line and exit 2 before any GPU work", "[distill]") {
  TempPath dbfile("cutune-sweep-bad.db");
  const std::string db = fmt::format("--db '{}'", dbfile.path().string());
  std::string out;
  CHECK(run_cli("tune reduction --sweep '' " + db, &out) == 2);
  CHECK_THAT(out, Catch::Contains("--sweep: empty"));
  CHECK(run_cli("tune reduction --sweep 'n=0..2**10' " + db, &out) == 2);
  CHECK_THAT(out, Catch::Contains("n=0 is outside [1, 2147483647]"));
  CHECK(run_cli("tune reduction --sweep 'n=1..20000:+1' " + db, &out) == 2);
  CHECK_THAT(out, Catch::Contains("20000 shapes, more than 10000 (add --yes"));
  CHECK(std::count(out.begin(), out.end(), '\n') == 1);
  CHECK(run_cli("tune reduction --sweep 'm=1,2' " + db, &out) == 2);
  CHECK(run_cli("tune reduction --problem n=1024 --sweep 'n=1,2' " + db, &out) == 2);
  CHECK_THAT(out, Catch::Contains("both give n"));
  CHECK(run_cli("tune reduction --yes " + db) == 2);  // --yes needs --sweep
  CHECK_FALSE(std::filesystem::exists(dbfile.path()));
  CHECK(run_cli("distill reduction --no-measure " + db, &out) == 2);
  CHECK(run_cli(fmt::format("distill reduction --no-measure --gpu '{}' {}", kH200, db), &out) == 2);
  CHECK_THAT(out, Catch::Contains("no such file"));
}
