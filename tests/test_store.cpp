// The SQLite store: round trips, resume, winners, and refusing files that are not ours.
#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "result_helpers.hpp"
#include "sqlite_test_files.hpp"

namespace fs = std::filesystem;
using cutune::DeviceIdentity;
using cutune::InputError;
using namespace cutune::db;
using cutune::Objective;
using cutune::Status;
using cutune::Verdict;
using cutune::parse_status;
using cutune::status_name;
using cutune::testing::config_of;
using cutune::testing::raw_exec;
using cutune::testing::raw_int;
using TempDb = cutune::testing::TempDb;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

DeviceIdentity h200() {
  DeviceIdentity d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.memory_bytes = 150'754'820'096ULL;
  d.sm_clock_khz = 1'980'000;
  d.memory_clock_khz = 3'201'000;
  d.memory_bus_bits = 6144;
  d.l2_bytes = 62'914'560;
  d.driver_version = 13000;
  d.driver_release = "580.159";
  d.nvrtc_version = 12080;
  d.uuid = "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  return d;
}

void require_same_device(const DeviceIdentity& a, const DeviceIdentity& b) {
  CHECK(a.name == b.name);
  CHECK(a.cc_major == b.cc_major);
  CHECK(a.cc_minor == b.cc_minor);
  CHECK(a.sm_count == b.sm_count);
  CHECK(a.memory_bytes == b.memory_bytes);
  CHECK(a.sm_clock_khz == b.sm_clock_khz);
  CHECK(a.memory_clock_khz == b.memory_clock_khz);
  CHECK(a.memory_bus_bits == b.memory_bus_bits);
  CHECK(a.l2_bytes == b.l2_bytes);
  CHECK(a.driver_version == b.driver_version);
  CHECK(a.driver_release == b.driver_release);
  CHECK(a.nvrtc_version == b.nvrtc_version);
  CHECK(a.uuid == b.uuid);
}

void require_same_measurement(const Measurement& a, const Measurement& b) {
  CHECK(a.config == b.config);
  CHECK(a.status == b.status);
  CHECK(a.error == b.error);
  CHECK(a.median_ms == b.median_ms);  // exact: doubles must round-trip bit for bit
  CHECK(a.samples_ms == b.samples_ms);
  CHECK(a.compile_ms == b.compile_ms);
  CHECK(a.verify_ms == b.verify_ms);
  CHECK(a.started_at == b.started_at);
  CHECK(a.finished_at == b.finished_at);
}

Measurement measurement(const std::string& key, Status status = Status::Ok) {
  Measurement m;
  m.config = config_of(key, R"({"block_size_x":)" + key + "}");
  m.status = status;
  m.started_at = "2026-11-21T23:59:01.123Z";
  m.finished_at = "2026-11-21T23:59:02.456Z";
  if (status == Status::Ok) {
    // Values whose shortest decimal forms are long or tricky, plus a subnormal.
    m.samples_ms = {0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 4.9406564584124654e-324,
                    123456.78901234567, 0.30000000000000004};
    m.median_ms = 1.0 / 3.0;
    m.compile_ms = 812.0000000000001;
    m.verify_ms = 3.14159265358979;
  } else {
    m.error = std::string("failed: ") + status_name(status);
  }
  return m;
}

/// A run of vector_add, n=268435456, on `device`.
RunSpec spec(const DeviceIdentity& device = h200(), const std::string& kernel = "vector_add",
             const std::string& problem_key = "n=268435456") {
  RunSpec s;
  s.device = device;
  s.kernel = kernel;
  s.source_hash = "sha256:abc";
  s.problem_key = problem_key;
  s.problem_json = R"({"n":268435456})";
  s.tool_version = "0.1.0";
  s.strategy = "brute_force";
  s.seed = 42;
  s.command = "cutune tune vector_add";
  return s;
}

WinnerChoice winner(const std::string& key, double median_ms, double default_ms,
                    Objective objective = Objective::time(), double objective_value = 0.0,
                    Verdict verdict = Verdict::Screening, std::vector<cutune::Finalist> finalists = {}) {
  WinnerChoice w;
  w.config = config_of(key, "{}");
  w.median_ms = median_ms;
  w.default_ms = default_ms;
  w.objective = std::move(objective);
  w.objective_value = objective_value;
  w.verdict = verdict;
  w.finalists = std::move(finalists);
  return w;
}

/// A store with one run (and so one device, kernel and problem).
struct Fixture {
  TempDb file;
  Store store = Store::open(file.path(), true);
  Run run = store.begin_run(spec());
  std::int64_t device = run.device_id();
  std::int64_t kernel = run.kernel_id();
  std::int64_t problem = run.problem_id();
};

template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected InputError");
  return {};
}

}  // namespace

TEST_CASE("status names round trip", "[db]") {
  for (Status s : {Status::Ok, Status::Compile, Status::Runtime, Status::Correctness,
                   Status::Constraints, Status::Timeout}) {
    REQUIRE(parse_status(status_name(s)) == s);
  }
  CHECK(std::string(status_name(Status::Correctness)) == "correctness");
  CHECK_FALSE(parse_status("OK").has_value());
  CHECK_FALSE(parse_status("").has_value());
}

