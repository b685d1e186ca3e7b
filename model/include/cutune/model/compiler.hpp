#pragma once
// Which compiler turns a kernel into a cubin (ARCHITECTURE.md, decision 11), and the compile
// environment of the Kernel Tuner backend a script was written for.
#include <optional>
#include <string_view>

namespace cutune {

/// Nvrtc: in the process, fast. Nvcc: the toolkit's nvcc in a subprocess, for what NVRTC
/// refuses (host or C++ standard headers, nvcc-only options, __host__ code), as Kernel Tuner's
/// PyCUDA backend compiles. Auto: NVRTC, unless the default configuration's NVRTC compile
/// fails for one of those reasons and nvcc compiles it.
enum class Compiler { Auto, Nvrtc, Nvcc };
/// "auto", "nvrtc", "nvcc" (lower case, as `--compiler` and cutune.Compiler take them).
std::optional<Compiler> parse_compiler(std::string_view text);
const char* compiler_name(Compiler c);
/// For people: "NVRTC", "nvcc", "auto".
const char* compiler_display_name(Compiler c);

/// Kernel Tuner's `lang` for CUDA (cutune.Lang): which of its backends the script was written
/// for. Only CuPy changes the compile: CuPy's include directory and cuda_fp16.h come first,
/// as CuPy's RawModule compiles, so `half` and <cupy/complex.cuh> work without an #include.
enum class KernelLang { Cuda, CuPy, NvCuda, PyCuda };
/// Case-insensitive: "CUDA", "cupy", "NVCUDA", "PyCUDA".
std::optional<KernelLang> parse_kernel_lang(std::string_view text);
const char* kernel_lang_name(KernelLang l);  ///< Kernel Tuner's spelling: "CUDA", "CuPy", ...

}  // namespace cutune
