// The compile pool: order, failures as data, process and thread workers, the
// persistent cubin cache, shared compiles of launch-only variants, a dying worker. All
// CPU: NVRTC needs no GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "cutune/runner/compile_pool.hpp"
#include "cutune/model/errors.hpp"
#include "space_helpers.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;

namespace {


std::vector<runner::CompiledConfig> compile_all(runner::CompilePool& pool, const std::vector<Config>& configs) {
  for (const auto& c : configs) pool.submit(c);
  std::vector<runner::CompiledConfig> out;
  while (auto done = pool.next()) out.push_back(std::move(*done));
  return out;
}

// The pool hands results out as they are ready: sorted back into `configs`' order (each
// configuration once) to compare two runs.
std::vector<runner::CompiledConfig> in_order(std::vector<runner::CompiledConfig> done, const std::vector<Config>& configs) {
  std::vector<runner::CompiledConfig> out;
  for (const auto& c : configs) {
    auto it = std::find_if(done.begin(), done.end(), [&](const runner::CompiledConfig& d) { return d.config == c; });
    REQUIRE(it != done.end());
    out.push_back(std::move(*it));
    done.erase(it);
  }
  return out;
}

}  // namespace

TEST_CASE("the compile pool returns the first submission first, then each configuration once, failures as data", "[runner][jit]") {
  KernelProblem p = KernelProblem::load(testing::test_data_dir() / "faulty/faulty.json");
  const Space& s = p.space();
  const auto mode = GENERATE(runner::CompilePoolOptions::Mode::Process, runner::CompilePoolOptions::Mode::Thread);
  runner::CompilePoolOptions o;
  o.workers = 3;
  o.capacity = 2;  // smaller than the worker count: the bound must hold without deadlock
  o.mode = mode;
  runner::CompilePool pool(p, "sm_90", o);
  const auto submitted = testing::valid_configs(s);
  REQUIRE(submitted.size() >= 8);
  const auto done = compile_all(pool, submitted);
  REQUIRE(done.size() == submitted.size());
  CHECK(done.front().config == submitted.front());  // the default: baseline and reference
  std::multiset<Config> in(submitted.begin(), submitted.end()), out;
  for (const auto& d : done) out.insert(d.config);
  CHECK(in == out);
  for (std::size_t i = 0; i < done.size(); ++i) {
    const bool mode1 = s.value(done[i].config, s.index_of("mode")).as_int() == 1;
    CHECK(done[i].result.ok == !mode1);
    if (mode1) CHECK(done[i].result.log.find("deliberate compile error") != std::string::npos);
    if (!mode1) CHECK(done[i].result.cubin.size() > 100);
  }
  CHECK(pool.pending() == 0);
  CHECK(pool.stats().compiled == submitted.size());
  CHECK(pool.stats().worker_restarts == 0);
}

TEST_CASE("a second pool over the same space compiles nothing: the persistent cubin cache", "[runner][jit]") {
  KernelProblem p = KernelProblem::load(testing::template_json("vector_add"));
  TempPath cache("cutune-cubins");
  runner::CompilePoolOptions o;
  o.workers = 2;
  o.cache_dir = cache.path();
  auto configs = testing::valid_configs(p.space());
  if (configs.size() > 12) configs.resize(12);
  std::vector<runner::CompiledConfig> first, second;
  {
    runner::CompilePool pool(p, "sm_90", o);
    first = in_order(compile_all(pool, configs), configs);
    CHECK(pool.stats().compiled + pool.stats().shared == configs.size());
    CHECK(pool.stats().cache_hits == 0);
  }
  {
    runner::CompilePool pool(p, "sm_90", o);
    second = in_order(compile_all(pool, configs), configs);
    CHECK(pool.stats().compiled == 0);
    CHECK(pool.stats().cache_hits + pool.stats().shared == configs.size());
  }
  REQUIRE(first.size() == second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].key == second[i].key);
    CHECK(first[i].result.cubin == second[i].result.cubin);
    CHECK(second[i].result.ok);
  }
  // Another architecture is another key: compiled again.
  runner::CompilePool other(p, "sm_80", o);
  compile_all(other, {configs.front()});
  CHECK(other.stats().compiled == 1);
}

