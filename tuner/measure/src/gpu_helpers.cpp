#include "cutune/measure/gpu_helpers.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

namespace cutune::measure {
namespace {

// Hand-written PTX (ISA 7.0 runs on sm_70 and newer; the driver JITs it for the device).
// cutune_block(flag): spin on a volatile load of flag[0] (pinned host memory) until it is
// non-zero or 100 ms of %globaltimer passed; on timeout write flag[1] = 1.
// cutune_probe(out, interval): wait for a %globaltimer tick, take clock64, spin until a
// later tick at least `interval` ns on, take clock64: out = {t0, t1, c0, c1}. Measuring
// between two ticks makes the timer's update granularity (up to 1 us) drop out.
// cutune_flush(buf, n16): every thread reads 16-byte words of buf, grid-stride (volatile,
// so the loads stay although their values are unused).
constexpr const char* kPtx = R"ptx(
.version 7.0
.target sm_70
.address_size 64

.visible .entry cutune_block(.param .u64 flag)
{
  .reg .pred %p<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [flag];
  mov.u64 %rd2, %globaltimer;
SPIN:
  ld.volatile.u32 %r1, [%rd1];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p2, %rd4, 100000000;
  @%p2 bra SPIN;
  mov.u32 %r2, 1;
  st.volatile.u32 [%rd1+4], %r2;
DONE:
  ret;
}

.visible .entry cutune_probe(.param .u64 out, .param .u64 interval)
{
  .reg .pred %p<3>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [interval];
  mov.u64 %rd3, %globaltimer;
EDGE0:
  mov.u64 %rd4, %globaltimer;
  setp.eq.u64 %p1, %rd4, %rd3;
  @%p1 bra EDGE0;
  mov.u64 %rd5, %clock64;
  mov.u64 %rd6, %rd4;
EDGE1:
  mov.u64 %rd7, %globaltimer;
  setp.eq.u64 %p1, %rd7, %rd6;
  @%p1 bra EDGE1;
  mov.u64 %rd6, %rd7;
  mov.u64 %rd8, %clock64;
  sub.u64 %rd9, %rd7, %rd4;
  setp.lt.u64 %p2, %rd9, %rd2;
  @%p2 bra EDGE1;
  st.volatile.u64 [%rd1], %rd4;
  st.volatile.u64 [%rd1+8], %rd7;
  st.volatile.u64 [%rd1+16], %rd5;
  st.volatile.u64 [%rd1+24], %rd8;
  ret;
}

.visible .entry cutune_flush(.param .u64 buf, .param .u64 n16)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [n16];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd3, %r1, %r2;
  cvt.u64.u32 %rd4, %r3;
  add.u64 %rd3, %rd3, %rd4;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra END;
  shl.b64 %rd6, %rd3, 4;
  add.u64 %rd7, %rd1, %rd6;
  ld.volatile.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd7];
  add.u64 %rd3, %rd3, %rd5;
  bra LOOP;
END:
  ret;
}
)ptx";

std::vector<char> ptx_image() {
  std::string s(kPtx);
  return std::vector<char>(s.c_str(), s.c_str() + s.size() + 1);  // NUL-terminated text
}

}  // namespace

GpuHelpers::GpuHelpers()
    : module_(ptx_image()), flag_(2 * sizeof(std::uint32_t)), probe_(4 * sizeof(std::uint64_t)) {
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
    : module_(ptx_image()),
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