TEST_CASE("utc_now_iso is ISO 8601 UTC with milliseconds", "[db]") {
  const std::regex form(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  CHECK(std::regex_match(utc_now_iso(), form));
}

TEST_CASE("DeviceIdentity::slug", "[db][model]") {
  DeviceIdentity d;
  CHECK(d.slug() == "unknown-gpu");
  d.name = "NVIDIA H200";
  CHECK(d.slug() == "nvidia-h200");
  d.name = "  NVIDIA GeForce RTX 4090 (Laptop)--";
  CHECK(d.slug() == "nvidia-geforce-rtx-4090-laptop");
  d.name = "NVIDIA H100 80GB HBM3";
  CHECK(d.slug() == "nvidia-h100-80gb-hbm3");
  d.name = "---";
  CHECK(d.slug() == "unknown-gpu");
}

TEST_CASE("create, then reopen: every field round-trips", "[db]") {
  TempDb file;
  const DeviceIdentity gpu = h200();
  std::vector<Measurement> written;
  std::int64_t device = 0, kernel = 0, problem = 0, run = 0;
  const std::uint64_t seed = 0xFFFF'FFFF'FFFF'FFF0ULL;  // above INT64_MAX on purpose
  {
    Store store = Store::open(file.path(), true);
    CHECK(store.schema_version() == Store::kSchemaVersion);
    RunSpec s = spec(gpu);
    s.strategy = "random";
    s.seed = seed;
    s.command = "cutune tune vector_add --seed 18446744073709551600";
    Run r = store.begin_run(s);
    device = r.device_id();
    kernel = r.kernel_id();
    problem = r.problem_id();
    run = r.id();
    written.push_back(measurement("128"));
    for (Status st : {Status::Compile, Status::Runtime, Status::Correctness,
                      Status::Constraints, Status::Timeout}) {
      written.push_back(measurement(std::to_string(256 + static_cast<int>(st)), st));
    }
    for (const auto& m : written) REQUIRE(r.add(m));
    WinnerChoice w = winner("128", 1.0 / 3.0, 0.7);
    w.config = config_of("128", R"({"block_size_x":128})");
    r.set_winner(w);
    r.end();
  }

  Store store = Store::open(file.path(), false);
  CHECK(store.read_only());
  CHECK(store.path() == file.path());
  CHECK(store.schema_version() == Store::kSchemaVersion);

  const auto d = store.device(device);
  REQUIRE(d.has_value());
  require_same_device(*d, gpu);
  CHECK_FALSE(store.device(device + 100).has_value());

  const auto r = store.run(run);
  REQUIRE(r.has_value());
  CHECK(r->kernel_id == kernel);
  CHECK(r->problem_id == problem);
  CHECK(r->device_id == device);
  CHECK(r->tool_version == "0.1.0");
  CHECK(r->strategy == "random");
  CHECK(r->seed == seed);
  CHECK(r->command == "cutune tune vector_add --seed 18446744073709551600");
  CHECK(r->finished_at >= r->started_at);
  CHECK(r->finished_at.size() == 24);

  const auto all = store.measurements(kernel, problem, device);
  REQUIRE(all.size() == written.size());
  for (std::size_t i = 0; i < all.size(); ++i) require_same_measurement(all[i], written[i]);
  const auto timeout = store.find_measurement(kernel, problem, device, written.back().config.key());
  REQUIRE(timeout.has_value());
  CHECK(timeout->status == Status::Timeout);
  CHECK(timeout->error == "failed: timeout");
  CHECK(timeout->samples_ms.empty());
  CHECK_FALSE(store.find_measurement(kernel, problem, device, "999").has_value());
  CHECK(store.measurements(kernel, problem, device + 1).empty());

  const auto winners = store.winners();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].kernel == "vector_add");
  CHECK(winners[0].problem_key == "n=268435456");
  CHECK(winners[0].gpu_model == "NVIDIA H200/sm_90");
  CHECK(winners[0].config.key() == "128");
  CHECK(winners[0].config == config_of("128", R"({"block_size_x":128})"));
  CHECK(winners[0].median_ms == 1.0 / 3.0);
  CHECK(winners[0].default_ms == 0.7);
  CHECK(winners[0].run_id == run);
  CHECK(winners[0].updated_at.size() == 24);
  CHECK(winners[0].objective == Objective::time());
  CHECK(winners[0].verdict == Verdict::Screening);

  CHECK(store.integrity_ok());
  // A read-only store refuses writes (an environment error, not the user's input).
  CHECK_THROWS_AS(store.begin_run(spec(gpu)), std::runtime_error);
  CHECK_FALSE(store.find_measurement(kernel, problem, device, "512").has_value());
}

