// cutune-bench-loader: what using a tuned kernel costs an application.
//
//   cutune-bench-loader first-launch --t0-ns NS [--winners W] [--kernel reduction] [--problem n=16777216]
//       One process start: loader, load (select, compile or cache, module), one launch,
//       synchronize. Prints one JSON object: ms from NS (CLOCK_REALTIME taken by the
//       script right before exec) and from main() to the finished first launch, per phase,
//       and the compile statistics (cold cache: 1 NVRTC compile; warm: 0).
//   cutune-bench-loader overhead [--kernel reduction] [--problem n=1024] [--launches 200000]
//       Host time per launch of TunedKernel::launch against cuLaunchKernel of the same
//       function and parameters, interleaved in batches; prints one JSON object.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/problem.hpp"

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kMainStart = Clock::now();

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// The reduction template's arguments (out, in, workspace, counter: zeroed; n).
struct Arguments {
  std::vector<cutune::cuda::DeviceBuffer> buffers;
  std::vector<CUdeviceptr> pointers;
  std::vector<std::int32_t> scalars;
  std::vector<void*> args;
};

Arguments reduction_arguments(int n) {
  Arguments a;
  const std::size_t sizes[] = {4, std::size_t(n) * 4, std::size_t((n + 31) / 32) * 4, 4};
  for (std::size_t s : sizes) {
    a.buffers.emplace_back(s);
    CUTUNE_CU(CU_FN(cuMemsetD8Async)(a.buffers.back().get(), 0, s, nullptr));
  }
  for (auto& b : a.buffers) a.pointers.push_back(b.get());
  a.scalars.push_back(n);
  for (auto& p : a.pointers) a.args.push_back(&p);
  a.args.push_back(&a.scalars[0]);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  return a;
}

int parse_n(const std::string& problem) {
  if (!problem.starts_with("n=")) throw std::invalid_argument("--problem: this benchmark takes n=N (reduction)");
  return std::stoi(problem.substr(2));
}

int first_launch(const cutune::loader::LoaderOptions& options, const std::string& kernel, const std::string& problem,
                 std::int64_t t0_ns) {
  auto t = Clock::now();
  cutune::loader::Loader loader(options);
  const double construct_ms = ms_since(t);
  t = Clock::now();
  auto k = loader.load(kernel, problem);
  const double load_ms = ms_since(t);
  t = Clock::now();
  Arguments a = reduction_arguments(parse_n(problem));  // the application's data: not the loader's cost
  const double data_ms = ms_since(t);
  t = Clock::now();
  k->launch(a.args);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  const double launch_ms = ms_since(t);
  const double from_main_ms = ms_since(kMainStart);
  const double from_exec_ms = t0_ns > 0 ? double(realtime_ns() - t0_ns) / 1e6 : 0.0;
  const auto st = loader.stats();
  nlohmann::ordered_json j{{"kernel", kernel},
                           {"problem", problem},
                           {"rung", cutune::loader::rung_name(k->selection().rung)},
                           {"config", k->selection().config_key},
                           {"from_exec_ms", from_exec_ms},
                           {"from_main_ms", from_main_ms},
                           {"data_ms", data_ms},
                           {"from_exec_without_data_ms", from_exec_ms - data_ms},
                           {"loader_ms", construct_ms},
                           {"load_ms", load_ms},
                           {"first_launch_sync_ms", launch_ms},
                           {"nvrtc_compiles", st.nvrtc_compiles},
                           {"cache_hits", st.cache_hits},
                           {"compile_ms", st.compile_ms}};
  std::cout << j.dump() << '\n';
  return 0;
}

int overhead(const cutune::loader::LoaderOptions& options, const std::string& kernel, const std::string& problem,
             long launches) {
  cutune::loader::Loader loader(options);
  auto k = loader.load(kernel, problem);
  const auto& c = k->compiled();
  // The raw side: the same cubin loaded as its own module, the same geometry.
  cutune::cuda::Module module(c.cubin);
  Arguments a = reduction_arguments(parse_n(problem));
  CUfunction f = module.function(kernel);
  // The geometry from the model's plan, as the loader's launch uses it.
  const auto& p = *c.problem;
  const auto plan = p.plan(cutune::Config{c.config_index}, p.instantiate(problem));
  if (plan.size() != 1) throw std::invalid_argument("overhead: pick a configuration with one launch");
  const auto g = plan[0].geometry;
  const auto raw_launch = cutune::cuda::Driver::get().cuLaunchKernel;
  constexpr long kBatch = 1000;
  std::vector<double> loader_us, raw_us;
  for (long done = 0; done < launches; done += kBatch) {
    auto t = Clock::now();
    for (long i = 0; i < kBatch; ++i) k->launch(a.args);
    loader_us.push_back(ms_since(t) * 1e3 / kBatch);
    CUTUNE_CU(CU_FN(cuCtxSynchronize)());
    t = Clock::now();
    for (long i = 0; i < kBatch; ++i)
      CUTUNE_CU(raw_launch(f, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2],
                           g.dynamic_shared_bytes, nullptr, a.args.data(), nullptr));
    raw_us.push_back(ms_since(t) * 1e3 / kBatch);
    CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double l = median(loader_us), r = median(raw_us);
  nlohmann::ordered_json j{{"kernel", kernel},       {"problem", problem},  {"config", k->selection().config_key},
                           {"launches", launches},   {"batch", kBatch},     {"loader_us_per_launch", l},
                           {"raw_us_per_launch", r}, {"overhead_us", l - r}, {"target_us", 1.0}};
  std::cout << j.dump() << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: cutune-bench-loader first-launch|overhead [options] (see the source)\n";
    return 2;
  }
  const std::string mode = argv[1];
  cutune::loader::LoaderOptions options;
  std::string kernel = "reduction", problem = mode == "overhead" ? "n=1024" : "n=16777216";
  std::int64_t t0_ns = 0;
  long launches = 200000;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--winners") options.winners = v;
    else if (a == "--kernel") kernel = v;
    else if (a == "--problem") problem = v;
    else if (a == "--t0-ns") t0_ns = std::stoll(v);
    else if (a == "--launches") launches = std::stol(v);
    else if (a == "--cache-dir") options.cache_dir = v;
    else {
      std::cerr << "cutune-bench-loader: unknown option " << a << '\n';
      return 2;
    }
  }
  std::string why;
  if (cutune::cuda::device_count(&why) == 0) {
    std::cerr << "cutune-bench-loader: no GPU here (" << why << ")\n";
    return 3;
  }
  try {
    if (mode == "first-launch") return first_launch(options, kernel, problem, t0_ns);
    if (mode == "overhead") return overhead(options, kernel, problem, launches);
  } catch (const std::exception& e) {
    std::cerr << "cutune-bench-loader: " << e.what() << '\n';
    return 1;
  }
  std::cerr << "cutune-bench-loader: unknown mode " << mode << '\n';
  return 2;
}
