#include "cutune/cuda/function_resources.hpp"

#include <algorithm>

#include "cutune/cuda/driver.hpp"

namespace cutune::cuda {
namespace {

// Resources are reported beside a measurement, never a reason to fail it: a driver that
// does not answer an attribute leaves it 0.
int attribute_or_zero(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  if (CU_FN(cuFuncGetAttribute)(&v, a, f) != CUDA_SUCCESS) return 0;
  return v;
}

}  // namespace

KernelResources function_resources(CUfunction f, unsigned block_threads, std::size_t dynamic_shared_bytes) {
  KernelResources r;
  r.registers = attribute_or_zero(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  r.local_bytes = attribute_or_zero(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  r.static_shared_bytes = attribute_or_zero(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  r.dynamic_shared_bytes = static_cast<std::int64_t>(dynamic_shared_bytes);
  r.const_bytes = attribute_or_zero(f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  r.max_threads_per_block = attribute_or_zero(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  r.block_threads = static_cast<int>(block_threads);
  return r;
}

double theoretical_occupancy(int blocks, unsigned block_threads, int max_threads_per_sm, int warp_size) {
  if (blocks <= 0 || block_threads == 0 || max_threads_per_sm <= 0 || warp_size <= 0) return 0.0;
  const auto warp = static_cast<unsigned>(warp_size);
  const double warps_per_block = static_cast<double>((block_threads + warp - 1) / warp);
  const double max_warps = static_cast<double>(max_threads_per_sm / warp_size);
  return std::min(1.0, blocks * warps_per_block / max_warps);
}

KernelResources with_occupancy(KernelResources r, CUfunction f, const DeviceLimits& limits) {
  if (limits.max_threads_per_sm <= 0 || r.block_threads <= 0) return r;
  int blocks = 0;
  if (CU_FN(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&blocks, f, r.block_threads,
                                                           static_cast<std::size_t>(r.dynamic_shared_bytes)) !=
      CUDA_SUCCESS)
    return r;
  r.active_blocks_per_sm = blocks;
  r.occupancy = theoretical_occupancy(blocks, static_cast<unsigned>(r.block_threads), limits.max_threads_per_sm,
                                      limits.warp_size);
  return r;
}

}  // namespace cutune::cuda
