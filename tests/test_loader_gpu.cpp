// cutune::loader on a GPU ([gpu]): tuned reduction and matmul configurations launched
// through the loader on generated data and checked against the CPU references; a borrowed
// configuration checked on first use; many threads loading one kernel compile it once; a
// kernel tuned on first use switching to its winner while the application launches it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <thread>
#include <chrono>

#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/templates/references.hpp"
#include "test_paths.hpp"

using namespace cutune;
using cutune::testing::TempPath;

namespace {

/// A DB whose only winner is `config` for (kernel, problem) on `device`.
void store_winner(const std::filesystem::path& path, const KernelProblem& p, const DeviceIdentity& device,
                  const std::string& problem, const Config& c) {
  db::Store s = db::Store::open(path, true);
  const ProblemInstance inst = p.instantiate(problem);
  db::RunSpec spec;
  spec.device = device;
  spec.kernel = p.name();
  spec.source_hash = "gpu-test";
  spec.problem_key = inst.key();
  spec.problem_json = inst.json();
  db::Run run = s.begin_run(spec);
  nlohmann::ordered_json j;
  for (const auto& [name, v] : p.space().assignments(c)) j[name] = v.to_int();
  db::WinnerChoice w;
  w.config = ResultConfig(p.space().key(c), parameter_values(j));
  w.median_ms = 1.0;
  run.set_winner(w);
  run.end();
}

/// Launches `k` on generated data and compares every output with the CPU reference.
void check_against_reference(const loader::TunedKernel& k, const KernelProblem& p, const std::string& problem) {
  const ProblemInstance inst = p.instantiate(problem);
  std::vector<HostArgument> host = make_host_arguments(p, inst, 7);
  std::vector<cuda::DeviceBuffer> buffers(host.size());
  std::vector<CUdeviceptr> pointers(host.size());
  std::vector<void*> args(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!host[i].spec->is_vector) {
      args[i] = host[i].bytes.data();
      continue;
    }
    buffers[i] = cuda::DeviceBuffer(host[i].bytes.size());
    buffers[i].upload(host[i].bytes.data(), host[i].bytes.size());
    pointers[i] = buffers[i].get();
    args[i] = &pointers[i];
  }
  k.launch(args);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  std::vector<HostArgument> expected = host;
  templates::find_reference(p.reference())(inst, expected);
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!host[i].spec->output) continue;
    HostArgument got = host[i];
    buffers[i].download(got.bytes.data(), got.bytes.size());
    const VerifyResult v = compare(expected[i], got, p.tolerance());
    INFO(v.message);
    CHECK(v.ok);
  }
}

/// The first valid configuration whose assignments include all of `wanted` ("k=v,...").
Config valid_with(const KernelProblem& p, const std::string& wanted) {
  const Config want = p.space().parse_assignments(wanted);
  std::vector<std::size_t> named;
  for (std::size_t i = 0; i < want.index.size(); ++i)
    if (wanted.find(p.space().parameters()[i].name + "=") != std::string::npos) named.push_back(i);
  Config found;
  p.space().for_each_valid([&](const Config& c) {
    for (std::size_t i : named)
      if (c.index[i] != want.index[i]) return true;
    found = c;
    return false;
  });
  REQUIRE_FALSE(found.index.empty());
  return found;
}

DeviceIdentity this_gpu() {
  DeviceIdentity d = cuda::identify(0);
  d.nvrtc_version = jit::nvrtc_version();
  return d;
}

}  // namespace

TEST_CASE("loader: tuned reduction and matmul launch and verify", "[gpu]") {
  const KernelProblem reduction = KernelProblem::load(testing::template_json("reduction"));
  const KernelProblem matmul = KernelProblem::load(testing::template_json("matmul"));
  TempPath db("cutune-loader-gpu.db"), cache("cutune-loader-gpu-cache");
  const DeviceIdentity d = this_gpu();
  // Non-default winners, so the loader's configuration is not the default by accident.
  store_winner(db.path(), reduction, d, "n=1000003", valid_with(reduction, "block_size_x=512,elements_per_thread=4,vector_width=1,combine=1"));
  store_winner(db.path(), matmul, d, "m=512,n=384,k=256", valid_with(matmul, "block_size_x=32,async_stages=0"));
  loader::LoaderOptions o;
  o.winners = db.path();
  o.template_dir = testing::template_dir();
  o.cache_dir = cache.path();
  loader::Loader l(o);
  auto r = l.load("reduction", "n=1000003");
  CHECK(r->selection().rung == loader::Rung::Exact);
  CHECK_THAT(r->selection().config_key, Catch::StartsWith("512,"));
  check_against_reference(*r, reduction, "n=1000003");
  // Nearest problem: the same configuration at another size, still correct.
  auto r2 = l.load("reduction", "n=777");
  CHECK(r2->selection().rung == loader::Rung::NearestProblem);
  check_against_reference(*r2, reduction, "n=777");
  auto m = l.load("matmul", "m=512,n=384,k=256");
  CHECK(m->selection().rung == loader::Rung::Exact);
  check_against_reference(*m, matmul, "m=512,n=384,k=256");
  CHECK(l.load("matmul", "m=512,n=384,k=256") == m);  // memoised
  CHECK_THROWS_AS(m->launch(std::vector<void*>(2)), std::invalid_argument);
}

