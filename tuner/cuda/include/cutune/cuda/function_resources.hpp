#pragma once
// A loaded kernel's resources as the driver reports them (cuFuncGetAttribute) and the
// occupancy they allow at one launch's block size and dynamic shared memory
// (cuOccupancyMaxActiveBlocksPerMultiprocessor): the figures Nsight Compute's launch
// statistics show, read without launching anything.
#include <cstddef>

#include "cutune/cuda/device.hpp"
#include "cutune/model/kernel_resources.hpp"

namespace cutune::cuda {

/// `f`'s registers, local, static shared and constant memory, and its thread limit, with the
/// launch's `block_threads` and `dynamic_shared_bytes`. Never throws: an attribute the driver
/// does not answer reads 0. No occupancy (see with_occupancy).
KernelResources function_resources(CUfunction f, unsigned block_threads, std::size_t dynamic_shared_bytes);

/// `r` with the occupancy of `f` at r's block size and dynamic shared memory: resident blocks
/// per SM from the occupancy API, and those blocks' warps over the SM's most
/// (limits.max_threads_per_sm / warp size). Unchanged when the driver does not answer or the
/// limits are unknown. Ask it after opting in to the dynamic shared memory the launch needs:
/// before, the driver counts a launch above 48 KiB as unable to run.
KernelResources with_occupancy(KernelResources r, CUfunction f, const DeviceLimits& limits);

/// The occupancy arithmetic on its own: `blocks` resident blocks of `block_threads` threads
/// against an SM of `max_threads_per_sm` threads, in warps of `warp_size`; 0..1.
double theoretical_occupancy(int blocks, unsigned block_threads, int max_threads_per_sm, int warp_size);

}  // namespace cutune::cuda
