#pragma once
// cutune::loader: tuned kernels in applications. Ask a source of winners (the
// cutune SQLite DB or a deployment wisdom file) for the best configuration of a kernel on
// the GPU the process runs on, compile it with NVRTC or take it from the compile cache the
// tuner shares, and launch it.
//
//   cutune::loader::Loader loader({.winners = "app.wisdom.json"});
//   auto k = loader.load("reduction", "n=16777216");       // GPU 0; compiled once
//   std::cout << k->selection().describe() << '\n';          // which rung, tuned where
//   void* args[] = {&d_out, &d_in, &n};                      // the T1 arguments, in order
//   k->launch(args, stream);
//
// Lookup ladder (the answer says which rung gave it): the exact GPU model and problem; a
// selector distilled from a sweep of shapes on this GPU model (`cutune distill`), which picks
// one of a few configurations by thresholds on the problem variables; the same GPU model and
// the nearest problem; the same compute capability (nearest problem); the template default.
// The exact winner goes before the selector: at a tuned shape it is the measured best, the
// selector's pick at most the distillation's bound slower. Nearest: the smallest sum over problem variables of
// |ln(a / b)| (per dimension, so 4096x64 is not "near" 512x512); problems that differ in a
// variable that is 0 or negative in either, or in which variables they have, never match.
//
// Tuned on first use (LoaderOptions::on_miss, or CUTUNE_ON_MISS=tune): when the ladder finds no
// winner for this GPU model and problem (its rung is the nearest problem, the same compute
// capability or the template default), load() still returns at once with that configuration,
// and a separate `cutune tune` process tunes the problem in the background, on data generated
// from the kernel's T1 fills (never the application's buffers), into a cutune DB. When the
// winner is stored, the TunedKernel the application holds switches to it for its later
// launches (selection() then says "tuned on first use"). The processes of one application
// (MPI ranks, a job array) sharing the DB tune each problem once: a claim in the DB decides
// which one tunes; the others watch the DB for the winner. The tuning process runs in a session
// of its own with its output in a log beside the DB: its crash or kill never reaches the
// application, whose kernel stays on the configuration it has.
//
// Every configuration read from the DB or a wisdom file is checked against the kernel's
// declared space and restrictions before it becomes a #define: a value outside it throws
// InputError naming the kernel, the parameter and the value, and nothing is compiled.
// Thread safety: every member function may be called from many threads; the same kernel
// is compiled (and loaded) once, the others wait for it.
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cutune/model/device_identity.hpp"

namespace cutune {
class KernelProblem;
struct ProblemInstance;
namespace db {
struct WisdomEntry;
}
}  // namespace cutune

