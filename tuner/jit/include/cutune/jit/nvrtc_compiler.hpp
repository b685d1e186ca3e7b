#pragma once
// NVRTC compilation of a kernel source to a cubin for one exact architecture
// (ARCHITECTURE.md, decision 2: no PTX, so no driver JIT inside the timings).
#include <string>
#include <vector>

namespace cutune::jit {

struct CompileRequest {
  std::string source;
  std::string source_name;           ///< shown in diagnostics, e.g. "reduction.cu"
  /// C++ name expressions of __global__ functions (`k`, `ns::k`, `matmul<float, 16>`), with
  /// tuning parameters already replaced by their values; NVRTC lowers each.
  std::vector<std::string> kernel_names;
  std::vector<std::string> options;  ///< -D defines and the problem's CompilerOptions
  std::string arch = "sm_90";
  /// Headers the source includes with #include "name": (name as written, contents).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct CompileResult {
  bool ok = false;
  std::vector<char> cubin;
  /// One per CompileRequest::kernel_names, in order: the cubin's (mangled) symbol of each,
  /// what the GPU side looks the functions up by. An extern "C" kernel's is its own name.
  std::vector<std::string> lowered_names;
  std::string log;                   ///< NVRTC's full log (warnings too)
  std::string error;                 ///< one line when !ok
  double compile_ms = 0.0;
  std::vector<std::string> full_options;  ///< every option passed to NVRTC
  bool from_cache = false;           ///< read from a CubinCache; compile_ms is the original's
};

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
