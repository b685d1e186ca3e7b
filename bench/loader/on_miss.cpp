// cutune-bench-on-miss: what tuning on first use (LoaderOptions::on_miss) costs and gains an
// application, on the lent GPU.
//
//   cutune-bench-on-miss --tuner PATH [--kernel reduction] [--problem n=16777216] [--budget 10]
//                        [--gap-ms 1] [--batch 1000] [--max-wait 120] [--out FILE]
//
// 1. first launch with on_miss off, 3 times (each a fresh loader and compile cache): load(),
//    one launch, synchronize;
// 2. the same with on_miss tune into a fresh DB: the first launch must not wait for the tuning;
// 3. the application goes on launching in batches (a gap between batches, as an application
//    that does other work leaves the GPU to the tuner) until the kernel switches to the tuned
//    winner: the time to the switch, the launches made before it, the host time per launch
//    before and after it, against cuLaunchKernel of the same function (the loader's overhead);
// 4. the GPU time per launch of the template default and of the winner (event-timed): what each
//    launch before the switch cost. Prints one JSON object (and writes it to --out).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using cutune::loader::TunedKernel;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Options {
  std::string kernel = "reduction", problem = "n=16777216";
  fs::path tuner, out, work;
  double budget_s = 10, gap_ms = 1, max_wait_s = 120;
  long batch = 1000;
};

/// The kernel's arguments on generated data (the T1 fills), on the GPU.
struct Arguments {
  std::vector<cutune::HostArgument> host;
  std::vector<cutune::cuda::DeviceBuffer> buffers;
  std::vector<CUdeviceptr> pointers;
  std::vector<void*> args;
  Arguments(const cutune::KernelProblem& p, const std::string& problem) {
    host = cutune::make_host_arguments(p, p.instantiate(problem), 7);
    buffers.resize(host.size());
    pointers.resize(host.size());
    args.resize(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      if (!host[i].spec->is_vector) {
        args[i] = host[i].bytes.data();
        continue;
      }
      buffers[i] = cutune::cuda::DeviceBuffer(host[i].bytes.size());
      buffers[i].upload(host[i].bytes.data(), host[i].bytes.size());
      pointers[i] = buffers[i].get();
      args[i] = &pointers[i];
    }
  }
};

cutune::loader::LoaderOptions loader_options(const Options& o, const std::string& run, bool on_miss) {
  cutune::loader::LoaderOptions l;
  l.cache_dir = o.work / run / "cubins";  // a fresh cache: every first launch compiles the default
  cutune::loader::OnMiss m;
  if (on_miss) {
    m.mode = cutune::loader::OnMiss::Mode::Tune;
    m.budget_s = o.budget_s;
    m.db = o.work / run / "tuned.db";
    m.tuner = o.tuner;
    m.poll_s = 0.5;
  }
  l.on_miss = m;  // explicit: the environment does not decide for the benchmark
  return l;
}

/// load() and one launch, synchronized: what the application waits for before its first result.
nlohmann::ordered_json first_launch(cutune::loader::Loader& loader, const Options& o, const Arguments*& args,
                                    std::unique_ptr<Arguments>& keep, std::shared_ptr<const TunedKernel>& k) {
  auto t = Clock::now();
  k = loader.load(o.kernel, o.problem);
  const double load_ms = ms_since(t);
  if (!keep) keep = std::make_unique<Arguments>(*k->compiled().problem, o.problem);  // data: not the loader's cost
  args = keep.get();
  t = Clock::now();
  k->launch(args->args);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const double launch_ms = ms_since(t);
  return {{"load_ms", load_ms}, {"launch_sync_ms", launch_ms}, {"total_ms", load_ms + launch_ms},
          {"rung", cutune::loader::rung_name(k->selection().rung)}, {"config", k->selection().config_key}};
}

/// Host microseconds per launch of `launch` in one batch, synchronized after.
template <class F>
double batch_us(long n, F&& launch) {
  const auto t = Clock::now();
  for (long i = 0; i < n; ++i) launch();
  const double us = ms_since(t) * 1e3 / static_cast<double>(n);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  return us;
}

/// Host time per launch of the kernel as it is now, against cuLaunchKernel of the same cubin.
nlohmann::ordered_json overhead(const TunedKernel& k, const Arguments& a, long batch) {
  const auto& c = k.compiled();
  const auto& p = *c.problem;
  const auto plan = p.plan(cutune::Config{c.config_index}, p.instantiate(k.selection().problem));
  std::vector<double> loader_us, raw_us;
  if (plan.size() == 1) {
    cutune::cuda::Module module(c.cubin);
    CUfunction f = module.function(c.lowered_names.empty() ? p.name() : c.lowered_names[0]);
    const auto g = plan[0].geometry;
    const auto raw = cutune::cuda::Driver::get().cuLaunchKernel;
    void** params = const_cast<void**>(a.args.data());
    for (int r = 0; r < 20; ++r) {
      loader_us.push_back(batch_us(batch, [&] { k.launch(a.args); }));
      raw_us.push_back(batch_us(batch, [&] {
        CUTUNE_CU(raw(f, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], g.dynamic_shared_bytes,
                      nullptr, params, nullptr));
      }));
    }
  }
  const double l = median(loader_us), r = median(raw_us);
  return {{"config", k.selection().config_key}, {"loader_us_per_launch", l}, {"raw_us_per_launch", r},
          {"overhead_us", l - r}, {"batches", loader_us.size()}, {"batch", batch}};
}

