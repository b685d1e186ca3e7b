#include "cutune/jit/compile_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace cutune::jit {

std::vector<std::string> toolkit_include_options() {
  // The toolkit a CUDA user compiles against: $CUDA_HOME or $CUDA_PATH (as Kernel Tuner's
  // find_cuda_home reads them), else the one cutune was built with.
  std::filesystem::path home = CUTUNE_CUDA_TOOLKIT_ROOT;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) {
      home = v;
      break;
    }
  std::vector<std::string> out;
  std::error_code ec;
  // CUDA 13 keeps CUB, Thrust and libcu++ under include/cccl: without it BAT's and Kernel
  // Tuner's expdist (#include <cub/cub.cuh>) failed every configuration.
  for (const auto& dir : {home / "include", home / "include" / "cccl"})
    if (std::filesystem::is_directory(dir, ec)) out.push_back("-I" + dir.string());
  return out;
}

std::string replace_parameter_names(const std::string& text, const std::vector<std::pair<std::string, Value>>& params) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!word(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t e = i;
    while (e < text.size() && word(text[e])) ++e;
    const std::string token = text.substr(i, e - i);
    auto it = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == token; });
    out += it == params.end() ? token : it->second.str();
    i = e;
  }
  return out;
}

CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch) {
  CompileRequest r;
  r.source = problem.configured_source(config);
  r.source_name = problem.kernel_file().filename().string();
  const auto params = problem.space().assignments(config);
  for (const auto& name : problem.kernel_names()) r.kernel_names.push_back(replace_parameter_names(name, params));
  r.options = problem.compiler_options();
  // Kernel Tuner's NVRTC backend adds the toolkit's headers to every compile; kernels written
  // for it include <cub/cub.cuh> and friends without saying where they are.
  for (auto& o : toolkit_include_options()) r.options.push_back(std::move(o));
  r.arch = arch;
  r.headers = problem.local_headers();
  return r;
}

}  // namespace cutune::jit
