#pragma once
// Tuning on first use in the background (loader.hpp says what it does for the application).
// One watcher thread per loader takes the claims in the DB, starts the `cutune tune` processes
// one at a time (two tunings at once on one GPU would time each other), notices when one ends
// or when another process's winner lands in the DB, and tells the loader, which switches the
// kernel. No GPU here: the GPU work is the tuner's, the switch the loader's.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cutune/db/store.hpp"
#include "on_miss_settings.hpp"

namespace cutune::loader::detail {

/// One problem to tune.
struct TuneJob {
  std::filesystem::path kernel_file;  ///< the T1 file the loader loaded (`cutune tune` takes it)
  std::string problem;                ///< as the application gave it; "" = the kernel's defaults
  db::TuningClaim key;                ///< kernel, problem_key, gpu_model, objective; the holder is filled in here
  std::string objective;              ///< `--objective` of the tuner; "" = the kernel's own
  int device = 0;                     ///< `--device`
  /// `--cache-dir`: the loader's own, so that the winner's cubin is there when it switches; ""
  /// = the tuner's default (the same default as the loader's).
  std::filesystem::path cache_dir;
};

/// What happened to a job; `text` is for Selection::on_miss.
struct TuneEvent {
  enum class Kind { Started, Waiting, Stored, Failed };
  Kind kind = Kind::Started;
  std::string text;
};

class BackgroundTuning {
 public:
  /// Called on the watcher thread; Stored and Failed are the last event of a job.
  using Notify = std::function<void(const TuneEvent&)>;
  explicit BackgroundTuning(OnMissSettings settings);
  /// Stops the watcher. A tuner still running goes on, detached (its winner lands in the DB for
  /// the next start of the application); a thread of its own reaps it.
  ~BackgroundTuning();
  BackgroundTuning(const BackgroundTuning&) = delete;  // owns the watcher thread
  BackgroundTuning& operator=(const BackgroundTuning&) = delete;

  void submit(TuneJob job, Notify notify);
  /// True once every submitted job has had its last event (at most timeout_s).
  bool wait_idle(double timeout_s);
  const OnMissSettings& settings() const { return settings_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    TuneJob job;
    Notify notify;
    enum class State { Pending, Running, Done } state = State::Pending;
    Clock::time_point next_look{};
    db::TuningClaim mine;  ///< the claim this process made, once it tunes
    pid_t pid = 0;
    Clock::time_point started;
    std::filesystem::path log;
    std::string holder_told;  ///< the other holder last reported (Waiting once per holder)
  };
  void watch();
  void step(Job& j);
  void look(Job& j);
  void start(Job& j, db::Store& store);
  void check_child(Job& j);
  void finish(Job& j, TuneEvent::Kind kind, std::string text);
  bool winner_stored(const Job& j) const;

  OnMissSettings settings_;
  std::string host_;
  pid_t self_ = 0;
  bool running_own_ = false;  ///< a tuner of ours runs (watcher thread only)

  std::mutex mutex_;  ///< guards jobs_, pending_, stop_
  std::condition_variable wake_, idle_;
  std::list<Job> jobs_;  ///< a list: the watcher keeps pointers while submit() appends
  std::size_t pending_ = 0;
  bool stop_ = false;
  std::thread watcher_;
};

/// Starts `argv` (argv[0] an executable path) in a session of its own, stdin from /dev/null,
/// stdout and stderr into `log`, every signal at its default action, no descriptor of ours
/// beyond 2: a crash or a kill of it, or a Ctrl-C to the application's terminal, stays on its
/// side. Returns its pid; throws std::runtime_error when it cannot start.
pid_t spawn_detached(const std::vector<std::string>& argv, const std::filesystem::path& log);

}  // namespace cutune::loader::detail
