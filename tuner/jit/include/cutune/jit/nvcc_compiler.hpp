#pragma once
// The toolkit's nvcc, run as a subprocess to compile a kernel to a cubin for one exact
// architecture: for kernels NVRTC refuses (system or C++ standard headers, nvcc-only options
// such as -O3 or -Xcompiler, __host__ code), as Kernel Tuner's PyCUDA backend compiles them.
#include <filesystem>
#include <string>
#include <vector>

#include "cutune/jit/compile_types.hpp"

namespace cutune::jit {

/// The nvcc a compile runs: $CUTUNE_NVCC, else bin/nvcc of $CUDA_HOME or $CUDA_PATH (where
/// the headers come from), else the nvcc cutune was configured with, else `nvcc` on PATH,
/// else /usr/local/cuda/bin/nvcc; the first that is an executable file. Empty when none is;
/// `tried` (when given) receives what was looked at, for the error.
std::filesystem::path nvcc_path(std::vector<std::string>* tried = nullptr);
/// nvcc's release line ("Cuda compilation tools, release 13.0, V13.0.88") and its path, asked
/// once per process and nvcc: part of the cache key of its cubins. "" when there is no nvcc.
std::string nvcc_identity();

/// Compiles with nvcc (-cubin -arch=<arch>): the source (the configuration's #define prefix,
/// `#line 1`, the kernel) written to a private temporary folder, the local headers beside it,
/// the kernel file's folder first among the include paths. A template kernel name is
/// instantiated by taking its address in host code (NVRTC's name expressions do the same);
/// every kernel is then found by its name among the cubin's entry symbols (cubin_symbols.hpp).
/// Never throws for a failing compile (that is data); a missing nvcc is a failure naming what
/// was tried. `unknown_name` is set when a kernel name names no __global__ function.
CompileResult compile_with_nvcc(const CompileRequest& request, bool& unknown_name);

}  // namespace cutune::jit