TEST_CASE("upserts return the existing row and update mutable device fields", "[db]") {
  Fixture f;
  DeviceIdentity gpu = h200();
  CHECK(f.store.upsert_device(gpu) == f.device);
  gpu.driver_version = 13010;
  gpu.driver_release = "580.200";
  gpu.nvrtc_version = 13000;
  CHECK(f.store.upsert_device(gpu) == f.device);
  require_same_device(*f.store.device(f.device), gpu);

  DeviceIdentity other = h200();
  other.uuid = "GPU-another";
  const auto other_id = f.store.upsert_device(other);
  CHECK(other_id != f.device);

  // Without a uuid: keyed by name, compute capability, SM count and memory size.
  DeviceIdentity anon = h200();
  anon.uuid.clear();
  const auto anon_id = f.store.upsert_device(anon);
  CHECK(anon_id != f.device);
  CHECK(anon_id != other_id);
  anon.driver_version = 12080;
  CHECK(f.store.upsert_device(anon) == anon_id);
  CHECK(f.store.device(anon_id)->driver_version == 12080);
  CHECK(f.store.device(anon_id)->uuid.empty());
  anon.sm_count = 114;
  CHECK(f.store.upsert_device(anon) != anon_id);

  CHECK(f.store.upsert_kernel("vector_add", "sha256:abc") == f.kernel);
  CHECK(f.store.upsert_kernel("vector_add", "sha256:def") != f.kernel);
  CHECK(f.store.upsert_problem(f.kernel, "n=268435456", "{}") == f.problem);
  CHECK(f.store.upsert_problem(f.kernel, "n=1024", "{}") != f.problem);
}

TEST_CASE("resume: a second add of the same configuration is ignored", "[db]") {
  Fixture f;
  const Measurement first = measurement("128");
  CHECK(f.run.add(first));
  Measurement second = measurement("128", Status::Runtime);
  CHECK_FALSE(f.run.add(second));
  const auto stored = f.store.find_measurement(f.kernel, f.problem, f.device, "128");
  REQUIRE(stored.has_value());
  require_same_measurement(*stored, first);
  CHECK(f.run.measurements().size() == 1);

  // The same configuration on another problem is new work.
  Run other = f.store.begin_run(spec(h200(), "vector_add", "n=1024"));
  CHECK(other.kernel_id() == f.kernel);
  CHECK(other.problem_id() != f.problem);
  CHECK(other.add(second));
  CHECK(f.run.measurements().size() == 1);
}

TEST_CASE("a run begins, adds, sets its winner and ends, and a second run on the same DB resumes from its rows", "[db]") {
  TempDb file;
  std::int64_t first_id = 0, kernel = 0, problem = 0, device = 0;
  {
    Store store = Store::open(file.path(), true);
    Run run = store.begin_run(spec());
    first_id = run.id();
    kernel = run.kernel_id();
    problem = run.problem_id();
    device = run.device_id();
    // begin_run upserted the target: the ids are the rows'.
    CHECK(store.upsert_device(h200()) == device);
    CHECK(store.upsert_kernel("vector_add", "sha256:abc") == kernel);
    CHECK(store.upsert_problem(kernel, "n=268435456", "{}") == problem);
    const auto info = store.run(first_id);
    REQUIRE(info);
    CHECK(info->kernel_id == kernel);
    CHECK(info->problem_id == problem);
    CHECK(info->device_id == device);
    CHECK(info->tool_version == "0.1.0");
    CHECK(info->strategy == "brute_force");
    CHECK(info->seed == 42);
    CHECK(info->command == "cutune tune vector_add");
    CHECK(info->finished_at.empty());  // running
    CHECK(run.add(measurement("64")));
    CHECK(run.add(measurement("128", Status::Runtime)));
    CHECK(run.add(measurement("256")));
    run.set_winner(winner("64", 1.0 / 3.0, 0.5, Objective::of_metric("GB/s", true), 812.5, Verdict::Separated));
    run.end();
    CHECK(store.run(first_id)->finished_at.size() == 24);
  }
  // A second session on the same file: the same target, a new run, the stored rows to skip.
  Store store = Store::open(file.path(), true);
  Run again = store.begin_run(spec());
  CHECK(again.id() != first_id);
  CHECK(again.kernel_id() == kernel);
  CHECK(again.problem_id() == problem);
  CHECK(again.device_id() == device);
  const auto stored = again.measurements();
  REQUIRE(stored.size() == 3);
  CHECK(stored[0].config.key() == "64");  // oldest first
  CHECK(stored[1].status == Status::Runtime);
  require_same_measurement(stored[2], measurement("256"));
  CHECK_FALSE(again.add(measurement("64")));  // stored by the first run
  CHECK(again.add(measurement("512")));
  CHECK(again.measurements().size() == 4);
  // Its winner replaces the first run's for the same objective, and says whose it is.
  auto w = store.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].run_id == first_id);
  CHECK(w[0].objective == Objective::of_metric("GB/s", true));
  CHECK(w[0].verdict == Verdict::Separated);
  CHECK(w[0].objective_value == 812.5);
  again.set_winner(winner("512", 0.25, 0.5, Objective::of_metric("GB/s", true), 900.0, Verdict::Tie));
  again.end();
  w = store.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].run_id == again.id());
  CHECK(w[0].config.key() == "512");
  CHECK(w[0].verdict == Verdict::Tie);
  // Another device is another target: nothing of the first is its own.
  DeviceIdentity other = h200();
  other.uuid = "GPU-other";
  Run elsewhere = store.begin_run(spec(other));
  CHECK(elsewhere.device_id() != device);
  CHECK(elsewhere.kernel_id() == kernel);
  CHECK(elsewhere.measurements().empty());
  // But it is a GPU of the same model: what a tuning there reuses is the first GPU's.
  auto of_model = elsewhere.model_measurements();
  REQUIRE(of_model.size() == 4);
  CHECK(of_model[0].config.key() == "64");
  CHECK(of_model[0].device_id == device);
  CHECK(of_model[3].config.key() == "512");
  // Its own first, and a configuration both GPUs stored once, as its own GPU has it.
  CHECK(elsewhere.add(measurement("64", Status::Timeout)));
  CHECK(elsewhere.add(measurement("2048")));
  of_model = elsewhere.model_measurements();
  REQUIRE(of_model.size() == 5);
  CHECK(of_model[0].config.key() == "64");
  CHECK(of_model[0].status == Status::Timeout);
  CHECK(of_model[0].device_id == elsewhere.device_id());
  CHECK(of_model[1].config.key() == "2048");
  CHECK(of_model[2].config.key() == "128");
  CHECK(of_model[2].device_id == device);
  // Seen from the first GPU: its own 64 (ok), then the other's 2048.
  const auto from_first = store.model_measurements(kernel, problem, device);
  REQUIRE(from_first.size() == 5);
  CHECK(from_first[0].status == Status::Ok);
  CHECK(from_first[4].config.key() == "2048");
  CHECK(from_first[4].device_id == elsewhere.device_id());
  // Another model (same name, another architecture), or another problem: nothing.
  DeviceIdentity other_model = h200();
  other_model.uuid = "GPU-another-model";
  other_model.cc_minor = 1;
  CHECK(store.begin_run(spec(other_model)).model_measurements().empty());
  CHECK(store.begin_run(spec(other, "vector_add", "n=1024")).model_measurements().empty());
  CHECK(store.integrity_ok());
}

