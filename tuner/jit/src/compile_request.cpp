#include "cutune/jit/compile_request.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cutune/jit/compiler_choice.hpp"

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

std::string cupy_include_dir() {
  static const std::string dir = [] {
    // Kernel Tuner's CuPy backend compiles with cupy.RawModule, which adds this folder; where
    // CuPy is not installed the kernel's own includes say what is missing. The Python package
    // names the folder of the CuPy its script runs with ($CUTUNE_CUPY_INCLUDE): the python3 on
    // PATH may be another (a venv's script, the system's python3 without CuPy).
    std::error_code ec;
    if (const char* env = std::getenv("CUTUNE_CUPY_INCLUDE"); env && *env)
      return std::filesystem::is_directory(env, ec) ? std::string(env) : std::string();
    std::string out;
    FILE* pipe = ::popen("python3 -c \"import cupy, os; print(os.path.dirname(cupy.__file__) + '/_core/include')\" "
                         "2>/dev/null",
                         "r");
    if (!pipe) return out;
    std::array<char, 512> buffer{};
    while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe)) out += buffer.data();
    const bool ok = ::pclose(pipe) == 0;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return ok && std::filesystem::is_directory(out, ec) ? out : std::string();
  }();
  return dir;
}

CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch) {
  const Compiler compiler =
      problem.compiler() == Compiler::Auto ? decide_compiler(problem, arch).request_compiler() : problem.compiler();
  return compile_request_with(problem, config, arch, compiler);
}

CompileRequest compile_request_with(const KernelProblem& problem, const Config& config, const std::string& arch,
                                    Compiler compiler) {
  CompileRequest r;
  r.compiler = compiler;
  r.source = problem.configured_source(config);
  // CuPy's RawModule has half precision without an #include: cuda_fp16.h comes first, before
  // the configuration's #defines (which must not rewrite it).
  if (problem.lang() == KernelLang::CuPy) r.source = "#include <cuda_fp16.h>\n" + r.source;
  r.source_name = problem.kernel_file().filename().string();
  const auto params = problem.space().assignments(config);
  for (const auto& name : problem.kernel_names()) r.kernel_names.push_back(replace_parameter_names(name, params));
  r.options = problem.compiler_options();
  // Kernel Tuner's NVRTC backend adds the toolkit's headers to every compile; kernels written
  // for it include <cub/cub.cuh> and friends without saying where they are.
  for (auto& o : toolkit_include_options()) r.options.push_back(std::move(o));
  if (problem.lang() == KernelLang::CuPy)
    if (std::string dir = cupy_include_dir(); !dir.empty()) r.options.push_back("-I" + dir);
  r.arch = arch;
  r.headers = problem.local_headers();
  std::error_code ec;
  r.source_dir = std::filesystem::absolute(problem.kernel_file(), ec).parent_path().string();
  return r;
}

}  // namespace cutune::jit
