#pragma once
// NVRTC compilation of a kernel source to a cubin for one exact architecture
// (ARCHITECTURE.md, decision 2: no PTX, so no driver JIT inside the timings).
#include <string>
#include <vector>

#include "cutune/jit/compile_types.hpp"

namespace cutune::jit {

/// Never throws for a failing compile (that is data: status "compile"); throws
/// std::runtime_error only if NVRTC itself misbehaves (e.g. out of memory). Fails too when
/// a kernel name names no __global__ function (the error lists those the source has), and
/// when the kernel redefines a macro of the configuration prefix (NVRTC only warns).
CompileResult compile(const CompileRequest& request);

/// Non-empty (the one-line error) when a kernel name is wrong whatever the configuration:
/// no __global__ function of that name appears in the source or its headers and NVRTC
/// cannot resolve it either. Empty otherwise; compiles only when the text has no such name.
std::string kernel_name_error(const CompileRequest& request);

/// "13.0"
std::string nvrtc_version_string();
/// major*1000 + minor*10, like CUDA_VERSION
int nvrtc_version();
/// The architectures NVRTC can target, e.g. {"sm_75", ..., "sm_90", ...}.
std::vector<std::string> supported_archs();

}  // namespace cutune::jit