TEST_CASE("energy per launch reads back typed from the stored statistics, and only from them", "[db]") {
  Fixture f;
  cutune::MeasuredStats stats;
  stats.summary.count = 3;
  stats.summary.median = 1.0;
  stats.energy_mj_per_launch = 0.125;
  Measurement measured = measurement("64");
  measured.origin = cutune::MeasuredOrigin{cutune::ResultStats::of(stats), std::nullopt, std::nullopt, {}};
  REQUIRE(f.run.add(measured));
  REQUIRE(f.run.add(measurement("128")));
  // A row whose statistics hold something else under the name (a file written by hand).
  raw_exec(f.file.path(), R"(UPDATE measurements SET stats_json = '{"energy_mj_per_launch":"not a number",)"
                          R"("mean_ms":1.0}' WHERE config_key = '128')");
  Measurement failed = measurement("256", Status::Runtime);
  REQUIRE(f.run.add(failed));

  const auto a = f.store.find_measurement(f.kernel, f.problem, f.device, "64");
  const auto b = f.store.find_measurement(f.kernel, f.problem, f.device, "128");
  const auto c = f.store.find_measurement(f.kernel, f.problem, f.device, "256");
  REQUIRE((a && b && c));
  REQUIRE(a->energy_mj_per_launch().has_value());
  CHECK(*a->energy_mj_per_launch() == 0.125);
  CHECK_FALSE(b->energy_mj_per_launch().has_value());
  CHECK(b->mean_ms() == 1.0);
  CHECK_FALSE(c->energy_mj_per_launch().has_value());
}

TEST_CASE("bad references, NaN and writes after the end are errors that say what", "[db]") {
  Fixture f;
  try {
    f.store.upsert_problem(f.kernel + 42, "n=1", "{}");
    FAIL("expected an error");
  } catch (const InputError&) {
    FAIL("a foreign-key violation is not an InputError");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("SQLITE_CONSTRAINT_FOREIGNKEY") != std::string::npos);
    CHECK(what.find("INSERT INTO problems") != std::string::npos);
  }
  Measurement nan = measurement("2");
  nan.median_ms = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(f.run.add(nan), std::invalid_argument);
  CHECK(f.run.measurements().empty());
  f.run.end();
  CHECK(f.run.ended());
  CHECK_THROWS_AS(f.run.add(measurement("3")), std::logic_error);
  CHECK_THROWS_AS(f.run.set_winner(winner("3", 1, 1)), std::logic_error);
  CHECK_THROWS_AS(f.run.end(), std::logic_error);
  CHECK(f.run.measurements().empty());
  CHECK(f.store.winners().empty());
  CHECK(f.store.integrity_ok());
}

