#pragma once
// jit::compile's dispatch on CompileRequest::compiler, shared by the compile itself and the
// kernel-name check (nvrtc_compiler.cpp), with the compilers passed in.
#include <string>
#include <vector>

#include "cutune/jit/compile_types.hpp"

namespace cutune::jit::detail {

using CompileFn = CompileResult (*)(const CompileRequest&, bool& unknown_name);

/// Nvrtc and Nvcc: that compiler. Auto: NVRTC, then nvcc when NVRTC's failure says the kernel
/// needs it and nvcc compiles it. A failure's error ends with the compiler used and the switch.
CompileResult compile_dispatch(const CompileRequest& request, bool& unknown_name, CompileFn nvrtc, CompileFn nvcc);

/// "kernel name 'k' names no __global__ function of k.cu (<why>); its __global__ functions: ..."
std::string unknown_kernel_message(const CompileRequest& request, const std::vector<std::string>& names,
                                   const std::string& why);

}  // namespace cutune::jit::detail
