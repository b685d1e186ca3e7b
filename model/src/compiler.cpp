#include "cutune/model/compiler.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cutune {

std::optional<Compiler> parse_compiler(std::string_view text) {
  for (Compiler c : {Compiler::Auto, Compiler::Nvrtc, Compiler::Nvcc})
    if (text == compiler_name(c)) return c;
  return std::nullopt;
}

const char* compiler_name(Compiler c) {
  switch (c) {
    case Compiler::Auto: return "auto";
    case Compiler::Nvrtc: return "nvrtc";
    case Compiler::Nvcc: return "nvcc";
  }
  return "auto";
}

const char* compiler_display_name(Compiler c) {
  switch (c) {
    case Compiler::Auto: return "auto";
    case Compiler::Nvrtc: return "NVRTC";
    case Compiler::Nvcc: return "nvcc";
  }
  return "auto";
}

std::optional<KernelLang> parse_kernel_lang(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (KernelLang l : {KernelLang::Cuda, KernelLang::CuPy, KernelLang::NvCuda, KernelLang::PyCuda}) {
    std::string name = kernel_lang_name(l);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (upper == name) return l;
  }
  return std::nullopt;
}

const char* kernel_lang_name(KernelLang l) {
  switch (l) {
    case KernelLang::Cuda: return "CUDA";
    case KernelLang::CuPy: return "CuPy";
    case KernelLang::NvCuda: return "NVCUDA";
    case KernelLang::PyCuda: return "PyCUDA";
  }
  return "CUDA";
}

}  // namespace cutune
