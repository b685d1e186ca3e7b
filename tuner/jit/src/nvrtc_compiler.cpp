#include "cutune/jit/nvrtc_compiler.hpp"

#include "compile_log.hpp"
#include "compiler_choice_detail.hpp"
#include "cutune/jit/global_functions.hpp"
#include "cutune/jit/nvcc_compiler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>
#include <string_view>

namespace cutune::jit {
namespace {

using detail::first_error_line;
using detail::log_lines;
using detail::redefined_parameter;
using detail::trim;

// Throws with the call text and NVRTC's own error string (STYLE.md convention 3).
#define CUTUNE_NVRTC_CHECK(call)                                                       \
  do {                                                                                 \
    nvrtcResult cutune_rc_ = (call);                                                   \
    if (cutune_rc_ != NVRTC_SUCCESS)                                                   \
      throw std::runtime_error(fmt::format("{}:{}: {} failed: {} ({})", __FILE__,      \
                                           __LINE__, #call,                            \
                                           nvrtcGetErrorString(cutune_rc_),            \
                                           static_cast<int>(cutune_rc_)));             \
  } while (0)

// RAII for an NVRTC program; not copyable because the handle has one owner.
class Program {
 public:
  Program(const std::string& source, const std::string& name,
          const std::vector<std::pair<std::string, std::string>>& headers) {
    std::vector<const char*> contents, names;
    for (const auto& [n, c] : headers) {
      names.push_back(n.c_str());
      contents.push_back(c.c_str());
    }
    CUTUNE_NVRTC_CHECK(nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                          contents.data(), names.data()));
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }  // no-throw: result ignored in a destructor
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

// NVRTC reports a name expression it cannot resolve in its own pseudo-file __nv_name_map,
// followed by the expression: `#pragma nv_mangled_name foo`. The names so reported.
std::vector<std::string> unresolved_names(const std::string& log) {
  std::vector<std::string> out;
  const auto lines = log_lines(log);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("__nv_name_map(", 0) != 0) continue;
    for (std::size_t k = i + 1; k < lines.size() && k <= i + 2; ++k) {
      static constexpr std::string_view pragma = "nv_mangled_name ";
      const auto at = lines[k].find(pragma);
      if (at == std::string::npos) continue;
      std::string name = trim(lines[k].substr(at + pragma.size()));
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
      break;
    }
  }
  return out;
}

std::vector<GlobalFunction> all_global_functions(const CompileRequest& request) {
  std::vector<GlobalFunction> out = global_functions(request.source);
  for (const auto& [name, content] : request.headers)
    for (auto& f : global_functions(content))
      if (std::none_of(out.begin(), out.end(), [&](const GlobalFunction& g) {
            return g.name == f.name && g.template_parameters == f.template_parameters;
          }))
        out.push_back(std::move(f));
  return out;
}

std::string unknown_name_message(const CompileRequest& request, const std::vector<std::string>& names,
                                 const std::string& nvrtc_error) {
  std::vector<std::string> listed;
  for (const auto& f : all_global_functions(request)) listed.push_back(f.display());
  std::string quoted;
  for (const auto& n : names) quoted += (quoted.empty() ? "'" : ", '") + n + "'";
  const std::string file = request.source_name.empty() ? "the source" : request.source_name;
  const std::string have = listed.empty() ? std::string("none found") : fmt::format("{}", fmt::join(listed, ", "));
  return fmt::format("kernel name {} names no __global__ function of {} ({}); its __global__ functions: {}", quoted,
                     file, nvrtc_error, have);
}

