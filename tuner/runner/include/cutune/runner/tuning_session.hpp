#pragma once
// What one tuning needs, built and checked once before any GPU work or write: the problem
// instantiated, the objective resolved, the strategy, the configurations to try first, and
// the store. The command line builds it from its options, then hands it to runner::tune.
// A tuning of a kernel problem runs on GPUs; one of a recording (`tune --simulate`) replays
// it (replay_pipeline.hpp): the same loop, the same store, the same report.
#include <cstdint>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/model/configuration.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/shard.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/pipeline.hpp"
#include "cutune/search/recorded_space.hpp"
#include "cutune/worker/measure_options.hpp"
#include "cutune/worker/messages.hpp"
#include "cutune/search/strategy.hpp"
#include "cutune/runner/db_prior.hpp"

namespace cutune::runner {

class Lane;

struct TuneOptions {
  std::string problem;                  ///< "n=1000" overrides of problem variables
  std::string strategy = search::kDefaultStrategy;
  /// New configurations to evaluate; what the store already holds for the target is reused
  /// (never re-measured, told to the strategy) and not counted, unless `resume`.
  std::optional<std::uint64_t> budget;
  /// Finish an interrupted run: the stored measurements count against `budget` and
  /// `time_budget_s`, so the run ends where the interrupted one would have.
  bool resume = false;
  /// Whose stored measurements of the kernel and problem are reused: every GPU's of this GPU's
  /// model (name and architecture: winners are per model, and Kernel Tuner's cache is per GPU
  /// name), or this physical GPU's only (by uuid), to measure a second GPU of the model on its own.
  enum class Reuse { Model, Gpu };
  Reuse reuse = Reuse::Model;
  /// Evaluate this share of the space only (brute_force and random; see shard.hpp). The
  /// default configuration and --try are still evaluated first: they are the run's baseline.
  std::optional<Shard> shard;
  /// Stop proposing once this many wall-clock seconds have passed since the tuning began (as
  /// Kernel Tuner's time_limit; Tuning::record tells the session the wall clock's steps).
  std::optional<double> time_budget_s;
  std::uint64_t seed = 1;               ///< strategy seed (stored with the run)
  /// --prior: whether the DB's measurements of this kernel on other GPUs or problems seed
  /// the strategy (db_prior.hpp).
  PriorMode prior = PriorMode::Auto;
  /// Priors given (--prior-from), used when they match, whatever `prior` says of the DB's.
  std::vector<search::Prior> priors;
  /// Configurations ("k=v,...", others default) evaluated right after the default and
  /// before the strategy's own: a user's or another GPU's candidates. They count against
  /// the budget like any other.
  std::vector<std::string> first;
  /// "time" (the median), "energy" (per launch, NVML; measured for every configuration) or
  /// a metric of the problem (cutune.Metrics); "" = the problem file's General.Objective,
  /// else time. See search::resolve_objective for the direction.
  std::string objective;
  /// --objective-higher-is-better / --objective-lower-is-better; none = as the file or
  /// Kernel Tuner's default for the name says.
  std::optional<bool> objective_higher_is_better;
  std::uint64_t data_seed = 42;         ///< input data seed
  std::filesystem::path db;
  /// Non-empty: also append each configuration's result to this Kernel Tuner cache file as
  /// it is stored (KtCacheWriter), so Kernel Tuner can resume or simulate it, even after a
  /// crash. An existing file is resumed; one whose header disagrees is refused (InputError).
  std::filesystem::path kt_cache;
  /// The GPUs to tune on, one GPU worker each, all of one model (a GPU named twice gets
  /// two workers). Empty: GPU 0.
  std::vector<int> devices;
  /// Lanes on other ranks (tuner/cluster), after the local ones: given the set-up every GPU
  /// worker gets, starts the other ranks' workers and returns a factory per lane. Unset
  /// without MPI.
  std::function<std::vector<std::function<std::unique_ptr<Lane>()>>(const worker::Setup&)> start_remote_lanes;
  worker::MeasureOptions measure;
  /// Kernel Tuner NVMLObserver observables (kt_nvml_observables()) kept with each measured
  /// result under Kernel Tuner's names (the package's NVMLObserver): the readings cutune takes.
  std::vector<std::string> kt_observables;
  std::string command;                  ///< the command line, stored with the run
  std::ostream* log = nullptr;          ///< session lines (nullptr = quiet)
  CompilePoolOptions compile;           ///< workers, mode, persistent cache
  /// Proposals queued, compiling or compiled ahead of the GPU workers, at most; unset:
  /// search::proposals_ahead()'s rule (what `cutune score --compile-workers` simulates).
  std::optional<std::size_t> lookahead;
  /// A configuration's evaluation is killed (status timeout) after max(this, 50x the
  /// first successful evaluation's wall time); until that one, after first_timeout_s.
  double timeout_floor_s = 5.0;
  double first_timeout_s = 120.0;

