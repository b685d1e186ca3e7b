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
// Every configuration read from the DB or a wisdom file is checked against the kernel's
// declared space and restrictions before it becomes a #define: a value outside it throws
// InputError naming the kernel, the parameter and the value, and nothing is compiled.
// Thread safety: every member function may be called from many threads; the same kernel
// is compiled (and loaded) once, the others wait for it.
#include <cuda.h>

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

/// A tuned kernel loaded on a GPU for one problem size, ready to launch. Immutable after
/// load: launch() may be called from many threads at once.
class TunedKernel {
 public:
  ~TunedKernel();
  TunedKernel(const TunedKernel&) = delete;  // owns the loaded module
  TunedKernel& operator=(const TunedKernel&) = delete;

  /// The selection launched (after a borrowed configuration's check, its outcome).
  const Selection& selection() const { return selection_; }
  const CompiledKernel& compiled() const { return *compiled_; }
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
  TunedKernel(std::shared_ptr<const CompiledKernel> compiled, Selection selection, std::shared_ptr<Impl> impl,
              std::size_t argument_count);
  std::shared_ptr<const CompiledKernel> compiled_;
  Selection selection_;
  std::shared_ptr<Impl> impl_;
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

  LoaderStats stats() const;
  const LoaderOptions& options() const { return options_; }

 private:
  struct State;
  /// Compiles (or takes from the caches) and loads one configuration; nullptr and
  /// *refused set when the device cannot launch it (throws instead when refused is null).
  std::shared_ptr<TunedKernel> make_tuned(const std::shared_ptr<const KernelProblem>& p, const ProblemInstance& instance,
                                          Selection selection, const std::vector<std::uint32_t>& config_index,
                                          std::string* refused);
  LoaderOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace cutune::loader
