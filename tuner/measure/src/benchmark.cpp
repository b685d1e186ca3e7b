#include "cutune/measure/benchmark.hpp"

#include "cutune/measure/statistics.hpp"

namespace cutune::measure {

void launch(const Launch& l, CUstream stream) {
  CUTUNE_CU(CU_FN(cuLaunchKernel)(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                                  l.block[1], l.block[2], l.shared_bytes, stream,
                                  const_cast<void**>(l.params.data()), nullptr));
}

void launch(const LaunchSequence& seq, CUstream stream) {
  for (const auto& l : seq) launch(l, stream);
}

double copy_bandwidth_gbps(std::size_t bytes, int samples) {
  cuda::DeviceBuffer src(bytes), dst(bytes);
  CUTUNE_CU(CU_FN(cuMemsetD8Async)(src.get(), 0x3f, bytes, nullptr));
  CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(dst.get(), src.get(), bytes, nullptr));  // warm-up
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  cuda::Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    start.record();
    CUTUNE_CU(CU_FN(cuMemcpyDtoDAsync)(dst.get(), src.get(), bytes, nullptr));
    stop.record();
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  double median_s = summarize(ms).median * 1e-3;
  return 2.0 * static_cast<double>(bytes) / median_s / 1e9;
}

}  // namespace cutune::measure