CompileResult compile_program(const CompileRequest& request, bool& unknown_name) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  CompileResult result;
  unknown_name = false;
  Program prog(request.source, request.source_name.empty() ? "kernel.cu" : request.source_name, request.headers);

  result.full_options = request.options;
  result.full_options.push_back("--gpu-architecture=" + request.arch);
  // C++ name expressions (`k`, `ns::k`, `matmul<float, 16>`), as Kernel Tuner's cupy and
  // cuda-python backends pass them: NVRTC instantiates templates and lowers each name.
  std::vector<std::string> distinct;
  for (const auto& name : request.kernel_names)
    if (std::find(distinct.begin(), distinct.end(), name) == distinct.end()) distinct.push_back(name);
  for (const auto& name : distinct) CUTUNE_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), name.c_str()));
  std::vector<const char*> argv;
  for (const auto& o : result.full_options) argv.push_back(o.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());

  std::size_t log_size = 0;
  CUTUNE_NVRTC_CHECK(nvrtcGetProgramLogSize(prog.get(), &log_size));
  result.log.resize(log_size);
  if (log_size) CUTUNE_NVRTC_CHECK(nvrtcGetProgramLog(prog.get(), result.log.data()));
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n'))
    result.log.pop_back();

  if (rc != NVRTC_SUCCESS) {
    const std::string first = first_error_line(result.log);
    if (auto names = unresolved_names(result.log); !names.empty()) {
      unknown_name = true;
      const auto at = first.find("error");  // "error: identifier "foo" is undefined"
      result.error = unknown_name_message(request, names, trim(first.substr(at == std::string::npos ? 0 : at)));
    } else if (!first.empty()) {
      result.error = fmt::format("NVRTC: {}: {}", nvrtcGetErrorString(rc), trim(first));
    } else {
      // No log at all: NVRTC refused before compiling (an invalid option, mostly).
      result.error = fmt::format("NVRTC: {} (no log; options: {})", nvrtcGetErrorString(rc),
                                 fmt::join(result.full_options, " "));
    }
  } else if (std::string line = redefined_parameter(request.source, result.log); !line.empty()) {
    result.error = "the kernel redefines a tuning parameter's macro: " + line;
  } else {
    for (const auto& name : request.kernel_names) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(prog.get(), name.c_str(), &lowered) != NVRTC_SUCCESS || lowered == nullptr) {
        unknown_name = true;
        result.error = unknown_name_message(request, {name}, "NVRTC has no lowered name for it");
        break;
      }
      result.lowered_names.emplace_back(lowered);
    }
    if (result.error.empty()) {
      std::size_t size = 0;
      CUTUNE_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &size));
      result.cubin.resize(size);
      CUTUNE_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), result.cubin.data()));
      result.ok = size > 0;
      if (!result.ok) result.error = "NVRTC produced no cubin (is the architecture real, not compute_XX?)";
    }
  }
  if (!result.ok) result.lowered_names.clear();
  result.compile_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return result;
}

}  // namespace

std::string detail::unknown_kernel_message(const CompileRequest& request, const std::vector<std::string>& names,
                                           const std::string& why) {
  return unknown_name_message(request, names, why);
}

CompileResult compile(const CompileRequest& request) {
  bool unknown_name = false;
  return detail::compile_dispatch(request, unknown_name, compile_program, compile_with_nvcc);
}

std::string kernel_name_error(const CompileRequest& request) {
  const auto functions = all_global_functions(request);
  bool all_seen = true;
  for (const auto& name : request.kernel_names) {
    const std::string base = unqualified_name(name);
    all_seen = all_seen && std::any_of(functions.begin(), functions.end(),
                                       [&](const GlobalFunction& f) { return unqualified_name(f.name) == base; });
  }
  if (all_seen) return {};
  // Not in the text: a kernel made by a macro still compiles, so the compiler decides.
  bool unknown_name = false;
  CompileResult r = detail::compile_dispatch(request, unknown_name, compile_program, compile_with_nvcc);
  return unknown_name ? r.error : std::string();
}

int nvrtc_version() {
  int major = 0, minor = 0;
  CUTUNE_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return major * 1000 + minor * 10;
}

std::string nvrtc_version_string() {
  int major = 0, minor = 0;
  CUTUNE_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> supported_archs() {
  int n = 0;
  CUTUNE_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&n));
  std::vector<int> archs(static_cast<std::size_t>(n));
  CUTUNE_NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()));
  std::vector<std::string> out;
  for (int a : archs) out.push_back(fmt::format("sm_{}", a));
  return out;
}

}  // namespace cutune::jit
