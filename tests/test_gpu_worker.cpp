// GpuWorker with two evaluations in flight, against a fake worker process that
// needs no GPU (fake_gpu_worker.cpp): a crash, a hang and a sticky error in the first
// evaluation must fail that one alone, and the one queued behind it must be answered by the
// restarted worker. The real worker's faults are the [gpu] fault-injection test's.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <vector>

#include "cutune/runner/gpu_worker.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;

namespace {

/// Points GpuWorker at the fake for one test (and back: other tests start real workers).
struct FakeWorkerEnv {
  FakeWorkerEnv(const std::string& script, const std::string& log) {
    ::setenv("CUTUNE_WORKER", FAKE_GPU_WORKER_PATH, 1);
    ::setenv("FAKE_GPU_WORKER_SCRIPT", script.c_str(), 1);
    ::setenv("FAKE_GPU_WORKER_LOG", log.c_str(), 1);
  }
  ~FakeWorkerEnv() {
    for (const char* v : {"CUTUNE_WORKER", "FAKE_GPU_WORKER_SCRIPT", "FAKE_GPU_WORKER_LOG"}) ::unsetenv(v);
  }
};

/// The log's lines as (pid, config key), in the order the fake workers started them.
std::vector<std::pair<std::string, std::string>> started(const std::filesystem::path& log) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(log);
  for (std::string pid, key; in >> pid >> key;) out.emplace_back(pid, key);
  return out;
}

/// The first `n` valid configurations, in the space's order.
std::vector<Config> first_valid(const Space& space, std::size_t n) {
  std::vector<Config> out;
  space.for_each_valid([&](const Config& c) {
    out.push_back(c);
    return out.size() < n;
  });
  return out;
}

}  // namespace

TEST_CASE("GpuWorker: two in flight, a failing first evaluation does not take the second with it",
          "[runner][worker]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  const std::vector<Config> configs = first_valid(p.space(), 3);
  REQUIRE(configs.size() == 3);
  const std::string a = p.space().key(configs[0]), b = p.space().key(configs[1]);
  const std::vector<char> cubin(100000, 'x');  // larger than a default pipe's 64 KiB

  const std::string action = GENERATE(std::string("ok"), std::string("die"), std::string("hang"),
                                      std::string("sticky"));
  TempPath log("cutune-fake-worker-log");
  FakeWorkerEnv env(a + "=" + action, log.path().string());
  runner::GpuWorker w(p, "n=1024", 0, worker::MeasureOptions{}, 42);
  w.wait_ready();
  w.set_timeout(std::chrono::milliseconds(action == "hang" ? 500 : 20000));

  w.submit(configs[0], cubin, {}, std::nullopt);
  w.submit(configs[1], cubin, {}, std::nullopt);
  CHECK(w.in_flight() == 2);
  CHECK_THROWS_AS(w.submit(configs[2], cubin, {}, std::nullopt), std::logic_error);
  CHECK_THROWS_AS(w.evaluate(configs[2], cubin, {}, std::nullopt), std::logic_error);

  const GpuEvaluation first = w.collect();
  const GpuEvaluation second = w.collect();
  CHECK(w.in_flight() == 0);
  INFO("action " << action << ": first " << status_name(first.status) << " (" << first.error << ")");
  const std::map<std::string, Status> expected{
      {"ok", Status::Ok}, {"die", Status::Runtime}, {"hang", Status::Timeout},
      {"sticky", Status::Runtime}};
  CHECK(first.status == expected.at(action));
  CHECK(second.status == Status::Ok);
  CHECK(w.restarts() == (action == "ok" ? 0u : 1u));

  const auto runs = started(log.path());
  REQUIRE(runs.size() == 2);  // each evaluation started exactly once
  CHECK(runs[0].second == a);
  CHECK(runs[1].second == b);
  // After a failure the second ran in the restarted worker, else in the same one.
  if (action == "ok")
    CHECK(runs[1].first == runs[0].first);
  else
    CHECK(runs[1].first != runs[0].first);

  // And the worker goes on with one at a time as before.
  const GpuEvaluation third = w.evaluate(configs[2], cubin, {}, std::nullopt);
  CHECK(third.status == Status::Ok);
}

TEST_CASE("GpuWorker: a restarted worker first learns the expected output from the configuration that defined it",
          "[runner][worker]") {
  // Verified against the default configuration: the first configuration that runs defines
  // the expected output in the worker (GpuEvaluation::defined_expected). A worker that dies
  // takes that answer with it; its successor must be given the same configuration before
  // anything else, or a later configuration would define a different answer.
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  const std::vector<Config> configs = first_valid(p.space(), 3);
  REQUIRE(configs.size() == 3);
  const std::string a = p.space().key(configs[0]), b = p.space().key(configs[1]), c = p.space().key(configs[2]);
  TempPath log("cutune-fake-worker-log");
  FakeWorkerEnv env(b + "=die", log.path().string());
  worker::MeasureOptions options;
  options.verify = {"default"};
  runner::GpuWorker w(p, "n=1024", 0, options, 42);
  w.wait_ready();
  CHECK(w.verification().any(VerifyMode::Default));
  CHECK(w.verification_source() == "default configuration");
  const std::vector<char> cubin(16, 'x');

  const GpuEvaluation first = w.evaluate(configs[0], cubin, {}, std::nullopt);
  CHECK(first.status == Status::Ok);
  CHECK(first.defined_expected);
  const GpuEvaluation second = w.evaluate(configs[1], cubin, {}, std::nullopt);
  CHECK(second.status == Status::Runtime);
  CHECK(w.restarts() == 1);
  const GpuEvaluation third = w.evaluate(configs[2], cubin, {}, std::nullopt);
  CHECK(third.status == Status::Ok);
  CHECK_FALSE(third.defined_expected);  // the restarted worker had learnt it already

  const auto runs = started(log.path());
  REQUIRE(runs.size() == 4);
  CHECK(runs[0] == std::pair{runs[0].first, a});
  CHECK(runs[1] == std::pair{runs[0].first, b});
  CHECK(runs[2].first != runs[0].first);  // the successor...
  CHECK(runs[2].second == a);             // ...learns the answer from the first configuration
  CHECK(runs[3] == std::pair{runs[2].first, c});
}
