#pragma once
// Runs the built cutune as a subprocess for CLI tests: exit code, stdout and stderr, and the
// checks every bad-input case makes (exit 2, one line naming the culprit, nothing on stdout).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace cutune::testing::cli {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

struct CliResult {
  int status = -1;  ///< exit code; -1 if it did not exit normally
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory under the system temp dir, removed when the object goes away.
class CliTempDir {
 public:
  CliTempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("cutune_test_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~CliTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  CliTempDir(const CliTempDir&) = delete;
  CliTempDir& operator=(const CliTempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(path_)) names.insert(e.path().string());
    return names;
  }

 private:
  fs::path path_;
};

// Runs the built CLI with `args`, stdout and stderr captured in files of a private
// directory (no pipes, so a chatty child can never block).
inline CliResult run_cli(const std::vector<std::string>& args, std::optional<double> kill_after_s = std::nullopt) {
  CliTempDir io;
  const std::string out_path = io / "stdout", err_path = io / "stderr";
  // The cutune beside this test binary when there is one (the lent GPU gets both copied to
  // one folder), else the one in the build tree.
  std::string cli = CUTUNE_CLI_PATH;
  if (std::error_code ec; fs::exists(fs::read_symlink("/proc/self/exe", ec).parent_path() / "cutune"))
    cli = (fs::read_symlink("/proc/self/exe", ec).parent_path() / "cutune").string();
  std::vector<std::string> argv_s{cli};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  int wstatus = 0;
  if (kill_after_s) {
    // kill -9 at a chosen moment (resume after the tuner is killed at any point).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(*kill_after_s);
    while (std::chrono::steady_clock::now() < deadline && waitpid(pid, &wstatus, WNOHANG) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(pid, SIGKILL);  // harmless if it already ended (not reaped yet)
  }
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno == ECHILD) break;  // reaped by the WNOHANG poll above
    REQUIRE(errno == EINTR);
  }
  CliResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

inline std::string describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string cmd = "cutune";
  for (const auto& a : args) cmd += " " + a;
  return cmd + "\n  exit " + std::to_string(r.status) + "\n  stdout: " + r.out +
         "\n  stderr: " + r.err;
}

inline std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Bad input: exit 2, nothing on stdout, one line on stderr naming each of `names`.
inline CliResult expect_bad_input(const std::vector<std::string>& args,
                           const std::vector<std::string>& names) {
  CliResult r = run_cli(args);
  INFO(describe(args, r));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, StartsWith("cutune: "));
  for (const auto& n : names) CHECK_THAT(r.err, Contains(n));
  return r;
}

}  // namespace cutune::testing::cli
