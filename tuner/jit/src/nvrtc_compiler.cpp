#include "cutune/jit/nvrtc_compiler.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include <chrono>
#include <stdexcept>

namespace cutune::jit {
namespace {

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

}  // namespace

CompileResult compile(const CompileRequest& request) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  CompileResult result;
  Program prog(request.source, request.source_name.empty() ? "kernel.cu" : request.source_name, request.headers);

  result.full_options = request.options;
  result.full_options.push_back("--gpu-architecture=" + request.arch);
  // Kernels must be extern "C"; asking for their lowered names makes NVRTC check they exist.
  for (const auto& name : request.kernel_names)
    CUTUNE_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), name.c_str()));
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
    // First error line of the log, for the one-line summary.
    std::string first = result.log;
    auto pos = first.find("error");
    if (pos != std::string::npos) {
      auto bol = first.rfind('\n', pos);
      first = first.substr(bol == std::string::npos ? 0 : bol + 1);
    }
    first = first.substr(0, first.find('\n'));
    result.error = fmt::format("NVRTC: {}: {}", nvrtcGetErrorString(rc), first);
  } else {
    for (const auto& name : request.kernel_names) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(prog.get(), name.c_str(), &lowered) != NVRTC_SUCCESS ||
          lowered == nullptr || name != lowered) {
        result.error = fmt::format("kernel '{}' is not an extern \"C\" __global__ function of {}",
                                   name, request.source_name);
        break;
      }
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
  result.compile_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return result;
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