namespace cutune::loader {

/// Where the built-in templates of an installed cutune are: the package config defines
/// CUTUNE_INSTALLED_TEMPLATE_DIR (<prefix>/share/cutune/kernel_templates) for its users.
inline std::filesystem::path installed_template_dir() {
#ifdef CUTUNE_INSTALLED_TEMPLATE_DIR
  return CUTUNE_INSTALLED_TEMPLATE_DIR;
#else
  return {};
#endif
}

/// Tuning on first use (the file comment above says what it does).
struct OnMiss {
  enum class Mode { Off, Tune };
  Mode mode = Mode::Off;
  /// Seconds of tuning (`cutune tune --time-budget`); the tuner's start, its compiles and the
  /// finalists' re-measurement come on top.
  double budget_s = 10.0;
  /// The cutune DB the tuning stores its results in and the claims are made in. Empty:
  /// $CUTUNE_ON_MISS_DB, else LoaderOptions::winners when it is a cutune DB, else $CUTUNE_DB,
  /// else ~/.local/share/cutune/cutune.db (where `cutune tune` stores by default).
  std::filesystem::path db;
  /// The `cutune` command. Empty: $CUTUNE_BIN (the command, or the folder holding it), else
  /// `cutune` beside the executable, else on PATH (not found: nothing is tuned and selection()
  /// says so).
  std::filesystem::path tuner;
  /// Seconds between looks into the DB while another process holds the claim.
  double poll_s = 2.0;
};
/// OnMiss from the environment: CUTUNE_ON_MISS (off or tune; unset or empty: off),
/// CUTUNE_ON_MISS_BUDGET (seconds > 0), CUTUNE_ON_MISS_DB (the DB). Throws InputError, one
/// line naming the variable and its value, for a value it cannot take.
OnMiss on_miss_from_environment();

struct LoaderOptions {
  /// A cutune DB (opened read-only) or a wisdom file (told apart by content); empty:
  /// template defaults only.
  std::filesystem::path winners;
  /// Built-in templates: $CUTUNE_TEMPLATE_DIR when set, else this folder, else the
  /// catalog's search (beside the executable, the source tree).
  std::filesystem::path template_dir = installed_template_dir();
  /// The compile cache shared with the tuner; empty: $CUTUNE_CACHE_DIR, else
  /// ~/.cache/cutune/cubins. use_cache=false: neither read nor written.
  std::filesystem::path cache_dir;
  bool use_cache = true;
  /// Whose winners: "time", "energy" or a metric's name ("GFLOP/s"), as the tuning ranked
  /// them. "" = the objective the winners of the kernel were tuned for: the only one, else
  /// time when it is among them; with several others load() throws InputError asking for one.
  std::string objective;
  int device = 0;                  ///< GPU ordinal that load() uses
  /// Before the first launch of a configuration borrowed from another problem size or
  /// another GPU model (rungs 2 and 3), run it and the template default on generated data
  /// (the T1 fills) of the application's problem size and compare their outputs with the
  /// kernel's tolerance. On a mismatch the template default is used and the selection
  /// says why.
  bool verify_borrowed = false;
  /// Use the source's selectors (rung "selector"); false: the ladder without them, as before
  /// a distillation (what the regret study compares against).
  bool use_selectors = true;
  /// What load() does where no winner exists for this GPU model and problem; unset: what the
  /// environment says (on_miss_from_environment()), so an application can be switched to
  /// tuning on first use without a rebuild. The selector rung is no miss: a distilled selector
  /// is measured on this GPU model for the shapes between the tuned ones.
  std::optional<OnMiss> on_miss;
};

/// The numbers name the rungs (describe() prints them); Selector, added later, is tried second.
enum class Rung { Exact = 1, NearestProblem = 2, SameComputeCapability = 3, TemplateDefault = 4, Selector = 5 };
/// "exact", "nearest problem", "same compute capability", "template default", "selector"
const char* rung_name(Rung rung);

struct Selection {
  std::string kernel;       ///< the kernel's name (T1 / template)
  std::string problem;      ///< the problem asked for, canonical ("n=16777216")
  std::string gpu_model;    ///< the GPU asked for ("NVIDIA H200/sm_90")
  Rung rung = Rung::TemplateDefault;
  std::string config_key;   ///< Kernel Tuner's key, declared order ("256,4,1")
  std::vector<std::pair<std::string, std::string>> config;  ///< name -> value (Python str)
  double distance = 0.0;    ///< the nearest-problem distance to the tuned problem (0: same)
  /// Provenance of a tuned configuration (empty/0 for the template default).
  std::string source;       ///< "db:<path>" or "wisdom:<path>"
  std::string tuned_gpu;    ///< the GPU model it was tuned on
  std::string tuned_problem;
  std::int64_t run_id = 0;
  double median_ms = 0.0, default_ms = 0.0;
  std::string verdict;
  std::optional<DeviceIdentity> tuned_device;  ///< full identity when the source has it
  /// "not checked", "passed (max error E)", or "failed: ...; using the template default".
  std::string check = "not checked";
  /// Rung selector: which of its configurations, the decisions that led there, the bound
  /// and the shapes it was distilled from ("config 2 of 3 (n > 92681), within 5% of the best
  /// at 8 tuned shapes (worst 2.1%)"); "" otherwise.
  std::string selector;
  /// Tuning on first use: "tuning in the background (pid P on HOST, started T, budget B s)",
  /// "another process tunes it ...", "tuned on first use (...)" once switched, or why nothing
  /// was tuned; "" when on_miss is off or there was no miss.
  std::string on_miss;
  /// One line: rung, configuration, where and for what it was tuned.
  std::string describe() const;
};

struct LoaderStats {
  std::size_t nvrtc_compiles = 0;  ///< real NVRTC compiles
  std::size_t cache_hits = 0;      ///< cubins taken from the disk cache
  std::size_t memo_hits = 0;       ///< requests answered by an earlier one in this process
  double compile_ms = 0.0;         ///< sum over real compiles
};

/// A selection compiled to a cubin for one architecture (no GPU needed).
struct CompiledKernel {
  Selection selection;
  std::shared_ptr<const KernelProblem> problem;
  std::vector<std::uint32_t> config_index;  ///< cutune::Config::index
  std::string arch;
  std::string compile_key;  ///< the cache key (jit::compile_key), as the tuner computes it
  std::vector<char> cubin;
  /// The cubin's symbol of each of problem->kernel_names() (jit::CompileResult::lowered_names).
  std::vector<std::string> lowered_names;
  bool from_cache = false;
  double compile_ms = 0.0;  ///< of the original compile
};

/// A tuned kernel loaded on a GPU for one problem size, ready to launch: launch() may be
/// called from many threads at once. What it launches changes only when tuning on first use
/// stores a winner: the loader then switches it to the winner (one atomic pointer; a launch
/// already under way finishes with the configuration it started with).
class TunedKernel {
 public:
  ~TunedKernel();
  TunedKernel(const TunedKernel&) = delete;  // owns the loaded modules
  TunedKernel& operator=(const TunedKernel&) = delete;

