// GpuWorker with two evaluations in flight (issue 5), against a fake worker process that
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

}  // namespace

TEST_CASE("GpuWorker: two in flight, a failing first evaluation does not take the second with it",
          "[runner][worker]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  std::vector<Config> configs;
  p.space().for_each_valid([&](const Config& c) {
    configs.push_back(c);
    return configs.size() < 3;
  });
  REQUIRE(configs.size() == 3);
  const std::string a = p.space().key(configs[0]), b = p.space().key(configs[1]);
  const std::vector<char> cubin(100000, 'x');  // larger than a default pipe's 64 KiB

  const std::string action = GENERATE(std::string("ok"), std::string("die"), std::string("hang"),
                                      std::string("sticky"));
  TempPath log("cutune-fake-worker-log");
  FakeWorkerEnv env(a + "=" + action, log.path().string());
  runner::GpuWorker w(p, "n=1024", 0, runner::MeasureOptions{}, 42);
  w.wait_ready();
  w.set_timeout(std::chrono::milliseconds(action == "hang" ? 500 : 20000));

  w.submit(configs[0], cubin, {}, std::nullopt);
  w.submit(configs[1], cubin, {}, std::nullopt);
  CHECK(w.in_flight() == 2);
  CHECK_THROWS_AS(w.submit(configs[2], cubin, {}, std::nullopt), std::logic_error);
  CHECK_THROWS_AS(w.evaluate(configs[2], cubin, {}, std::nullopt), std::logic_error);

  const runner::GpuEvaluation first = w.collect();
  const runner::GpuEvaluation second = w.collect();
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
  const runner::GpuEvaluation third = w.evaluate(configs[2], cubin, {}, std::nullopt);
  CHECK(third.status == Status::Ok);
}