TEST_CASE("winners: replace, filter and order", "[db]") {
  Fixture f;
  DeviceIdentity h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.uuid = "GPU-h100";
  DeviceIdentity ada = h200();
  ada.name = "NVIDIA GeForce RTX 4090";
  ada.cc_major = 8;
  ada.cc_minor = 9;
  ada.uuid = "GPU-4090";
  Run on_h100 = f.store.begin_run(spec(h100));
  Run small_on_4090 = f.store.begin_run(spec(ada, "vector_add", "n=1024"));
  Run reduce = f.store.begin_run(spec(h200(), "reduce", "n=1024"));

  f.run.set_winner(winner("256", 2.0, 3.0));
  f.run.set_winner(winner("128", 1.5, 3.0));  // replaces
  on_h100.set_winner(winner("512", 2.5, 3.5));
  small_on_4090.set_winner(winner("64", 0.01, 0.02));
  reduce.set_winner(winner("1024", 0.5, 0.5));

  const auto all = f.store.winners();
  REQUIRE(all.size() == 4);
  CHECK(all[0].kernel == "reduce");  // ordered by kernel, problem, gpu
  CHECK(all[0].run_id == reduce.id());
  CHECK(all[1].problem_key == "n=1024");
  CHECK(all[1].gpu_model == "NVIDIA GeForce RTX 4090/sm_89");
  CHECK(all[2].gpu_model == "NVIDIA H100 80GB HBM3/sm_90");
  CHECK(all[3].gpu_model == "NVIDIA H200/sm_90");
  CHECK(all[3].config.key() == "128");
  CHECK(all[3].median_ms == 1.5);
  CHECK(all[3].run_id == f.run.id());

  const auto count = [&](WinnerFilter filter) { return f.store.winners(filter).size(); };
  CHECK(count({"vector_add", "", "", ""}) == 3);
  CHECK(count({"vector", "", "", ""}) == 0);  // kernel: exact
  CHECK(count({"", "", "n=1024", ""}) == 2);
  CHECK(count({"", "", "n=10", ""}) == 0);    // problem: exact
  CHECK(count({"", "h200", "", ""}) == 2);     // gpu: case-insensitive substring
  CHECK(count({"", "SM_90", "", ""}) == 3);
  CHECK(count({"", "nvidia-h100", "", ""}) == 1);  // or the slug
  CHECK(count({"", "rtx 4090", "", ""}) == 1);
  CHECK(count({"", "a100", "", ""}) == 0);
  CHECK(count({"vector_add", "h200", "n=268435456", ""}) == 1);
}

