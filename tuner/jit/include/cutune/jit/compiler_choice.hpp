#pragma once
// Which compiler a problem's configurations are compiled with (ARCHITECTURE.md, decision 11):
// the one it names (cutune.Compiler, `--compiler`), or, for auto, NVRTC where it works (it is
// faster and runs inside the compile pool's processes) and nvcc where the kernel needs it.
#include <string>

#include "cutune/jit/compile_types.hpp"
#include "cutune/model/compiler.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::jit {

struct CompilerDecision {
  Compiler compiler = Compiler::Nvrtc;  ///< Nvrtc or Nvcc
  /// Why, for the run's banner and report: "named by --compiler or cutune.Compiler", or
  /// what the default configuration's NVRTC compile said and that nvcc compiles it.
  std::string reason;
  /// Decided NVRTC from the kernel's text alone: a configuration NVRTC refuses for a reason
  /// nvcc does not have is compiled again by nvcc (compile requests carry Compiler::Auto). A
  /// function without __host__/__device__ is host code that no text rule sees; Kernel Tuner's
  /// PyCUDA backend compiles such files with nvcc.
  bool nvcc_on_refusal = false;
  /// The compiler compile requests name: Auto where nvcc_on_refusal, else `compiler`.
  Compiler request_compiler() const { return nvcc_on_refusal ? Compiler::Auto : compiler; }
  /// "nvcc (NVRTC: cannot open source file "stdio.h"; nvcc compiles it)": one line for people.
  std::string describe() const;
};

/// The problem's compiler. For auto, decided once per problem content (source, headers,
/// options, kernel names) in this process, from the default configuration: NVRTC, unless its
/// NVRTC compile fails for a reason nvcc does not have (a header NVRTC cannot open, an option
/// it does not know, __host__ code in JIT mode) and nvcc compiles it. A kernel whose text has
/// none of these (no #include <...> beyond the toolkit's device headers, no __host__, only
/// options NVRTC takes) is decided NVRTC without compiling, with nvcc on a refusal. `arch` is that compile's target.
CompilerDecision decide_compiler(const KernelProblem& problem, const std::string& arch);

/// Whether an NVRTC failure is one nvcc may not have: its log or error shows a header NVRTC
/// cannot open, an option it does not know, or __host__ code it refuses in JIT mode.
bool nvrtc_failure_needs_nvcc(const CompileResult& nvrtc_result);

/// ", compiled with NVRTC; --compiler nvcc to use nvcc" and its nvcc twin: what every compile
/// failure's message ends with (inside the parentheses it adds).
std::string compiler_switch_note(Compiler used);

}  // namespace cutune::jit
