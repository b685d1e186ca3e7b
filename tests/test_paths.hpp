#pragma once
// Where tests find the templates and their data. The compiled-in source paths are the
// default; the environment overrides them, because on the lent GPU the checkout lives
// elsewhere than where the tests were built.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace cutune::testing {

inline std::filesystem::path template_dir() {
  const char* env = std::getenv("CUTUNE_TEMPLATE_DIR");
  return env && *env ? env : CUTUNE_TEMPLATE_DIR;
}
inline std::filesystem::path test_data_dir() {
  const char* env = std::getenv("CUTUNE_TEST_DATA_DIR");
  return env && *env ? env : CUTUNE_TEST_DATA_DIR;
}
/// The test material from outside the repository (real kernels by others, Kernel Tuner's
/// format files, recorded spaces: tests/material/manifest.txt): $CUTUNE_TEST_MATERIAL, else
/// the folder CMake's CUTUNE_TEST_MATERIAL named (default ../shared beside the checkout).
inline std::filesystem::path material_dir() {
  const char* env = std::getenv("CUTUNE_TEST_MATERIAL");
  return env && *env ? env : CUTUNE_TEST_MATERIAL;
}
/// material_dir() / relative, for a test case tagged [material] (one without the tag fails
/// here, so that `ctest -L material` lists every test that needs the material). When that file
/// or folder is not there, the test case ends as skipped, naming it: tests/test_main.cpp
/// reports it so and exits 77, which CTest shows as Skipped.
std::filesystem::path material(const std::string& relative);
inline std::filesystem::path template_json(const std::string& name) {
  return template_dir() / name / (name + ".json");
}

/// A temporary file path, removed (with SQLite's -wal/-shm companions) on destruction.
class TempPath {
 public:
  explicit TempPath(const std::string& stem) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            (stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  }
  ~TempPath() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove_all(path_.string() + suffix, ec);
  }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A fresh directory under the system temp dir, removed (with everything in it) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& stem = "cutune_test") {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            (stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to the file `name` in it and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::filesystem::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace cutune::testing
