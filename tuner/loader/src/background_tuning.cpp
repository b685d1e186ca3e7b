#include "background_tuning.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace cutune::loader::detail {
namespace {

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
}

/// "reduction-n=16777216.log": the key as a file name (anything but [A-Za-z0-9=.,_-] as '_').
std::string log_name(const db::TuningClaim& key) {
  std::string name = key.kernel + "-" + key.problem_key + "-" + key.gpu_model;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::strchr("=.,_-", c) == nullptr) c = '_';
  return name + ".log";
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("status {}", status);
}

/// posix_spawn's objects, released on every path out.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;  // owns the two posix_spawn objects
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

pid_t spawn_detached(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&s.actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&s.actions, 1, 2);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  // The application's descriptors (sockets, an MPI library's pipes) are not the tuner's.
  posix_spawn_file_actions_addclosefrom_np(&s.actions, 3);
#endif
  // A session of its own: no controlling terminal, so a Ctrl-C or hang-up of the application's
  // terminal does not reach it. Signals at their defaults, none blocked: the application may
  // ignore or block some, and the tuner must be killable.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &s.actions, &s.attr, args.data(), environ);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  return pid;
}

BackgroundTuning::BackgroundTuning(OnMissSettings settings)
    : settings_(std::move(settings)), host_(host_name()), self_(::getpid()) {
  watcher_ = std::thread([this] { watch(); });
}

BackgroundTuning::~BackgroundTuning() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  watcher_.join();
  for (const Job& j : jobs_)
    if (j.state == Job::State::Running)
      std::thread([pid = j.pid] { ::waitpid(pid, nullptr, 0); }).detach();  // no zombie while the application lives
}

void BackgroundTuning::submit(TuneJob job, Notify notify) {
  {
    std::lock_guard lock(mutex_);
    job.key.holder_pid = self_;
    job.key.holder_host = host_;
    Job& j = jobs_.emplace_back();
    j.job = std::move(job);
    j.notify = std::move(notify);
    ++pending_;
  }
  wake_.notify_all();
}

bool BackgroundTuning::wait_idle(double timeout_s) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return pending_ == 0; });
}

void BackgroundTuning::watch() {
  // A tuner of ours is looked at every 100 ms (waitpid costs nothing); the DB every poll_s.
  constexpr auto kTick = std::chrono::milliseconds(100);
  std::unique_lock lock(mutex_);
  while (!stop_) {
    std::vector<Job*> active;
    for (Job& j : jobs_)
      if (j.state != Job::State::Done) active.push_back(&j);
    lock.unlock();
    for (Job* j : active) step(*j);
    lock.lock();
    if (pending_ == 0) {
      idle_.notify_all();
      wake_.wait(lock, [&] { return stop_ || pending_ > 0; });  // nothing to watch: sleep until a job comes
    } else {
      wake_.wait_for(lock, kTick);
    }
  }
}

void BackgroundTuning::step(Job& j) {
  try {
    if (j.state == Job::State::Running) check_child(j);
    else if (j.state == Job::State::Pending && Clock::now() >= j.next_look) look(j);
  } catch (const std::exception& e) {
    if (j.state == Job::State::Running) return;  // the tuner runs on: look again at the next tick
    finish(j, TuneEvent::Kind::Failed, fmt::format("not tuned: {}", e.what()));
  }
}

void BackgroundTuning::look(Job& j) {
  j.next_look = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings_.poll_s));
  if (winner_stored(j)) return finish(j, TuneEvent::Kind::Stored, "tuned on first use by another process");
  if (running_own_) return;  // one tuning at a time: this one waits its turn
  if (settings_.tuner.empty()) return finish(j, TuneEvent::Kind::Failed, settings_.no_tuner);
  std::error_code ec;
  if (settings_.db.has_parent_path()) std::filesystem::create_directories(settings_.db.parent_path(), ec);
  db::Store store = db::Store::open(settings_.db, /*create=*/true);
  const db::TuningClaim held = store.claim_tuning(j.job.key, settings_.claim_s);
  if (held.held_by(j.job.key)) return start(j, store);
  const std::string holder = fmt::format("pid {} on {}, started {}", held.holder_pid, held.holder_host, held.started_at);
  if (holder == j.holder_told) return;
  j.holder_told = holder;
  j.notify({TuneEvent::Kind::Waiting, fmt::format("another process tunes it ({}); waiting for its winner", holder)});
}

