#include "cutune/measure/gpu_helpers.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "gpu_helpers_image.hpp"  // generated: kHelpersImage, the fatbinary

namespace cutune::measure {
namespace {

// Hand-written PTX (gpu_helpers.ptx, ISA 7.0), built into a fatbinary for every architecture
// the toolkit knows, with the PTX itself for newer ones (tuner/measure/CMakeLists.txt).
// cutune_block(flag): spin on a volatile load of flag[0] (pinned host memory) until it is
// non-zero or 100 ms of %globaltimer passed; on timeout write flag[1] = 1.
// cutune_probe(out, interval): wait for a %globaltimer tick, take clock64, spin until a
// later tick at least `interval` ns on, take clock64: out = {t0, t1, c0, c1}. Measuring
// between two ticks makes the timer's update granularity (up to 1 us) drop out.
// cutune_flush(buf, n16): every thread reads 16-byte words of buf, grid-stride (volatile,
// so the loads stay although their values are unused).

std::vector<char> helpers_image() {
  const auto* p = reinterpret_cast<const char*>(kHelpersImage);
  return std::vector<char>(p, p + sizeof kHelpersImage);
}

}  // namespace

GpuHelpers::GpuHelpers()
    : module_(helpers_image()), flag_(2 * sizeof(std::uint32_t)), probe_(4 * sizeof(std::uint64_t)) {
  block_fn_ = module_.function("cutune_block");
  probe_fn_ = module_.function("cutune_probe");
  auto* f = static_cast<volatile std::uint32_t*>(flag_.get());
  f[0] = 1;
  f[1] = 0;
}

void GpuHelpers::block(CUstream stream) {
  auto* f = static_cast<volatile std::uint32_t*>(flag_.get());
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CUdeviceptr p = flag_.device_ptr();
  void* params[] = {&p};
  CUTUNE_CU(CU_FN(cuLaunchKernel)(block_fn_, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr));
}

void GpuHelpers::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  static_cast<volatile std::uint32_t*>(flag_.get())[0] = 1;
}

bool GpuHelpers::block_timed_out() const {
  return static_cast<volatile std::uint32_t*>(flag_.get())[1] != 0;
}

void GpuHelpers::probe_clock(CUstream stream, std::uint64_t interval_ns) {
  auto* out = static_cast<volatile std::uint64_t*>(probe_.get());
  for (int i = 0; i < 4; ++i) out[i] = 0;
  CUdeviceptr p = probe_.device_ptr();
  void* params[] = {&p, &interval_ns};
  CUTUNE_CU(CU_FN(cuLaunchKernel)(probe_fn_, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr));
}

double GpuHelpers::probed_clock_mhz() const {
  auto* out = static_cast<volatile std::uint64_t*>(probe_.get());
  const std::uint64_t t0 = out[0], t1 = out[1], c0 = out[2], c1 = out[3];
  if (t1 <= t0 || c1 <= c0) return 0.0;
  return static_cast<double>(c1 - c0) * 1e3 / static_cast<double>(t1 - t0);  // cycles/ns -> MHz
}

L2Flush::L2Flush(std::size_t l2_bytes, int sm_count, double multiple)
    : module_(helpers_image()),
      buffer_((static_cast<std::size_t>(multiple * static_cast<double>(l2_bytes)) + 15) / 16 * 16),
      blocks_(static_cast<unsigned>(std::max(1, sm_count) * 4)) {
  function_ = module_.function("cutune_flush");
  CUTUNE_CU(CU_FN(cuMemsetD32Async)(buffer_.get(), 0, buffer_.bytes() / 4, nullptr));
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
}

void L2Flush::flush(CUstream stream) {
  CUdeviceptr p = buffer_.get();
  std::uint64_t n16 = buffer_.bytes() / 16;
  void* params[] = {&p, &n16};
  CUTUNE_CU(CU_FN(cuLaunchKernel)(function_, blocks_, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
}

}  // namespace cutune::measure
