// An application that uses tuned kernels through cutune::loader: a float sum
// (the reduction template) and an SGEMM (the matmul template). For each: allocate and fill
// the data, load the tuned kernel (the winners of a cutune DB or wisdom file, with the
// fallback ladder), launch it, check the result against the CPU, and time the tuned
// winner against the template default with CUDA events.
//
//   cutune-example [--winners app.wisdom.json] [--n 16777216] [--mnk 2048] [--json out.json]
//
// Exit codes: 0 results correct; 1 a wrong result; 2 bad arguments; 3 no GPU here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/loader/loader.hpp"

namespace {

using cutune::cuda::DeviceBuffer;
using cutune::loader::Loader;
using cutune::loader::TunedKernel;

/// Median milliseconds per launch of `launch`: 3 warm-up launches, then `reps` event pairs.
template <class F>
double time_ms(F&& launch, int reps = 30) {
  for (int i = 0; i < 3; ++i) launch();
  cutune::cuda::Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    start.record();
    launch();
    stop.record();
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

nlohmann::json report(const TunedKernel& tuned, double tuned_ms, double default_ms, bool ok) {
  const auto& s = tuned.selection();
  return {{"selection", s.describe()},    {"rung", static_cast<int>(s.rung)},
          {"rung_name", rung_name(s.rung)}, {"config", s.config_key},
          {"tuned_on", s.tuned_gpu},      {"tuned_problem", s.tuned_problem},
          {"tuned_ms", tuned_ms},         {"default_ms", default_ms},
          {"speedup", tuned_ms > 0 ? default_ms / tuned_ms : 0.0}, {"correct", ok}};
}

/// Sum of n floats: out[0] = sum(in).
nlohmann::json run_reduction(Loader& tuned_loader, Loader& default_loader, int n) {
  const std::string problem = "n=" + std::to_string(n);
  auto tuned = tuned_loader.load("reduction", problem);
  auto fallback = default_loader.load("reduction", problem);
  std::cout << "reduction: " << tuned->selection().describe() << '\n';

  const std::vector<float> in = random_floats(static_cast<std::size_t>(n), 1);
  DeviceBuffer d_in(in.size() * sizeof(float)), d_out(sizeof(float));
  DeviceBuffer d_work(static_cast<std::size_t>((n + 31) / 32) * sizeof(float)), d_counter(sizeof(std::uint32_t));
  d_in.upload(in.data(), in.size() * sizeof(float));
  const std::uint32_t zero = 0;
  d_counter.upload(&zero, sizeof zero);
  CUdeviceptr out = d_out.get(), inp = d_in.get(), work = d_work.get(), counter = d_counter.get();
  void* args[] = {&out, &inp, &work, &counter, &n};  // the T1 arguments, in order

  tuned->launch(args);
  float got = 0;
  d_out.download(&got, sizeof got);
  double expected = 0;
  for (float x : in) expected += x;
  const bool ok = std::abs(got - expected) <= 1e-5 * std::abs(expected);
  std::printf("  sum %.6g, CPU %.6g: %s\n", got, expected, ok ? "correct" : "WRONG");

  const double t_tuned = time_ms([&] { tuned->launch(args); });
  const double t_default = time_ms([&] { fallback->launch(args); });
  std::printf("  tuned %.4f ms, template default %.4f ms: %.3fx\n", t_tuned, t_default, t_default / t_tuned);
  return report(*tuned, t_tuned, t_default, ok);
}

/// C = A * B, all size x size, row-major.
nlohmann::json run_matmul(Loader& tuned_loader, Loader& default_loader, int size) {
  const std::string problem = "m=" + std::to_string(size) + ",n=" + std::to_string(size) + ",k=" + std::to_string(size);
  auto tuned = tuned_loader.load("matmul", problem);
  auto fallback = default_loader.load("matmul", problem);
  std::cout << "matmul: " << tuned->selection().describe() << '\n';

  const auto elems = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  const std::vector<float> a = random_floats(elems, 2), b = random_floats(elems, 3);
  DeviceBuffer d_a(elems * sizeof(float)), d_b(elems * sizeof(float)), d_c(elems * sizeof(float));
  d_a.upload(a.data(), elems * sizeof(float));
  d_b.upload(b.data(), elems * sizeof(float));
  CUdeviceptr c = d_c.get(), pa = d_a.get(), pb = d_b.get();
  int m = size, n = size, k = size;
  void* args[] = {&c, &pa, &pb, &m, &n, &k};

  tuned->launch(args);
  std::vector<float> got(elems);
  d_c.download(got.data(), elems * sizeof(float));
  // 256 sampled elements computed in double: the whole product would take the CPU minutes.
  std::mt19937 gen(4);
  std::uniform_int_distribution<int> pick(0, size - 1);
  bool ok = true;
  for (int s = 0; s < 256 && ok; ++s) {
    const int i = pick(gen), j = pick(gen);
    double e = 0;
    for (int x = 0; x < size; ++x) e += double(a[std::size_t(i) * size + x]) * b[std::size_t(x) * size + j];
    ok = std::abs(got[std::size_t(i) * size + j] - e) <= 1e-4 * std::abs(e);
    if (!ok) std::printf("  C[%d][%d] = %.6g, CPU %.6g\n", i, j, got[std::size_t(i) * size + j], e);
  }
  std::printf("  256 sampled elements: %s\n", ok ? "correct" : "WRONG");

  const double t_tuned = time_ms([&] { tuned->launch(args); });
  const double t_default = time_ms([&] { fallback->launch(args); });
  std::printf("  tuned %.4f ms, template default %.4f ms: %.3fx\n", t_tuned, t_default, t_default / t_tuned);
  return report(*tuned, t_tuned, t_default, ok);
}

}  // namespace

int main(int argc, char** argv) {
  cutune::loader::LoaderOptions options;
  int n = 1 << 24, size = 2048;
  std::string json_out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--winners" && has_value) options.winners = argv[++i];
    else if (a == "--n" && has_value) n = std::atoi(argv[++i]);
    else if (a == "--mnk" && has_value) size = std::atoi(argv[++i]);
    else if (a == "--json" && has_value) json_out = argv[++i];
    else if (a == "--verify-borrowed") options.verify_borrowed = true;
    else {
      std::cerr << "usage: cutune-example [--winners DB|WISDOM.json] [--n N] [--mnk SIZE] [--json OUT] "
                   "[--verify-borrowed]\n";
      return 2;
    }
  }
  if (n < 1 || size < 1) {
    std::cerr << "cutune-example: --n and --mnk must be positive\n";
    return 2;
  }
  std::string why;
  if (cutune::cuda::device_count(&why) == 0) {
    std::cerr << "cutune-example: no GPU here (" << why << "); nothing to run\n";
    return 3;
  }
  try {
    Loader tuned(options);
    cutune::loader::LoaderOptions defaults_only = options;
    defaults_only.winners.clear();
    Loader defaults(defaults_only);
    std::cout << "GPU: " << tuned.device().model_key() << '\n';
    nlohmann::json out = {{"gpu", tuned.device().model_key()},
                          {"winners", options.winners.string()},
                          {"reduction", run_reduction(tuned, defaults, n)},
                          {"matmul", run_matmul(tuned, defaults, size)}};
    if (!json_out.empty()) std::ofstream(json_out) << out.dump(2) << '\n';
    return out["reduction"]["correct"] && out["matmul"]["correct"] ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "cutune-example: " << e.what() << '\n';
    return 1;
  }
}
