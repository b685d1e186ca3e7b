#include "cutune/templates/catalog.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "cutune/model/errors.hpp"

namespace fs = std::filesystem;

namespace cutune::templates {
namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

std::vector<fs::path> template_dirs(const fs::path& explicit_dir) {
  if (!explicit_dir.empty()) return {explicit_dir};
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("CUTUNE_TEMPLATE_DIR"); env && *env) dirs.emplace_back(env);
  fs::path d = executable_dir();
  for (int up = 0; up < 5 && !d.empty(); ++up, d = d.parent_path()) {
    if (fs::is_directory(d / "kernel_templates")) dirs.push_back(d / "kernel_templates");
    if (fs::is_directory(d / "share/cutune/kernel_templates"))
      dirs.push_back(d / "share/cutune/kernel_templates");
    if (d == d.parent_path()) break;
  }
  dirs.emplace_back(CUTUNE_SOURCE_TEMPLATE_DIR);
  return dirs;
}

std::map<std::string, fs::path> builtin_templates(const fs::path& explicit_dir) {
  for (const auto& dir : template_dirs(explicit_dir)) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::map<std::string, fs::path> kernels;
    for (const auto& folder : fs::directory_iterator(dir, ec)) {
      if (!folder.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(folder.path(), ec))
        if (f.path().extension() == ".json") kernels.emplace(f.path().stem().string(), f.path());
    }
    if (!kernels.empty()) return kernels;
  }
  return {};
}

fs::path resolve_template(const std::string& kernel, const fs::path& explicit_dir) {
  if (kernel.empty()) throw InputError("no kernel given");
  if (kernel.size() > 5 && kernel.ends_with(".json")) {
    if (!fs::exists(kernel)) throw InputError(fmt::format("{}: no such file", kernel));
    return kernel;
  }
  auto kernels = builtin_templates(explicit_dir);
  if (auto it = kernels.find(kernel); it != kernels.end()) return it->second;
  std::string names;
  for (const auto& [name, path] : kernels) names += (names.empty() ? "" : ", ") + name;
  throw InputError(fmt::format("unknown kernel '{}' (built-in: {}; or give a T1 .json file)", kernel,
                               names.empty() ? "none found" : names));
}

}  // namespace cutune::templates
