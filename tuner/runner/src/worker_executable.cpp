#include "cutune/runner/worker_executable.hpp"

#include <cstdlib>
#include <filesystem>

#include "cutune/process/subprocess.hpp"

namespace cutune::runner {

std::string worker_executable() {
  if (const char* env = std::getenv("CUTUNE_WORKER"); env && *env) return env;
  const std::filesystem::path self = process::self_executable();
  if (!self.empty()) {
    const auto beside = self.parent_path() / "cutune-worker";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  return CUTUNE_WORKER_BUILD_PATH;
}

}  // namespace cutune::runner
