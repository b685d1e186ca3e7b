#include "cutune/jit/nvcc_compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "compile_log.hpp"
#include "compiler_choice_detail.hpp"
#include "cutune/jit/cubin_symbols.hpp"
#include "cutune/jit/global_functions.hpp"

namespace cutune::jit {
namespace fs = std::filesystem;
namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv with stdout and stderr into `log_file`; the exit status (waitpid's), or -1 when it
// could not start. The child dies with its parent: a compile worker killed for a timeout
// takes its nvcc with it.
int run(const std::vector<std::string>& argv, const fs::path& log_file) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_in = ::open("/dev/null", O_RDONLY);
    if (fd < 0 || null_in < 0) ::_exit(127);
    ::dup2(null_in, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

// A private folder under the temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "cutune-nvcc-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;  // one owner removes the folder
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A header name that stays inside the folder it is written to ("sub/x.h", not "../x.h").
bool inside(const fs::path& name) {
  if (name.empty() || name.is_absolute()) return false;
  return std::none_of(name.begin(), name.end(), [](const fs::path& part) { return part == ".."; });
}

// Host code that takes each template kernel's address: nvcc then instantiates it, as NVRTC
// does for a name expression. Non-template kernels are in the cubin anyway.
std::string template_references(const std::vector<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  for (const auto& name : names) {
    if (name.find('<') == std::string::npos) continue;
    if (out.empty()) out = "\n#line 1 \"cutune-kernel-references\"\n";
    out += fmt::format("void* cutune_kernel_reference_{} = (void*)&{};\n", i++, name);
  }
  return out;
}

std::string without_folder(std::string log, const std::string& folder) {
  const std::string prefix = folder + "/";
  for (std::size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at)) log.erase(at, prefix.size());
  return log;
}

std::string exit_text(int status) {
  if (status < 0) return "could not be started";
  if (WIFEXITED(status)) return fmt::format("exited with {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "failed";
}

// The cubin's symbols of request.kernel_names into `result`, or its error.
void find_kernels(const CompileRequest& request, CompileResult& result, bool& unknown_name) {
  const auto entries = cubin_entry_symbols(std::string_view(result.cubin.data(), result.cubin.size()));
  for (const auto& name : request.kernel_names) {
    auto symbol = find_entry_symbol(entries, name);
    if (!symbol) {
      unknown_name = true;
      std::vector<std::string> have;
      for (const auto& e : entries) have.push_back(e.demangled);
      result.error = detail::unknown_kernel_message(
          request, {name}, fmt::format("nvcc's cubin has {}", have.empty() ? "no kernel" : fmt::format("{}", fmt::join(have, ", "))));
      result.lowered_names.clear();
      return;
    }
    result.lowered_names.push_back(std::move(*symbol));
  }
  result.ok = true;
}

}  // namespace

fs::path nvcc_path(std::vector<std::string>* tried) {
  std::vector<fs::path> candidates;
  if (const char* v = std::getenv("CUTUNE_NVCC"); v && *v) candidates.emplace_back(v);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back(fs::path(v) / "bin" / "nvcc");
  candidates.emplace_back(CUTUNE_NVCC_EXECUTABLE);
  if (const char* path = std::getenv("PATH"); path && *path) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty()) candidates.push_back(fs::path(dir) / "nvcc");
  }
  candidates.emplace_back("/usr/local/cuda/bin/nvcc");
  for (const auto& c : candidates) {
    if (executable(c)) return c;
    if (tried && !c.empty()) tried->push_back(c.string());
  }
  return {};
}

std::string nvcc_identity() {
  const fs::path nvcc = nvcc_path();
  if (nvcc.empty()) return {};
  static std::mutex mutex;
  static std::map<fs::path, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(nvcc); it != known.end()) return it->second;
  std::string release;
  try {
    TempDir dir;
    const fs::path log = dir.path() / "version.txt";
    if (run({nvcc.string(), "--version"}, log) == 0)
      for (const auto& line : detail::log_lines(read_file(log)))
        if (line.find("release") != std::string::npos) release = detail::trim(line);
  } catch (const std::exception&) {
  }
  return known.emplace(nvcc, fmt::format("{} ({})", release, nvcc.string())).first->second;
}

CompileResult compile_with_nvcc(const CompileRequest& request, bool& unknown_name) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  unknown_name = false;
  CompileResult result;
  std::vector<std::string> tried;
  const fs::path nvcc = nvcc_path(&tried);
  if (nvcc.empty()) {
    result.error = fmt::format("nvcc not found (tried {}; set CUTUNE_NVCC to its path)", fmt::join(tried, ", "));
    return result;
  }
  TempDir dir;
  for (const auto& [name, content] : request.headers)
    if (inside(name)) {
      std::error_code ec;
      fs::create_directories((dir.path() / name).parent_path(), ec);
      std::ofstream(dir.path() / name, std::ios::binary) << content;
    }
  const fs::path source = dir.path() / fs::path(request.source_name.empty() ? "kernel.cu" : request.source_name).filename();
  std::ofstream(source, std::ios::binary) << request.source << template_references(request.kernel_names);
  const fs::path cubin = dir.path() / "kernel.cubin", log = dir.path() / "nvcc.log";

  result.full_options = {"-cubin", "-arch=" + request.arch};
  if (!request.source_dir.empty()) result.full_options.push_back("-I" + request.source_dir);
  for (const auto& o : request.options) result.full_options.push_back(o);
  std::vector<std::string> argv{nvcc.string()};
  argv.insert(argv.end(), result.full_options.begin(), result.full_options.end());
  for (const auto& a : {std::string("-o"), cubin.string(), source.string()}) argv.push_back(a);
  const int status = run(argv, log);
  result.log = detail::trim(without_folder(read_file(log), dir.path().string()));

  if (status != 0) {
    const std::string first = detail::trim(detail::first_error_line(result.log));
    if (first.rfind("cutune-kernel-references", 0) == 0) {
      unknown_name = true;  // the template named no function: the reference did not compile
      result.error = detail::unknown_kernel_message(request, request.kernel_names, first);
    } else {
      result.error = first.empty() ? fmt::format("nvcc {}", exit_text(status)) : "nvcc: " + first;
    }
  } else if (std::string line = detail::redefined_parameter(request.source, result.log); !line.empty()) {
    result.error = "the kernel redefines a tuning parameter's macro: " + line;
  } else {
    const std::string bytes = read_file(cubin);
    result.cubin.assign(bytes.begin(), bytes.end());
    if (result.cubin.empty()) result.error = "nvcc produced no cubin";
    else find_kernels(request, result, unknown_name);
  }
  if (!result.ok) result.cubin.clear();
  result.compile_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return result;
}

}  // namespace cutune::jit
