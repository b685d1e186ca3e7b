#pragma once
// What a compile (NVRTC or nvcc) is asked and answers, as plain data: the compile pool sends
// these to its worker processes (tuner/worker's protocol), which therefore needs no NVRTC to
// read or write them. The compile itself: nvrtc_compiler.hpp (jit::compile, either compiler).
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/compiler.hpp"

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
  /// Nvrtc or Nvcc; Auto decides for this request alone (NVRTC, else nvcc when NVRTC's
  /// failure says the kernel needs it): compile_request gives the problem's decision instead.
  Compiler compiler = Compiler::Nvrtc;
  /// The kernel file's folder (nvcc: the first -I, as NVRTC finds the headers next to it); not
  /// in the cache key: the headers' contents are.
  std::string source_dir;
  friend bool operator==(const CompileRequest&, const CompileRequest&) = default;
};

struct CompileResult {
  bool ok = false;
  std::vector<char> cubin;
  /// One per CompileRequest::kernel_names, in order: the cubin's (mangled) symbol of each,
  /// what the GPU side looks the functions up by. An extern "C" kernel's is its own name.
  std::vector<std::string> lowered_names;
  std::string log;                   ///< the compiler's full log (warnings too)
  std::string error;                 ///< one line when !ok
  double compile_ms = 0.0;
  std::vector<std::string> full_options;  ///< every option passed to the compiler
  bool from_cache = false;           ///< read from a CubinCache; compile_ms is the original's
  friend bool operator==(const CompileResult&, const CompileResult&) = default;
};

}  // namespace cutune::jit