/// GPU milliseconds per launch (events around 20 launches, median of 10).
double gpu_ms_per_launch(const TunedKernel& k, const Arguments& a) {
  CUevent start = nullptr, stop = nullptr;
  CUTUNE_CU(CU_FN(cuEventCreate)(&start, 0));
  CUTUNE_CU(CU_FN(cuEventCreate)(&stop, 0));
  std::vector<double> ms;
  for (int r = 0; r < 10; ++r) {
    CUTUNE_CU(CU_FN(cuEventRecord)(start, nullptr));
    for (int i = 0; i < 20; ++i) k.launch(a.args);
    CUTUNE_CU(CU_FN(cuEventRecord)(stop, nullptr));
    CUTUNE_CU(CU_FN(cuEventSynchronize)(stop));
    float t = 0;
    CUTUNE_CU(CU_FN(cuEventElapsedTime)(&t, start, stop));
    ms.push_back(t / 20.0);
  }
  CU_FN(cuEventDestroy)(start);
  CU_FN(cuEventDestroy)(stop);
  return median(ms);
}

/// Launches in batches until the kernel switches to an exact winner or max_wait_s passes.
nlohmann::ordered_json until_switch(const TunedKernel& k, const Arguments& a, const Options& o, Clock::time_point t0,
                                    std::vector<double>& before_us) {
  long launches = 0;
  while (k.selection().rung != cutune::loader::Rung::Exact && ms_since(t0) < o.max_wait_s * 1e3) {
    before_us.push_back(batch_us(o.batch, [&] { k.launch(a.args); }));
    launches += o.batch;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.gap_ms));
  }
  const bool switched = k.selection().rung == cutune::loader::Rung::Exact;
  return {{"switched", switched}, {"time_to_winner_s", switched ? ms_since(t0) / 1e3 : -1.0},
          {"launches_before_switch", launches}, {"selection_after", k.selection().describe()}};
}

int run(const Options& o) {
  nlohmann::ordered_json doc{{"what", "cutune::loader tuned on first use (bench/loader/on_miss.cpp)"},
                             {"kernel", o.kernel}, {"problem", o.problem}, {"budget_s", o.budget_s},
                             {"gap_ms", o.gap_ms}, {"batch", o.batch}};
  {
    // The CUDA context and the driver's first module load outside the figures below.
    cutune::loader::Loader warm(loader_options(o, "warm-up", false));
    warm.load("vector_add", "n=1024");
  }
  const Arguments* args = nullptr;
  std::unique_ptr<Arguments> keep;
  nlohmann::ordered_json off = nlohmann::ordered_json::array();
  std::shared_ptr<const TunedKernel> k_default;
  std::vector<std::unique_ptr<cutune::loader::Loader>> off_loaders;
  for (int i = 0; i < 3; ++i) {
    off_loaders.push_back(std::make_unique<cutune::loader::Loader>(loader_options(o, fmt::format("off{}", i), false)));
    off.push_back(first_launch(*off_loaders.back(), o, args, keep, k_default));
  }
  doc["first_launch_off"] = off;
  cutune::loader::Loader on_loader(loader_options(o, "on", true));
  std::shared_ptr<const TunedKernel> k;
  const auto t0 = Clock::now();
  doc["first_launch_on"] = first_launch(on_loader, o, args, keep, k);
  doc["selection_before"] = k->selection().describe();
  std::vector<double> before_us;
  doc["until_switch"] = until_switch(*k, *args, o, t0, before_us);
  doc["launch_us_before_switch_median"] = median(before_us);
  doc["overhead_after_switch"] = overhead(*k, *args, o.batch);
  doc["overhead_default_on_miss_off"] = overhead(*k_default, *args, o.batch);
  const double default_ms = gpu_ms_per_launch(*k_default, *args), winner_ms = gpu_ms_per_launch(*k, *args);
  const long delayed = doc["until_switch"]["launches_before_switch"].get<long>();
  doc["gpu_ms_per_launch"] = {{"template_default", default_ms}, {"winner", winner_ms},
                              {"delayed_launches_extra_ms", static_cast<double>(delayed) * (default_ms - winner_ms)}};
  std::cout << doc.dump() << '\n';
  if (!o.out.empty()) std::ofstream(o.out) << doc.dump(2) << '\n';
  return doc["until_switch"]["switched"].get<bool>() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--tuner") o.tuner = v;
    else if (a == "--kernel") o.kernel = v;
    else if (a == "--problem") o.problem = v;
    else if (a == "--budget") o.budget_s = std::stod(v);
    else if (a == "--gap-ms") o.gap_ms = std::stod(v);
    else if (a == "--batch") o.batch = std::stol(v);
    else if (a == "--max-wait") o.max_wait_s = std::stod(v);
    else if (a == "--out") o.out = v;
    else {
      std::cerr << "cutune-bench-on-miss: unknown option " << a << '\n';
      return 2;
    }
  }
  if (o.tuner.empty()) {
    std::cerr << "cutune-bench-on-miss: --tuner PATH (the cutune command) is required\n";
    return 2;
  }
  std::string why;
  if (cutune::cuda::device_count(&why) == 0) {
    std::cerr << "cutune-bench-on-miss: no GPU here (" << why << ")\n";
    return 3;
  }
  o.work = fs::temp_directory_path() / fmt::format("cutune-bench-on-miss-{}", ::getpid());
  fs::create_directories(o.work);
  int rc = 1;
  try {
    rc = run(o);
  } catch (const std::exception& e) {
    std::cerr << "cutune-bench-on-miss: " << e.what() << '\n';
  }
  std::error_code ec;
  fs::remove_all(o.work, ec);
  return rc;
}
