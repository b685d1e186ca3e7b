#include "cutune/process/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace cutune::process {
namespace {

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Reads exactly `size` bytes before `deadline` (if any). false on EOF, error or timeout.
bool read_all(int fd, char* data, std::size_t size,
              std::optional<std::chrono::steady_clock::time_point> deadline, bool* timed_out) {
  while (size > 0) {
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
      if (r < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      if (r == 0) {
        if (timed_out) *timed_out = true;
        return false;
      }
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;  // end of file: the writer is gone
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool write_frame(int fd, const Frame& frame) {
  const std::uint64_t size = frame.size();
  char header[8];
  std::memcpy(header, &size, sizeof size);
  return write_all(fd, header, sizeof header) && write_all(fd, frame.data(), frame.size());
}

std::optional<Frame> read_frame(int fd, std::optional<std::chrono::milliseconds> timeout, bool* timed_out) {
  if (timed_out) *timed_out = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + *timeout;
  char header[8];
  if (!read_all(fd, header, sizeof header, deadline, timed_out)) return std::nullopt;
  std::uint64_t size = 0;
  std::memcpy(&size, header, sizeof size);
  if (size > (std::uint64_t{1} << 34)) return std::nullopt;  // not a frame of ours
  Frame frame(size, '\0');
  if (!read_all(fd, frame.data(), frame.size(), deadline, timed_out)) return std::nullopt;
  return frame;
}

namespace {
constexpr int kPipeBytes = 1 << 20;  // Linux's default pipe-max-size
}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("Subprocess: empty argv");
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork(): between fork and exec only
  // async-signal-safe calls are allowed (the parent has threads).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    ::dup2(in[0], STDIN_FILENO);   // dup2 clears O_CLOEXEC on the new descriptors
    ::dup2(out[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  // Room for a request queued behind the one the child is working on, and for its answer,
  // without either side's write waiting for the other's read (a caller may queue requests:
  // GpuWorker keeps two in flight). Best effort: the kernel may cap it (pipe-max-size).
  for (int fd : {in[1], out[0]}) ::fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
  to_child_ = in[1];
  from_child_ = out[0];
  // A child that dies must not kill the tuner with SIGPIPE on the next write.
  ::signal(SIGPIPE, SIG_IGN);
}

void Subprocess::detach() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0 && !status_) {
    // Reaped in the background, so that no zombie outlives it in a long-lived process.
    std::thread([pid = pid_] {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }).detach();
  }
  pid_ = -1;
}

Subprocess::~Subprocess() {
  // Closing its stdin asks a worker to exit (a GPU worker then releases its context
  // cleanly); one that does not within the grace period is killed.
  if (to_child_ >= 0) ::close(to_child_);
  for (int i = 0; i < 200 && !status_ && pid_ > 0; ++i) {
    reap(false);
    if (!status_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill();
  if (from_child_ >= 0) ::close(from_child_);
}

std::optional<Frame> Subprocess::receive(std::optional<std::chrono::milliseconds> timeout) {
  return read_frame(from_child_, timeout, &timed_out_);
}

void Subprocess::reap(bool block) {
  if (status_ || pid_ <= 0) return;
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid_) status_ = status;
}

void Subprocess::kill() {
  if (pid_ <= 0 || status_) return;
  ::kill(pid_, SIGKILL);
  reap(true);
}

std::string Subprocess::exit_description() {
  for (int i = 0; i < 100 && !status_; ++i) {
    reap(false);
    if (!status_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!status_) kill();
  if (!status_) return "unknown";
  const int s = *status_;
  if (WIFEXITED(s)) return "exit " + std::to_string(WEXITSTATUS(s));
  if (WIFSIGNALED(s)) return "signal " + std::to_string(WTERMSIG(s)) + " (" + ::strsignal(WTERMSIG(s)) + ")";
  return "status " + std::to_string(s);
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

}  // namespace cutune::process
