#pragma once
// The subcommands of the cutune tool. Each returns the process exit code; bad input is
// thrown as InputError and turned into a one-line message with exit code 2 by main().
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cutune/search/strategy.hpp"

namespace cutune::cli {

/// Exit codes: 0 success, 1 a failure that is not the user's input (e.g. a configuration
/// that did not compile when asked to), 2 bad input, 3 no GPU for a command that needs one.
enum ExitCode { kOk = 0, kFailure = 1, kBadInput = 2, kNoGpu = 3 };

/// A built-in template name, or a path to a T1 JSON file.
std::filesystem::path resolve_kernel(const std::string& kernel);
/// $CUTUNE_DB, else $XDG_DATA_HOME/cutune/cutune.db, else ~/.local/share/cutune/cutune.db.
std::filesystem::path default_db_path();

int cmd_devices(bool json);
int cmd_kernels();
/// t1: "" or a file to write the problem to as T1 (write_t1).
/// `listing`: "" (the summary), "keys" (every valid key, one a line), "json" (the same
/// as one object) or "timing" (how long loading, the first valid configuration and the
/// whole enumeration took, as one JSON line); `max_threads` > 0 replaces the thread-block
/// limit (1024).
int cmd_space(const std::string& kernel, const std::string& problem, int show, const std::string& t1 = "",
              const std::string& listing = "", long long max_threads = 0);
/// The compile pool (tune, compile --all): runner::CompilePoolOptions.
struct CompilePoolArgs {
  std::size_t workers = 0;            ///< 0: compile one per core (at most 16), tune three quarters of that
  std::string mode = "process";       ///< "process" or "thread"
  std::string cache_dir;              ///< "": $CUTUNE_CACHE_DIR, else ~/.cache/cutune/cubins
  bool no_cache = false;
};
/// --compiler: "" (the problem's cutune.Compiler, else auto), "auto", "nvrtc" or "nvcc".
struct CompileArgs {
  std::string kernel, config, arch = "sm_90";
  std::string compiler;
  bool all = false;
  bool quiet = false;
  CompilePoolArgs pool;
  std::string json;                   ///< --all: write the throughput figures here
};
int cmd_compile(const CompileArgs& args);
/// How configurations are measured; shared by tune and measure (worker::MeasureOptions).
struct MeasureArgs {
  std::string l2 = "cold";            ///< "cold" (rotate when the data fits, else flush), "flush" or "warm"
  int samples = 10;                   ///< screening: at most this many samples
  int screening_min = 0;              ///< screening: at least this many (0: 5, or --samples if fewer)
  std::size_t finalists = 3;          ///< re-measured thoroughly after the search (0: none)
  double max_noise = 0.005;           ///< thorough: target relative half-width of the median's CI
  double time_cap_s = 1.0;            ///< thorough: per-configuration cap
  int min_samples = 10;               ///< thorough: samples before any statistical exit
  bool energy = false;                ///< energy per launch for every configuration
  std::string timer = "events";       ///< "events" or "activity" (CUPTI)
  double flush_size = 1.5;            ///< the flush reads this many L2 sizes (SamplerSettings)
  std::vector<std::string> verify;    ///< --verify MODE | OUTPUT=MODE (plan_verification)
  std::string verifier;               ///< --verifier SOCKET (worker/external_verifier.hpp)
};
struct TuneArgs {
  std::string kernel, problem, strategy = search::kDefaultStrategy;
  std::string compiler;               ///< --compiler, as CompileArgs::compiler
  std::optional<std::uint64_t> budget;
  std::uint64_t seed = 1;
  std::string db, report;
  std::string kt_cache;               ///< --cache: Kernel Tuner cache file appended as tuning goes
  int device = 0;
  bool device_given = false;          ///< --device was on the command line
  std::string gpus;                   ///< --gpus all|0,2,3; "" = --device alone
  double rank_timeout_s = 60.0;       ///< --rank-timeout: silence beyond the evaluation timeout before a rank is lost
  MeasureArgs measure;
  std::vector<std::string> first;
  std::string objective;              ///< "" = the file's General.Objective, else time
  std::string prior = "auto";         ///< --prior auto|on|none
  std::vector<search::Prior> priors;  ///< --prior-from recordings
  bool higher_is_better = false, lower_is_better = false;  ///< the objective's direction, when given
  std::string command;
  CompilePoolArgs pool;
  double timeout_s = 5.0;             ///< floor of the per-configuration hang timeout
  std::optional<double> time_budget_s;  ///< --time-budget: wall-clock seconds since the tuning began
  bool resume = false;                ///< --resume: stored measurements count against the budget
  std::string reuse = "model";        ///< --reuse: whose stored measurements are reused (model, gpu)
  std::string shard;                  ///< --shard i/N; "" = the whole space
  std::optional<std::size_t> lookahead;  ///< --lookahead; unset = search::proposals_ahead's rule
  std::vector<std::string> observe;   ///< --observe: Kernel Tuner NVML observables kept with each result
};
int cmd_tune(const TuneArgs& args);
struct MeasureConfigArgs {
  std::string kernel, problem, json;
  std::string compiler;               ///< --compiler, as CompileArgs::compiler
  std::vector<std::string> configs;
  double loop_s = 0.0;
  int device = 0;
  MeasureArgs measure;
  std::string command;
};
/// One configuration, measured thoroughly; prints its statistics (JSON with --json FILE).
int cmd_measure(const MeasureConfigArgs& args);
struct QueryArgs {
  std::string kernel, gpu, problem, db, objective;
  bool json = false;
};
int cmd_query(const QueryArgs& args);
/// cutune export (interop_commands.hpp: add_export, cmd_export dispatches on format).
struct ExportArgs {
  std::string format = "cache", output, db, kernel, gpu, problem, objective;
  std::string space;                 ///< the kernel file the measurements were tuned from (its declared lists)
  std::string t4_version = "1.0.0";  ///< --format t4: "1.0.0" or "1.1.0"
};
/// The winners (filtered as for query) as a wisdom file for cutune::loader.
int cmd_export_wisdom(const ExportArgs& args);

}  // namespace cutune::cli