  /// After each configuration: where the session stands, and the plain log line for it.
  struct Progress {
    std::uint64_t done = 0, total = 0, failed = 0;
    double best_ms = 0.0;  ///< 0 while nothing has succeeded
    std::string best_key;
    double elapsed_s = 0.0;
    std::string line;
    /// With several GPU workers: one line per worker ("GPU 1: 120 evaluated, 0 restarts").
    std::vector<std::string> workers;
  };
  /// nullptr: the plain line goes to `log`.
  std::function<void(const Progress&)> progress;
};

/// The line a run on stored results starts with, saying what the budget counts:
/// "reusing 150 stored measurements; budget 150 new evaluations" or, resuming,
/// "resuming: 150 of 150 already stored".
std::string stored_results_line(bool resume, std::optional<std::uint64_t> budget, std::size_t stored);
/// Throws InputError naming --reuse for anything but model or gpu.
TuneOptions::Reuse parse_reuse(const std::string& text);

/// Throws InputError (one line) unless `strategy` can run on a shard: brute_force and random
/// propose from a fixed set, which splits; a local search or a model-based one follows its
/// own results across the whole space, which does not.
void check_shard_strategy(const std::string& strategy, const Shard& shard);

/// Whether a tuning of `problem` evaluates its default configuration first
/// (TuningSession::default_first, which says why): the problem names its default, or under
/// `verify` (--verify's overrides) some output has no reference, so the default's defines it.
bool evaluates_default_first(const KernelProblem& problem, const std::vector<std::string>& verify = {});

/// What a tuning is of, as the store, the report and the priors name it.
struct TuningTarget {
  search::KernelNames kernel;  ///< its name, and its CUDA function's
  /// The store's identity of the kernel: a hash of its source and description (an edited
  /// kernel is a new kernel), or "recorded:NAME" for a recording.
  std::string source_hash;
  std::string problem_key, problem_json;
  search::ProblemSize size;    ///< as a prior compares problems
};

/// One tuning's inputs, each built once. A session is tuned once (its strategy keeps
/// state); move it into runner::tune.
class TuningSession {
 public:
  /// Checks everything a tuning can be refused for, before any GPU work or write, and
  /// throws InputError (one line naming the option or the file's field) for: --problem,
  /// the strategy's name, --try, a kernel name the source has in no configuration,
  /// --verify, the objective and its direction, a metric that cannot be evaluated, a
  /// default configuration that violates a restriction, and a DB that is not cutune's, is
  /// damaged or is newer. An existing DB is opened here, once; a new one is created by
  /// store() when tune() has found the GPU, so that a machine without one is left without
  /// a DB file. `problem` must outlive the session.
  TuningSession(const KernelProblem& problem, TuneOptions options);
  /// A replay of `recorded` (`tune --simulate`), stored under the recording's kernel and GPU
  /// (`origin`) and problem "recorded:NAME": one lane per entry of options.devices (at least
  /// one), options.compile.workers compiles ahead of them (0: compile and benchmark in
  /// series), ranked by time, nothing re-measured. What the recording's tuning evaluated first
  /// (search::loop_first) and --try go first. Throws InputError as the other constructor does
  /// (the strategy, --try, --shard, the DB). `recorded` must outlive the session.
  TuningSession(const search::RecordedSpace& recorded, const replay::RecordingOrigin& origin, TuneOptions options);

