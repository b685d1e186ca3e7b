#pragma once
// The NVRTC request for one configuration of a problem. One definition for the tuner's
// compile pool and the loader: the cubin cache is keyed by compile_key(request), so the
// two must build byte-identical requests for a kernel the tuner compiled to be a cache
// hit in an application.
#include <string>
#include <utility>
#include <vector>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::jit {

/// kernel_names: the problem's kernel names (KernelProblem::kernel_names(), same order)
/// with tuning parameters replaced by their values, as Kernel Tuner 1.5 does. The compiler is
/// the problem's, auto decided once per problem (compiler_choice.hpp: decide_compiler).
CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch);
/// The same with the compiler given. A CuPy problem (KernelLang::CuPy) gets CuPy's compile
/// environment: `#include <cuda_fp16.h>` before everything and CuPy's include directory.
CompileRequest compile_request_with(const KernelProblem& problem, const Config& config, const std::string& arch,
                                    Compiler compiler);

/// CuPy's header folder: $CUTUNE_CUPY_INCLUDE when set (the Python package sets it from the
/// interpreter its script runs in), else <cupy>/_core/include when `python3` imports cupy, else
/// "": asked once per process.
std::string cupy_include_dir();

/// Kernel Tuner 1.5's util.replace_param_occurrences: every token of [A-Za-z0-9_]+ that is
/// a parameter's name becomes str(value): `matmul<float, tile_size_x>` -> `matmul<float, 16>`.
std::string replace_parameter_names(const std::string& text, const std::vector<std::pair<std::string, Value>>& params);

/// -I options for the CUDA toolkit's headers ($CUDA_HOME, $CUDA_PATH, else the toolkit cutune
/// was built with; include/ and, on CUDA 13, include/cccl), each only when it exists.
std::vector<std::string> toolkit_include_options();

}  // namespace cutune::jit