  /// The selection launched now (after a borrowed configuration's check, its outcome). The
  /// reference stays valid as long as the TunedKernel, also after a switch.
  const Selection& selection() const { return current().selection; }
  const CompiledKernel& compiled() const { return *current().compiled; }
  /// Launches the configuration's launch sequence on `stream`. `args` has one pointer per
  /// T1 argument, in declared order, each pointing at the value (a CUdeviceptr for a
  /// vector, the scalar itself otherwise), as cuLaunchKernel's kernelParams. The calling
  /// thread must have the device's primary context current (the CUDA runtime's context;
  /// load() makes it current on the thread that calls it). Throws std::invalid_argument
  /// for a wrong argument count, cuda::DriverError when the driver refuses.
  void launch(std::span<void* const> args, CUstream stream = nullptr) const;
  std::size_t argument_count() const { return argument_count_; }

  struct Impl;  ///< opaque: the module and the resolved launches

 private:
  friend class Loader;
  /// What launch() launches and what selection() says, together: swapped as one.
  struct Plan {
    std::shared_ptr<const CompiledKernel> compiled;
    Selection selection;
    std::shared_ptr<Impl> impl;
  };
  TunedKernel(std::shared_ptr<const CompiledKernel> compiled, Selection selection, std::shared_ptr<Impl> impl,
              std::size_t argument_count);
  /// Acquire: the plan's fields, written before it was published, are seen whole (a plain
  /// load on x86-64; the launch stays within its 0.03 us).
  const Plan& current() const { return *plan_.load(std::memory_order_acquire); }
  /// The first plan's selection, to amend before the kernel is handed out.
  Selection& first_selection() { return plans_.front()->selection; }
  /// Publishes `next`; every earlier plan is kept until destruction, since a launch in another
  /// thread may still be reading the one it loaded.
  void switch_to(std::shared_ptr<Plan> next);
  /// The current plan with another on_miss text (same configuration).
  void set_on_miss(std::string text);

  std::atomic<const Plan*> plan_{nullptr};
  std::mutex plans_mutex_;  ///< guards plans_ (writers only; launch() never takes it)
  std::vector<std::shared_ptr<Plan>> plans_;
  std::size_t argument_count_ = 0;
};

class Loader {
 public:
  /// Reads the winners (throws InputError naming the file when it cannot be read, is not
  /// a cutune DB or wisdom file, or is malformed). Needs no GPU.
  explicit Loader(LoaderOptions options = {});
  ~Loader();
  Loader(const Loader&) = delete;  // holds the memo tables and their mutex
  Loader& operator=(const Loader&) = delete;

  /// The ladder for `gpu` (CPU only). `kernel`: a built-in template name or a T1 .json
  /// file; `problem`: its variables ("n=16777216"; others take their default).
  Selection select(const std::string& kernel, const std::string& problem, const DeviceIdentity& gpu);
  /// The selection compiled for gpu.arch(): from this process's memo, the disk cache, or
  /// NVRTC (CPU only). Concurrent calls for the same kernel compile it once.
  std::shared_ptr<const CompiledKernel> compile(const std::string& kernel, const std::string& problem,
                                                const DeviceIdentity& gpu);
  /// On GPU options.device: select, compile, load the module, plan the launches (and
  /// verify a borrowed configuration when asked); once per (kernel, problem). Throws
  /// cuda::NoDriver without a GPU.
  std::shared_ptr<const TunedKernel> load(const std::string& kernel, const std::string& problem);
  /// The identity of GPU options.device (NVRTC version filled in).
  const DeviceIdentity& device();
  /// Waits until no tuning on first use of this loader is queued, running or awaited from
  /// another process (and every switch it led to is made), at most timeout_s; true when none
  /// is left. The tunings go on without it: this is for tests and benchmarks.
  bool wait_for_background(double timeout_s);

  LoaderStats stats() const;
  const LoaderOptions& options() const { return options_; }

 private:
  struct State;
  /// Compiles (or takes from the caches) and loads one configuration; nullptr and
  /// *refused set when the device cannot launch it (throws instead when refused is null).
  std::shared_ptr<TunedKernel> make_tuned(const std::shared_ptr<const KernelProblem>& p, const ProblemInstance& instance,
                                          Selection selection, const std::vector<std::uint32_t>& config_index,
                                          std::string* refused);
  /// Starts tuning `kernel` in the background (on_miss) and has it switched when the winner comes.
  void tune_on_miss(const std::shared_ptr<const KernelProblem>& p, const ProblemInstance& instance,
                    const std::string& problem, const std::shared_ptr<TunedKernel>& kernel);
  LoaderOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace cutune::loader
