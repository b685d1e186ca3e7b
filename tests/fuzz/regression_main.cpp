// Corpus regression runner: feeds every file given (folders: every file under them, in
// name order) once to the target's LLVMFuzzerTestOneInput, without libFuzzer, so that the
// corpora of tests/fuzz/corpus/ run as ordinary tests in every build (ctest -L
// fuzz-regression). A crash or an uncaught exception fails the test; so does an input that
// takes longer than CUTUNE_FUZZ_REGRESSION_MAX_S seconds (default 10, as -timeout=10 when
// fuzzing; 0 turns the check off).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder\n", argv[i]);
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...  (no inputs found)\n", argv[0]);
    return 1;
  }
  double max_s = 10;
  if (const char* env = std::getenv("CUTUNE_FUZZ_REGRESSION_MAX_S")) max_s = std::atof(env);
  const bool verbose = std::getenv("CUTUNE_FUZZ_REGRESSION_VERBOSE") != nullptr;

  double slowest_s = 0;
  fs::path slowest;
  int too_slow = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    if (verbose) std::fprintf(stderr, "running %s (%zu bytes)\n", file.c_str(), bytes.size());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > slowest_s) {
      slowest_s = s;
      slowest = file;
    }
    if (max_s > 0 && s > max_s) {
      std::fprintf(stderr, "too slow: %s took %.1f s (limit %.1f s)\n", file.c_str(), s, max_s);
      ++too_slow;
    }
  }
  std::printf("ran %zu inputs; slowest %.3f s (%s)\n", files.size(), slowest_s,
              slowest.filename().c_str());
  return too_slow == 0 ? 0 : 1;
}