TEST_CASE("the schema version and journal mode are set", "[db]") {
  TempDb file;
  { Store store = Store::open(file.path(), true); }
  CHECK(raw_int(file.path(), "PRAGMA user_version") == Store::kSchemaVersion);
  CHECK(raw_int(file.path(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                             "name IN ('devices', 'kernels', 'problems', 'runs', "
                             "'measurements', 'winners')") == 6);
  CHECK(raw_int(file.path(), "SELECT journal_mode = 'wal' FROM pragma_journal_mode") == 1);
  // Opening again (read-write) migrates nothing and keeps the data.
  Store again = Store::open(file.path(), true);
  CHECK(again.schema_version() == Store::kSchemaVersion);
  CHECK(again.integrity_ok());
}

TEST_CASE("a DB from a newer cutune is refused and left untouched", "[db]") {
  TempDb file;
  { Store store = Store::open(file.path(), true); }
  raw_exec(file.path(), fmt::format("PRAGMA user_version = {}", Store::kSchemaVersion + 1));
  const std::string before = read_bytes(file.path());
  for (bool create : {false, true}) {
    const auto what = input_error_of([&] { Store::open(file.path(), create); });
    CHECK(what == file.path().string() + fmt::format(": schema version {} is newer than this cutune ({})",
                                                     Store::kSchemaVersion + 1, Store::kSchemaVersion));
    CHECK(read_bytes(file.path()) == before);
  }
}

TEST_CASE("a file that is not a database is refused and left untouched", "[db]") {
  TempDb file;
  std::string garbage;
  for (int i = 0; i < 500; ++i) garbage += "this is not a database, line " + std::to_string(i) + "\n";
  write_bytes(file.path(), garbage);
  for (bool create : {false, true}) {
    const auto what = input_error_of([&] { Store::open(file.path(), create); });
    CHECK(what.find(file.path().string() + ": ") == 0);
    CHECK(what.find('\n') == std::string::npos);
    CHECK(read_bytes(file.path()) == garbage);
  }
}

TEST_CASE("a damaged cutune DB is refused", "[db]") {
  TempDb file;
  {
    Store store = Store::open(file.path(), true);
    store.begin_run(spec());
  }
  std::string bytes = read_bytes(file.path());
  REQUIRE(bytes.size() > 4096);
  for (std::size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5);  // page 1's b-tree
  write_bytes(file.path(), bytes);
  for (bool create : {false, true}) {
    const auto what = input_error_of([&] { Store::open(file.path(), create); });
    CHECK(what.find(file.path().string() + ": ") == 0);
    CHECK(read_bytes(file.path()) == bytes);
  }
}

TEST_CASE("another application's SQLite DB is refused and left untouched", "[db]") {
  TempDb file;
  raw_exec(file.path(), "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
                        "INSERT INTO notes (text) VALUES ('mine');");
  const std::string before = read_bytes(file.path());
  for (bool create : {false, true}) {
    const auto what = input_error_of([&] { Store::open(file.path(), create); });
    CHECK(what == file.path().string() + ": not a cutune database (it has other tables: notes)");
    CHECK(read_bytes(file.path()) == before);
  }
  // Same for one that marks itself with another application id, tables or not.
  TempDb marked;
  raw_exec(marked.path(), "PRAGMA application_id = 1234; PRAGMA user_version = 1; "
                          "CREATE TABLE devices (id INTEGER PRIMARY KEY);");
  CHECK(input_error_of([&] { Store::open(marked.path(), true); }).find("not a cutune database") !=
        std::string::npos);
}

TEST_CASE("a missing file is refused without create, and not created", "[db]") {
  TempDb file;
  const auto what = input_error_of([&] { Store::open(file.path(), false); });
  CHECK(what.find(file.path().string()) != std::string::npos);
  CHECK_FALSE(fs::exists(file.path()));

  const auto dir = fs::temp_directory_path();  // a directory is not a database either
  CHECK(input_error_of([&] { Store::open(dir, false); }).find(dir.string()) == 0);
  const auto no_dir = file.path() / "sub" / "x.db";  // a parent that does not exist
  CHECK(input_error_of([&] { Store::open(no_dir, true); }).find(no_dir.string()) == 0);
}

TEST_CASE("an empty file becomes a store when created, and is refused read-only", "[db]") {
  TempDb file;
  write_bytes(file.path(), "");
  CHECK(input_error_of([&] { Store::open(file.path(), false); }).find("empty database") !=
        std::string::npos);
  CHECK(fs::file_size(file.path()) == 0);
  Store store = Store::open(file.path(), true);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  CHECK(store.integrity_ok());
}

TEST_CASE("a measurement is visible to a second connection once added", "[db]") {
  Fixture f;
  Store reader = Store::open(f.file.path(), false);  // a concurrent `cutune query`
  CHECK_FALSE(reader.find_measurement(f.kernel, f.problem, f.device, "128").has_value());
  REQUIRE(f.run.add(measurement("128")));
  const auto seen = reader.find_measurement(f.kernel, f.problem, f.device, "128");
  REQUIRE(seen.has_value());
  require_same_measurement(*seen, measurement("128"));
  CHECK(raw_int(f.file.path(), "SELECT count(*) FROM measurements") == 1);
}

TEST_CASE("Store moves", "[db]") {
  TempDb file;
  Store store = Store::open(file.path(), true);
  const auto kernel = store.begin_run(spec()).kernel_id();
  Store moved = std::move(store);
  CHECK(moved.upsert_kernel("vector_add", "sha256:abc") == kernel);
  Store other = Store::open(file.path(), false);
  other = std::move(moved);
  CHECK_FALSE(other.read_only());
  CHECK(other.integrity_ok());
}

TEST_CASE("kill -9 while adding measurements loses nothing committed", "[db]") {
  TempDb file;
  std::int64_t device = 0, kernel = 0, problem = 0;
  {
    Store store = Store::open(file.path(), true);
    const Run run = store.begin_run(spec());
    device = run.device_id();
    kernel = run.kernel_id();
    problem = run.problem_id();
  }
  // The child opens its own connection (SQLite connections must not cross a fork).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      Store store = Store::open(file.path(), true);
      Run run = store.begin_run(spec());
      for (int i = 0;; ++i) {
        run.add(measurement(std::to_string(i)));
      }
    } catch (...) {
    }
    ::_exit(1);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (raw_int(file.path(), "SELECT count(*) FROM measurements") < 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto seen = raw_int(file.path(), "SELECT count(*) FROM measurements");
  ::kill(child, SIGKILL);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  REQUIRE(seen >= 200);

  Store store = Store::open(file.path(), true);
  CHECK(store.integrity_ok());
  const auto all = store.measurements(kernel, problem, device);
  CHECK(static_cast<std::int64_t>(all.size()) >= seen);  // every commit survived
  for (std::size_t i = 0; i < all.size(); ++i) {
    require_same_measurement(all[i], measurement(std::to_string(i)));
  }
}

namespace {

/// A current DB made to look older: the tables versions 5 and 6 added, dropped.
#define DROP_SWEEP_TABLES "DROP TABLE cross_measurements; DROP TABLE selectors; DROP TABLE tuning_claims; "

/// A fresh store's first device, kernel, problem and run (ids 1), one measurement "128"
/// whose row holds `stats_json`, and a tied winner over one finalist whose row holds
/// [{"config":"128"}] (rows as older versions wrote them). Returns the run.
Run store_one_winner(Store& store, const std::string& stats_json) {
  Run run = store.begin_run(spec(h200(), "vector_add", "n=1"));
  Measurement m = measurement("128", Status::Ok);
  REQUIRE(run.add(m));
  run.set_winner(winner("128", 0.5, 0.6, Objective::time(), 0, Verdict::Tie));
  raw_exec(store.path(), "UPDATE measurements SET stats_json = '" + stats_json + "'; UPDATE winners SET "
                         R"(finalists_json = '[{"config":"128"}]')");
  return run;
}

/// The finalists of a row holding [{"config":"128"}]: one, keyed by nothing, with no values.
void require_old_finalist(const std::vector<cutune::Finalist>& finalists) {
  REQUIRE(finalists.size() == 1);
  CHECK(finalists[0].config.key().empty());
  CHECK(finalists[0].config.values().empty());
}

}  // namespace

TEST_CASE("a version-1 DB is migrated to the current version and keeps its data", "[db]") {
  TempDb file;
  {
    Store store = Store::open(file.path(), true);
    store_one_winner(store, R"({"mean_ms":0.5})");
  }
  // Back to the version-1 layout, as a DB from session 1 has it.
  raw_exec(file.path(),
           "ALTER TABLE measurements DROP COLUMN stats_json; ALTER TABLE measurements DROP COLUMN metrics_json; "
           "ALTER TABLE kernels DROP COLUMN function; DROP TABLE winners; "
           "CREATE TABLE winners (id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL REFERENCES kernels (id), "
           "problem_id INTEGER NOT NULL REFERENCES problems (id), gpu_model TEXT NOT NULL, "
           "device_id INTEGER NOT NULL REFERENCES devices (id), run_id INTEGER REFERENCES runs (id), "
           "config_key TEXT NOT NULL, config_json TEXT NOT NULL, median_ms REAL NOT NULL, "
           "default_ms REAL NOT NULL, updated_at TEXT NOT NULL, UNIQUE (kernel_id, problem_id, gpu_model)); "
           "CREATE INDEX winners_by_gpu_model ON winners (gpu_model); "
           "INSERT INTO winners VALUES (1, 1, 1, 'NVIDIA H200/sm_90', 1, NULL, '128', '{}', 0.5, 0.6, "
           "'2026-11-21T00:00:00.000Z'); " DROP_SWEEP_TABLES "PRAGMA user_version = 1");
  Store store = Store::open(file.path(), true);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  CHECK(store.integrity_ok());
  const auto all = store.measurements(1, 1, 1);
  REQUIRE(all.size() == 1);
  CHECK(all[0].config.key() == "128");
  CHECK(all[0].provenance() == cutune::Provenance::Measured);
  CHECK(all[0].stats() == nullptr);
  const auto w = store.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].verdict == Verdict::Screening);
  CHECK(w[0].finalists.empty());
  CHECK(w[0].objective == Objective::time());
  CHECK(w[0].run_id == 0);  // the version-1 row had none
  CHECK(w[0].objective_value == 0.5);
  CHECK(w[0].median_ms == 0.5);
}

