#pragma once
// NVRTC compilation of a kernel source to a cubin for one exact architecture
// (ARCHITECTURE.md, decision 2: no PTX, so no driver JIT inside the timings).
#include <string>
#include <vector>

namespace cutune::jit {

struct CompileRequest {
  std::string source;
  std::string source_name;           ///< shown in diagnostics, e.g. "reduction.cu"
  std::vector<std::string> kernel_names;  ///< extern "C" names, each checked to exist
  std::vector<std::string> options;  ///< -D defines and the problem's CompilerOptions
  std::string arch = "sm_90";
  /// Headers the source includes with #include "name": (name as written, contents).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct CompileResult {
  bool ok = false;
  std::vector<char> cubin;
  std::string log;                   ///< NVRTC's full log (warnings too)
  std::string error;                 ///< one line when !ok
  double compile_ms = 0.0;
  std::vector<std::string> full_options;  ///< every option passed to NVRTC
  bool from_cache = false;           ///< read from a CubinCache; compile_ms is the original's
};

/// Never throws for a failing compile (that is data: status "compile"); throws
/// std::runtime_error only if NVRTC itself misbehaves (e.g. out of memory).
CompileResult compile(const CompileRequest& request);

/// "13.0"
std::string nvrtc_version_string();
/// major*1000 + minor*10, like CUDA_VERSION
int nvrtc_version();
/// The architectures NVRTC can target, e.g. {"sm_75", ..., "sm_90", ...}.
std::vector<std::string> supported_archs();

}  // namespace cutune::jit