TEST_CASE("loader: a configuration borrowed from another GPU is checked on first use", "[gpu]") {
  const KernelProblem reduction = KernelProblem::load(testing::template_json("reduction"));
  TempPath db("cutune-loader-borrow.db"), cache("cutune-loader-borrow-cache");
  DeviceIdentity other = this_gpu();
  other.name += " (another board)";
  other.uuid = "GPU-another";
  store_winner(db.path(), reduction, other, "n=65536", valid_with(reduction, "block_size_x=128,elements_per_thread=2"));
  loader::LoaderOptions o;
  o.winners = db.path();
  o.template_dir = testing::template_dir();
  o.cache_dir = cache.path();
  o.verify_borrowed = true;
  loader::Loader l(o);
  auto k = l.load("reduction", "n=65536");
  CHECK(k->selection().rung == loader::Rung::SameComputeCapability);
  CHECK_THAT(k->selection().check, Catch::StartsWith("passed"));
  check_against_reference(*k, reduction, "n=65536");
}

TEST_CASE("loader: threads loading one kernel compile and load it once", "[gpu]") {
  TempPath cache("cutune-loader-threads-cache");
  loader::LoaderOptions o;
  o.template_dir = testing::template_dir();
  o.cache_dir = cache.path();
  loader::Loader l(o);
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const loader::TunedKernel>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { got[t] = l.load("reduction", "n=4096"); });
  for (auto& t : threads) t.join();
  CHECK(l.stats().nvrtc_compiles == 1);
  for (const auto& g : got) CHECK(g == got[0]);
}

namespace {

/// The cutune beside this test binary (the lent GPU gets both copied to one folder), else the build tree's.
std::filesystem::path cutune_cli() {
  std::error_code ec;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "cutune";
  return std::filesystem::exists(beside) ? beside : std::filesystem::path(CUTUNE_CLI_PATH);
}

}  // namespace

TEST_CASE("loader: tuned on first use, load() returns at once and the kernel switches to the tuned winner", "[gpu]") {
  using Clock = std::chrono::steady_clock;
  const KernelProblem reduction = KernelProblem::load(testing::template_json("reduction"));
  const std::string problem = "n=1048576";
  TempPath dir("cutune-on-miss-gpu");
  std::filesystem::create_directories(dir.path());
  loader::OnMiss on_miss;
  on_miss.mode = loader::OnMiss::Mode::Tune;
  on_miss.budget_s = 3;
  on_miss.db = dir.path() / "tuned.db";
  on_miss.tuner = cutune_cli();
  on_miss.poll_s = 0.5;
  loader::LoaderOptions o;
  o.template_dir = testing::template_dir();
  o.cache_dir = dir.path() / "cubins";
  o.on_miss = on_miss;
  loader::Loader l(o);
  const auto t0 = Clock::now();
  auto k = l.load("reduction", problem);
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(k->selection().describe());
  CHECK(k->selection().rung == loader::Rung::TemplateDefault);
  CHECK(load_s < on_miss.budget_s);  // it did not wait for the tuning
  // The application keeps launching (on generated data) while the tuner works.
  const ProblemInstance inst = reduction.instantiate(problem);
  std::vector<HostArgument> host = make_host_arguments(reduction, inst, 7);
  std::vector<cuda::DeviceBuffer> buffers(host.size());
  std::vector<CUdeviceptr> pointers(host.size());
  std::vector<void*> args(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!host[i].spec->is_vector) {
      args[i] = host[i].bytes.data();
      continue;
    }
    buffers[i] = cuda::DeviceBuffer(host[i].bytes.size());
    buffers[i].upload(host[i].bytes.data(), host[i].bytes.size());
    pointers[i] = buffers[i].get();
    args[i] = &pointers[i];
  }
  const double deadline_s = on_miss.budget_s + 120;  // the tuner's start, compiles and finalists on top
  std::size_t launches = 0;
  while (k->selection().rung != loader::Rung::Exact &&
         std::chrono::duration<double>(Clock::now() - t0).count() < deadline_s) {
    k->launch(args);
    if (++launches % 100 == 0) {
      CUTUNE_CU(CU_FN(cuCtxSynchronize)());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const double switched_s = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(k->selection().describe() << " after " << launches << " launches, " << switched_s << " s");
  REQUIRE(k->selection().rung == loader::Rung::Exact);
  CHECK(launches > 0);
  CHECK(switched_s > load_s);
  CHECK_THAT(k->selection().on_miss, Catch::Contains("tuned on first use"));
  check_against_reference(*k, reduction, problem);  // the winner it switched to computes the right result
  // The application's next start finds the winner exact, tuning nothing.
  loader::Loader again(o);
  auto k2 = again.load("reduction", problem);
  CHECK(k2->selection().rung == loader::Rung::Exact);
  CHECK(k2->selection().on_miss.empty());
  CHECK(again.wait_for_background(0.1));
}