void BackgroundTuning::start(Job& j, db::Store& store) {
  j.mine = j.job.key;
  std::filesystem::create_directories(settings_.log_dir);
  j.log = settings_.log_dir / log_name(j.job.key);
  std::vector<std::string> argv{settings_.tuner.string(), "tune", j.job.kernel_file.string()};
  if (!j.job.problem.empty()) argv.insert(argv.end(), {"--problem", j.job.problem});
  argv.insert(argv.end(), {"--time-budget", fmt::format("{}", settings_.budget_s), "--db", settings_.db.string(),
                           "--device", std::to_string(j.job.device)});
  if (!j.job.objective.empty()) argv.insert(argv.end(), {"--objective", j.job.objective});
  if (!j.job.cache_dir.empty()) argv.insert(argv.end(), {"--cache-dir", j.job.cache_dir.string()});
  try {
    j.pid = spawn_detached(argv, j.log);
  } catch (...) {
    store.release_tuning_claim(j.mine);
    throw;
  }
  j.state = Job::State::Running;
  j.started = Clock::now();
  running_own_ = true;
  try {
    store.set_claim_tuner(j.mine, j.pid);  // for the others' information only
  } catch (const std::exception&) {
  }
  j.notify({TuneEvent::Kind::Started,
            fmt::format("tuning in the background (pid {} on {}, started {}, budget {} s, log {})", j.pid, host_,
                        db::utc_now_iso(), settings_.budget_s, j.log.string())});
}

void BackgroundTuning::check_child(Job& j) {
  int status = 0;
  const pid_t r = ::waitpid(j.pid, &status, WNOHANG);
  if (r == 0 || (r == -1 && errno == EINTR)) return;
  std::string how;
  if (r == j.pid) how = exit_text(status);
  else if (errno == ECHILD && (::kill(j.pid, 0) == 0 || errno == EPERM)) return;  // reaped by the application, alive
  else how = "ended (its status was collected elsewhere)";
  running_own_ = false;
  const double took_s = std::chrono::duration<double>(Clock::now() - j.started).count();
  {
    db::Store store = db::Store::open(settings_.db, /*create=*/true);
    store.release_tuning_claim(j.mine);
  }
  if (winner_stored(j))
    return finish(j, TuneEvent::Kind::Stored,
                  fmt::format("tuned on first use (pid {} on {}, {:.1f} s, {})", j.pid, host_, took_s, how));
  finish(j, TuneEvent::Kind::Failed,
         fmt::format("background tuning stored no winner (pid {}: {} after {:.1f} s; log {})", j.pid, how, took_s,
                     j.log.string()));
}

void BackgroundTuning::finish(Job& j, TuneEvent::Kind kind, std::string text) {
  j.state = Job::State::Done;
  try {
    j.notify({kind, std::move(text)});
  } catch (...) {
    // The loader's switch reports its own failures in the selection; the watcher goes on.
  }
  std::lock_guard lock(mutex_);
  --pending_;
}

bool BackgroundTuning::winner_stored(const Job& j) const {
  std::error_code ec;
  if (!std::filesystem::exists(settings_.db, ec)) return false;
  const db::Store store = db::Store::open(settings_.db, /*create=*/false);
  db::WinnerFilter f;
  f.kernel = j.job.key.kernel;
  f.problem = j.job.key.problem_key;
  f.objective = j.job.objective;
  for (const db::Winner& w : store.winners(f))
    if (w.gpu_model == j.job.key.gpu_model) return true;
  return false;
}

}  // namespace cutune::loader::detail