  /// The kernel problem tuned on GPUs; nullptr for a replay (which has no source, no
  /// arguments and no metrics).
  const KernelProblem* kernel_problem() const { return problem_; }
  const TuningTarget& target() const { return target_; }
  const Space& space() const { return *space_; }
  const ProblemInstance& instance() const { return instance_; }
  const TuneOptions& options() const { return options_; }
  const Objective& objective() const { return objective_; }
  /// Why the objective is not what the file names ("" when it is): said once by tune().
  const std::string& objective_warning() const { return objective_warning_; }
  /// The baseline of the speedup; evaluated first when default_first().
  const Configuration& default_config() const { return default_config_; }
  /// Whether the tuning evaluates the default configuration before its strategy proposes
  /// anything: when the problem names it (Space::default_named: its author's guess and the
  /// speedup's baseline), or when its output is what a correct one is (no reference for some
  /// output). A default that is only each parameter's first listed value is no better a start
  /// than any: on 15 recorded spaces of kernels that name none, evaluating it first lowered the
  /// default strategy's score by 0.65 on average (Kernel Tuner's sum_floats on an H200 0.41 ->
  /// -8.29: 41x slower than the optimum, it took the scoring window's first 0.19 s), where on 17
  /// spaces with a named default it raised it by 0.03 (results/strategies/strategies_default_first.md).
  bool default_first() const { return default_first_; }
  /// --try, in order: evaluated right after the default.
  const std::vector<Configuration>& first() const { return first_; }
  search::Strategy& strategy() { return *strategy_; }
  /// The space the strategy proposes from: the shard's share, else space().
  const Space& search_space() const { return search_space_ ? *search_space_ : space(); }
  /// A second run on stored results: `stored` of them lie in search_space(). Unless resuming,
  /// the strategy is made again with its budget widened by that many, so that a strategy
  /// that stops proposing at its budget (brute_force, random) still reaches `budget` new
  /// configurations. Call before the strategy is asked or told anything.
  void reuse_stored(std::uint64_t stored);
  /// The strategy made again with `prior` (null: none), for the same budget. Call before the
  /// strategy is asked or told anything.
  void use_prior(std::shared_ptr<const search::SpacePrior> prior);
  /// The store: the one opened by the constructor, else created now (its folder too).
  db::Store& store();
  /// The pipeline the tuning runs on: GPUs (their workers started now, so that their set-up
  /// overlaps the rest of the start-up), or the recording's replay; its clock starts at `start`.
  std::unique_ptr<Pipeline> make_pipeline(const worker::MeasureOptions& measure,
                                          std::chrono::steady_clock::time_point start) const;
  /// What outputs are verified against, from what lane 0's worker said once ready.
  std::string verification_of(const worker::Ready& ready) const;

 private:
  const KernelProblem* problem_ = nullptr;
  const search::RecordedSpace* recorded_ = nullptr;
  std::optional<replay::RecordingOrigin> origin_;
  const Space* space_;
  TuningTarget target_;
  TuneOptions options_;
  std::unique_ptr<Space> search_space_;  ///< the shard's; on the heap: the strategy keeps a reference
  /// The strategy for the current budget (widened by reuse_stored) and prior.
  std::unique_ptr<search::Strategy> make_strategy() const;

  std::unique_ptr<search::Strategy> strategy_;
  std::uint64_t stored_reused_ = 0;
  std::shared_ptr<const search::SpacePrior> prior_;
  ProblemInstance instance_;
  Objective objective_;
  std::string objective_warning_;
  Configuration default_config_;
  bool default_first_ = true;
  std::vector<Configuration> first_;
  std::optional<db::Store> store_;
};

}  // namespace cutune::runner
