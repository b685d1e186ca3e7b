#include "cutune/jit/compiler_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <mutex>
#include <string_view>

#include "compile_log.hpp"
#include "compiler_choice_detail.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"

namespace cutune::jit {
namespace {

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// The error without the note compile_dispatch ends it with, for a reason that names both.
std::string bare_error(const CompileResult& r) {
  std::string e = r.error;
  if (const auto at = e.rfind(" (compiled with "); at != std::string::npos) e.erase(at);
  return e;
}

// Headers of the toolkit that NVRTC compiles as nvcc does (device code only); any other
// #include <...> may be a host or standard header NVRTC cannot open.
bool device_header(std::string_view name) {
  static constexpr std::array<std::string_view, 6> exact{"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h",
                                                         "cooperative_groups.h", "mma.h", "cuda_pipeline.h"};
  static constexpr std::array<std::string_view, 2> folders{"cooperative_groups/", "cuda/"};
  return std::find(exact.begin(), exact.end(), name) != exact.end() ||
         std::any_of(folders.begin(), folders.end(), [&](std::string_view f) { return name.rfind(f, 0) == 0; });
}

// Options both compilers take the same way; any other (-O3, -Xcompiler, ...) may be nvcc's.
bool nvrtc_option(std::string_view o) {
  static constexpr std::array<std::string_view, 27> prefixes{
      "-D", "-U", "-I", "--include-path", "--define-macro", "--undefine-macro", "-std=", "--std=",
      "-use_fast_math", "--use_fast_math", "-lineinfo", "--generate-line-info", "-maxrregcount", "--maxrregcount",
      "-G", "--device-debug", "-fmad", "--fmad", "-ftz", "--ftz", "-prec-", "--prec-", "-restrict", "--restrict",
      "-w", "--disable-warnings", "--extra-device-vectorization"};
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return o.rfind(p, 0) == 0; });
}

bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    const std::size_t e = at + word.size();
    const bool right = e == text.size() || !(std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_');
    if (left && right) return true;
  }
  return false;
}

// "#include <stdio.h>" in `text` (not a toolkit device header), or "" when none.
std::string system_include(std::string_view text) {
  for (const auto& raw : detail::log_lines(std::string(text))) {
    std::string line = detail::trim(raw);
    if (line.empty() || line[0] != '#') continue;
    line = detail::trim(line.substr(1));
    if (line.rfind("include", 0) != 0) continue;
    line = detail::trim(line.substr(7));
    if (!line.empty() && line[0] == '"') continue;
    const auto close = line.find('>');
    if (line.empty() || line[0] != '<' || close == std::string::npos) return "#include " + line;
    if (!device_header(line.substr(1, close - 1))) return "#include " + line.substr(0, close + 1);
  }
  return {};
}

// What in the problem could make NVRTC fail where nvcc compiles; "" when nothing can.
std::string nvcc_hint(const KernelProblem& problem) {
  std::vector<std::string_view> texts{problem.source()};
  for (const auto& [name, content] : problem.local_headers()) texts.emplace_back(content);
  for (std::string_view t : texts) {
    if (std::string inc = system_include(t); !inc.empty()) return inc;
    if (has_word(t, "__host__")) return "__host__";
  }
  for (const auto& o : problem.compiler_options())
    if (!nvrtc_option(o)) return o;
  return {};
}

CompilerDecision decide_by_compiling(CompileRequest request) {
  request.compiler = Compiler::Nvrtc;
  const CompileResult nvrtc = compile(request);
  if (nvrtc.ok) return {Compiler::Nvrtc, "NVRTC compiles the default configuration"};
  if (!nvrtc_failure_needs_nvcc(nvrtc))
    return {Compiler::Nvrtc, fmt::format("the default configuration fails with NVRTC for a reason nvcc shares: {}",
                                         bare_error(nvrtc))};
  request.compiler = Compiler::Nvcc;
  const CompileResult nvcc = compile(request);
  if (nvcc.ok) return {Compiler::Nvcc, fmt::format("{}; nvcc compiles the default configuration", bare_error(nvrtc))};
  return {Compiler::Nvrtc, fmt::format("{}; nvcc fails too: {}", bare_error(nvrtc), bare_error(nvcc))};
}

}  // namespace

std::string CompilerDecision::describe() const {
  return fmt::format("{} ({})", compiler_display_name(compiler), reason);
}

bool nvrtc_failure_needs_nvcc(const CompileResult& r) {
  if (r.ok) return false;
  for (std::string_view text : {std::string_view(r.log), std::string_view(r.error)})
    if (contains(text, "cannot open source file") || contains(text, "not allowed in JIT mode") ||
        contains(text, "unrecognized option") || contains(text, "NVRTC_ERROR_INVALID_OPTION"))
      return true;
  return false;
}

std::string compiler_switch_note(Compiler used) {
  return used == Compiler::Nvcc ? "compiled with nvcc; --compiler nvrtc to use NVRTC"
                                : "compiled with NVRTC; --compiler nvcc to use nvcc";
}

CompileResult detail::compile_dispatch(const CompileRequest& request, bool& unknown_name, CompileFn nvrtc,
                                       CompileFn nvcc) {
  auto noted = [](CompileResult r, Compiler used) {
    if (!r.ok) r.error += " (" + compiler_switch_note(used) + ")";
    return r;
  };
  if (request.compiler == Compiler::Nvcc) return noted(nvcc(request, unknown_name), Compiler::Nvcc);
  CompileResult first = nvrtc(request, unknown_name);
  if (request.compiler == Compiler::Nvrtc || first.ok || unknown_name || !nvrtc_failure_needs_nvcc(first))
    return noted(std::move(first), Compiler::Nvrtc);
  // The kernel needs nvcc: its answer is the one that says what is wrong, if anything.
  return noted(nvcc(request, unknown_name), Compiler::Nvcc);
}

CompilerDecision decide_compiler(const KernelProblem& problem, const std::string& arch) {
  if (problem.compiler() != Compiler::Auto)
    return {problem.compiler(), "named by --compiler or cutune.Compiler"};
  const std::string hint = nvcc_hint(problem);
  if (hint.empty())
    return {Compiler::Nvrtc,
            "nothing in the kernel names a need for nvcc: no host or standard header, no __host__ code, NVRTC's "
            "options only; a configuration NVRTC refuses as host code is compiled by nvcc",
            true};
  CompileRequest request = compile_request_with(problem, problem.space().default_config(), arch, Compiler::Auto);
  request.arch.clear();  // the decision is the source's, whatever the target
  const std::string key = compile_key(request, 0);
  request.arch = arch;
  // One decision per problem content, whichever thread or call asks first; the lock is held
  // through the compile so that no second one starts.
  static std::mutex mutex;
  static std::map<std::string, CompilerDecision> decided;
  std::lock_guard lock(mutex);
  if (auto it = decided.find(key); it != decided.end()) return it->second;
  CompilerDecision d = decide_by_compiling(std::move(request));
  d.reason = fmt::format("the kernel has {}: {}", hint, d.reason);
  return decided.emplace(key, std::move(d)).first->second;
}

}  // namespace cutune::jit