TEST_CASE("statistics and the winner's verdict round-trip", "[db]") {
  TempDb file;
  Store store = Store::open(file.path(), true);
  const std::string stats = R"({"mean_ms":0.5,"stop_reason":"converged"})";
  Run run = store_one_winner(store, stats);
  const auto m = store.find_measurement(1, 1, 1, "128");
  REQUIRE(m->stats());
  CHECK(m->stats()->summary.mean == 0.5);
  CHECK(m->stats()->stop_reason == cutune::StopReason::converged);
  const auto w = store.winners();
  REQUIRE(w.size() == 1);
  CHECK(w[0].verdict == Verdict::Tie);
  require_old_finalist(w[0].finalists);
  CHECK(w[0].run_id == run.id());
  // A metric needs a name (the schema's CHECK): an empty one is refused, nothing replaced.
  CHECK_THROWS(run.set_winner(winner("256", 0.5, 0.6, Objective::of_metric("", false))));
  CHECK(store.winners().size() == 1);
  // One winner per objective: an energy winner does not replace the time winner.
  run.set_winner(winner("256", 0.7, 0.6, Objective::energy(), 9.5));
  const auto both = store.winners();
  REQUIRE(both.size() == 2);
  CHECK(both[0].objective == Objective::energy());
  CHECK(both[0].config.key() == "256");
  CHECK(both[0].objective_value == 9.5);
  CHECK(both[1].objective == Objective::time());
  CHECK(both[1].config.key() == "128");
  CHECK(both[1].objective_value == 0.5);
  CHECK(store.winners({"", "", "", "energy"}).size() == 1);
}

TEST_CASE("a version-2 DB is migrated to the current version and keeps its measurements and winners", "[db]") {
  TempDb file;
  {
    Store store = Store::open(file.path(), true);
    Run run = store_one_winner(store, R"({"mean_ms":0.5})");
    run.set_winner(winner("256", 0.7, 0.6, Objective::energy(), 9.5));
  }
  // Back to the version-2 layout: no metrics column, winners with the objective CHECK and
  // no direction.
  raw_exec(file.path(),
           "ALTER TABLE measurements DROP COLUMN metrics_json; ALTER TABLE kernels DROP COLUMN function; "
           "CREATE TABLE winners_v2 (id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL REFERENCES kernels (id), "
           "problem_id INTEGER NOT NULL REFERENCES problems (id), gpu_model TEXT NOT NULL, "
           "objective TEXT NOT NULL DEFAULT 'time' CHECK (objective IN ('time', 'energy')), "
           "device_id INTEGER NOT NULL REFERENCES devices (id), run_id INTEGER REFERENCES runs (id), "
           "config_key TEXT NOT NULL, config_json TEXT NOT NULL, median_ms REAL NOT NULL, default_ms REAL NOT NULL, "
           "objective_value REAL NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT 'screening', "
           "finalists_json TEXT NOT NULL DEFAULT '[]', updated_at TEXT NOT NULL, "
           "UNIQUE (kernel_id, problem_id, gpu_model, objective)); "
           "INSERT INTO winners_v2 SELECT id, kernel_id, problem_id, gpu_model, objective, device_id, run_id, "
           "config_key, config_json, median_ms, default_ms, objective_value, verdict, finalists_json, updated_at "
           "FROM winners; DROP TABLE winners; ALTER TABLE winners_v2 RENAME TO winners; "
           "CREATE INDEX winners_by_gpu_model ON winners (gpu_model); " DROP_SWEEP_TABLES "PRAGMA user_version = 2");
  Store store = Store::open(file.path(), true);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  CHECK(store.integrity_ok());
  const auto all = store.measurements(1, 1, 1);
  REQUIRE(all.size() == 1);
  CHECK(all[0].config.key() == "128");
  CHECK(all[0].mean_ms() == 0.5);
  CHECK(all[0].metrics.empty());
  const auto w = store.winners();
  REQUIRE(w.size() == 2);
  CHECK(w[0].objective == Objective::energy());
  CHECK(w[0].config.key() == "256");
  CHECK(w[0].objective_value == 9.5);
  CHECK_FALSE(w[0].objective.higher_is_better);
  CHECK(w[1].objective == Objective::time());
  CHECK(w[1].verdict == Verdict::Tie);
  require_old_finalist(w[1].finalists);
  // The migrated table takes a metric's winner, with its direction, beside the others.
  Run later = store.begin_run(spec(h200(), "vector_add", "n=1"));
  later.set_winner(winner("64", 0.8, 0.6, Objective::of_metric("GFLOP/s", true), 812.5, Verdict::Separated));
  const auto three = store.winners({"", "", "", "GFLOP/s"});
  REQUIRE(three.size() == 1);
  CHECK(three[0].config.key() == "64");
  CHECK(three[0].objective_value == 812.5);
  CHECK(three[0].objective == Objective::of_metric("GFLOP/s", true));
  CHECK(three[0].verdict == Verdict::Separated);
  CHECK(store.winners().size() == 3);
}