TEST_CASE("configurations that differ only in launch-only parameters share one compile", "[runner][jit]") {
  KernelProblem p = KernelProblem::load(testing::test_data_dir() / "launch_only/launch_only.json");
  REQUIRE_FALSE(p.launch_only_parameters().empty());
  const auto configs = testing::valid_configs(p.space());
  std::set<std::string> sources;
  for (const auto& c : configs) sources.insert(p.configured_source(c));
  REQUIRE(sources.size() < configs.size());
  TempPath cache("cutune-cubins");
  runner::CompilePoolOptions o;
  o.workers = 4;
  o.cache_dir = cache.path();
  runner::CompilePool pool(p, "sm_90", o);
  const auto done = compile_all(pool, configs);
  REQUIRE(done.size() == configs.size());
  const auto st = pool.stats();
  CHECK(st.compiled == sources.size());
  CHECK(st.shared + st.cache_hits == configs.size() - sources.size());
  for (const auto& d : done) CHECK(d.result.ok);
}

TEST_CASE("a compile worker that dies is a failure of that configuration, not of the pool", "[runner][jit]") {
  KernelProblem p = KernelProblem::load(testing::test_data_dir() / "faulty/faulty.json");
  TempPath cache("cutune-cubins");
  const char* old = std::getenv("CUTUNE_WORKER");
  const std::string saved = old ? old : "";
  ::setenv("CUTUNE_WORKER", "/bin/false", 1);  // exits at once, like a crashed worker
  runner::CompilePoolOptions o;
  o.workers = 1;
  o.cache_dir = cache.path();
  std::vector<runner::CompiledConfig> done;
  {
    runner::CompilePool pool(p, "sm_90", o);
    done = compile_all(pool, {p.space().default_config()});
    CHECK(pool.stats().worker_restarts == 1);
  }
  if (old) ::setenv("CUTUNE_WORKER", saved.c_str(), 1);
  else ::unsetenv("CUTUNE_WORKER");
  REQUIRE(done.size() == 1);
  CHECK_FALSE(done[0].result.ok);
  CHECK(done[0].result.error.find("compile worker died") != std::string::npos);
  // Not cached: the same configuration compiles for real afterwards.
  runner::CompilePool pool(p, "sm_90", o);
  done = compile_all(pool, {p.space().default_config()});
  CHECK(done[0].result.ok);
  CHECK(pool.stats().compiled == 1);
}

TEST_CASE("compile modes parse", "[runner]") {
  CHECK(runner::parse_compile_mode("process") == runner::CompilePoolOptions::Mode::Process);
  CHECK(runner::parse_compile_mode("thread") == runner::CompilePoolOptions::Mode::Thread);
  CHECK_THROWS_AS(runner::parse_compile_mode("fork"), InputError);
}

TEST_CASE("drop_pending: nothing submitted before comes out, and the pool compiles again", "[runner][jit]") {
  // A tuning out of time drops its queue and then compiles its finalists in the same pool:
  // next() once returned a configuration queued before the drop instead of the finalist.
  KernelProblem p = KernelProblem::load(testing::test_data_dir() / "faulty/faulty.json");
  const auto submitted = testing::valid_configs(p.space());
  REQUIRE(submitted.size() >= 8);
  runner::CompilePoolOptions o;
  o.workers = 2;
  runner::CompilePool pool(p, "sm_90", o);
  for (const auto& c : submitted) pool.submit(c);
  pool.drop_pending();
  CHECK(pool.pending() == 0);
  const Config& last = submitted.back();
  pool.submit(last);
  auto got = pool.next();
  REQUIRE(got);
  CHECK(got->config == last);
  CHECK_FALSE(pool.next());
}