TEST_CASE("metrics are stored with each measurement, in order", "[db]") {
  TempDb file;
  Store store = Store::open(file.path(), true);
  Run run = store.begin_run(spec(h200(), "gemm", "n=1"));
  Measurement m = measurement("128", Status::Ok);
  m.metrics = {{"GFLOP/s", 812.5}, {"GB/s", 31.25}, {"a", 1.0}};
  REQUIRE(run.add(m));
  const auto back = store.find_measurement(run.kernel_id(), run.problem_id(), run.device_id(), "128");
  REQUIRE(back);
  REQUIRE(back->metrics.size() == 3);
  CHECK(back->metrics[0] == std::pair<std::string, double>{"GFLOP/s", 812.5});
  CHECK(back->metrics[1] == std::pair<std::string, double>{"GB/s", 31.25});
  CHECK(back->metrics[2].first == "a");
}

TEST_CASE("a kernel's function is stored, learnt by a row without it, and finds its measurements", "[db]") {
  TempDb file;
  {
    Store store = Store::open(file.path(), true);
    RunSpec s = spec(h200(), "convolution", "n=1");
    s.kernel_function = "convolution_kernel";
    Run run = store.begin_run(s);
    REQUIRE(run.add(measurement("128", Status::Ok)));
  }
  Store store = Store::open(file.path(), true);
  WinnerFilter by_function;
  by_function.kernel = "convolution_kernel";
  auto found = store.measurement_targets(by_function, true);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kernel == "convolution");
  CHECK(found[0].kernel_function == "convolution_kernel");
  CHECK(store.measurement_targets(by_function).empty());  // exports and queries: cutune's name only
  by_function.kernel = "convolution_kernel_2";
  CHECK(store.measurement_targets(by_function, true).empty());

  // A row stored without its function (before schema 4, or an import that could not tell)
  // learns it from the next run that knows it, and keeps it when a later run does not.
  const auto id = store.upsert_kernel("nbody", "sha256:abc");
  Run run = store.begin_run(spec(h200(), "nbody", "n=1"));
  REQUIRE(run.add(measurement("64", Status::Ok)));
  WinnerFilter nbody;
  nbody.kernel = "nbody_kernel";
  CHECK(store.measurement_targets(nbody, true).empty());
  CHECK(store.upsert_kernel("nbody", "sha256:abc", "nbody_kernel") == id);
  found = store.measurement_targets(nbody, true);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kernel == "nbody");
  CHECK(store.upsert_kernel("nbody", "sha256:abc", "") == id);
  CHECK(store.measurement_targets(nbody, true).size() == 1);
}

TEST_CASE("a version-3 DB opened for writing gets the kernels' function column, empty, and keeps its rows, and read-only it is read as it is", "[db]") {
  TempDb file;
  {
    Store store = Store::open(file.path(), true);
    store_one_winner(store, R"({"mean_ms":0.5})");
  }
  raw_exec(file.path(), "ALTER TABLE kernels DROP COLUMN function; " DROP_SWEEP_TABLES "PRAGMA user_version = 3");
  const std::string before = read_bytes(file.path());
  {
    // Read-only (a query, an export): read through a migrated copy in memory; the file stays at 3.
    const Store reader = Store::open(file.path(), false);
    CHECK(reader.read_only());
    CHECK(reader.schema_version() == Store::kSchemaVersion);
    const auto targets = reader.measurement_targets({});
    REQUIRE(targets.size() == 1);
    CHECK(targets[0].kernel_function.empty());
    CHECK(reader.winners().size() == 1);
  }
  CHECK(read_bytes(file.path()) == before);
  CHECK(raw_int(file.path(), "PRAGMA user_version") == 3);
  Store store = Store::open(file.path(), true);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  const auto targets = store.measurement_targets({});
  REQUIRE(targets.size() == 1);
  CHECK(targets[0].kernel == "vector_add");
  CHECK(targets[0].kernel_function.empty());
  CHECK(store.winners().size() == 1);
}
