// cutune: tune CUDA kernels with NVRTC, keep the winners in SQLite.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "interop_commands.hpp"
#include "merge_command.hpp"
#include "option_checks.hpp"
#include "replay_commands.hpp"
#include "report_command.hpp"
#include "run_command.hpp"
#include "sweep_commands.hpp"
#include "cutune/cuda/driver.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/kt_observables.hpp"
#include "cutune/search/strategy.hpp"

namespace {

using namespace cutune::cli;

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

CLI::App* add_devices(CLI::App& app, bool& as_json) {
  auto* devices = app.add_subcommand("devices", "List the GPUs with their structured identity");
  devices->add_flag("--json", as_json, "Print JSON");
  return devices;
}

/// `space`'s options; listing() says which listing they ask for (cmd_space).
struct SpaceArgs {
  std::string kernel, problem, t1;
  int show = 8;
  bool keys = false, json = false, timing = false;
  long long max_threads = 0;
  std::string listing() const { return keys ? "keys" : json ? "json" : timing ? "timing" : ""; }
};

CLI::App* add_space(CLI::App& app, SpaceArgs& sa) {
  auto* space = app.add_subcommand("space", "Show a kernel's search space: sizes, restrictions, configurations");
  space->add_option("KERNEL", sa.kernel, "Built-in template name or T1 .json file")->required();
  space->add_option("--problem", sa.problem, "Problem variables, e.g. n=1000000 (default: the kernel's defaults)");
  space->add_option("--t1", sa.t1, "Also write the problem as a T1 file Kernel Tuner reads")
      ->check(directory_exists_for_output());
  space->add_option("--show", sa.show, "How many valid configurations to print")->check(CLI::Range(0, 1000000));
  auto* keys_flag = space->add_flag("--keys", sa.keys, "Print every valid configuration's key, one a line");
  auto* json_flag =
      space->add_flag("--json", sa.json, "Print the parameters and every valid key as JSON")->excludes(keys_flag);
  space
      ->add_flag("--timing", sa.timing,
                 "Time building the space: load, first valid configuration, enumerating every valid one "
                 "(one JSON line, with the peak memory)")
      ->excludes(keys_flag)
      ->excludes(json_flag);
  space->add_option("--max-threads", sa.max_threads, "Threads per block the device allows (default 1024)")
      ->check(CLI::Range(1LL, 1LL << 30));
  return space;
}

void add_pool_options(CLI::App* cmd, CompilePoolArgs& a, const char* what, const char* mode, const char* zero) {
  cmd->add_option(what, a.workers, std::string("Compile workers (0: ") + zero + ")")->check(CLI::Range(0, 256));
  cmd->add_option(mode, a.mode, "Workers are processes (NVRTC serialises inside a process) or threads")
      ->check(CLI::IsMember({"process", "thread"}));
  cmd->add_option("--cache-dir", a.cache_dir, "Persistent cubin cache (default: $CUTUNE_CACHE_DIR, else "
                                              "~/.cache/cutune/cubins)");
  cmd->add_flag("--no-cache", a.no_cache, "Neither read nor write the cubin cache");
}

void compiler_option(CLI::App* cmd, std::string& compiler) {
  cmd->add_option("--compiler", compiler,
                  "nvrtc, nvcc or auto: auto compiles with NVRTC unless the kernel needs nvcc (a host or standard "
                  "header, an nvcc-only option such as -O3, __host__ code), decided from the default "
                  "configuration (default: the file's cutune.Compiler, else auto)")
      ->check(CLI::IsMember({"auto", "nvrtc", "nvcc"}));
}

CLI::App* add_compile(CLI::App& app, CompileArgs& ca) {
  auto* compile = app.add_subcommand("compile", "Compile configurations to cubin with NVRTC (no GPU needed)");
  compile->add_option("KERNEL", ca.kernel, "Built-in template name or T1 .json file")->required();
  auto* cfg = compile->add_option("--config", ca.config, "k=v,... (others take their default)");
  compile->add_flag("--all", ca.all, "Compile every valid configuration")->excludes(cfg);
  compile->add_option("--arch", ca.arch, "Target architecture (real, e.g. sm_90)");
  compiler_option(compile, ca.compiler);
  compile->add_flag("--quiet", ca.quiet,
                    "With --all, print failures, progress (a line per tenth, or a live line on a terminal) and "
                    "the summary");
  add_pool_options(compile, ca.pool, "--workers", "--mode", "one per core, at most 16");
  compile->add_option("--json", ca.json, "With --all, write the throughput figures to this file")
      ->check(directory_exists_for_output());
  return compile;
}

void add_measure_options(CLI::App* cmd, MeasureArgs& m) {
  cmd->add_option("--l2", m.l2, "cold: no data in L2 at each sample (flush, or rotated argument sets when "
                                "the data fits in L2); flush: always the flush; warm: back to back on the same data")
      ->check(CLI::IsMember({"cold", "flush", "warm"}));
  cmd->add_option("--samples", m.samples, "Screening: at most N samples per configuration")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--screening-min", m.screening_min, "Screening: at least N samples per configuration "
                                                      "(0: 5, or --samples if fewer)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--min-samples", m.min_samples, "Thorough: samples before any statistical exit")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-noise", m.max_noise, "Thorough: target relative half-width of the median's interval")
      ->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--time-cap", m.time_cap_s, "Thorough: seconds per configuration at most")
      ->check(CLI::Range(0.001, 3600.0));
  cmd->add_flag("--energy", m.energy, "Measure energy per launch (NVML) for every configuration");
  cmd->add_option("--timer", m.timer, "events: a CUDA event pair around the launches; activity: the "
                                      "GPU's own start/end timestamps of the work (CUPTI; excludes ~1 us of launch)")
      ->check(CLI::IsMember({"activity", "events"}));
  cmd->add_option("--flush-size", m.flush_size, "The L2 flush reads this many times the L2's size")
      ->check(CLI::Range(0.25, 16.0));
  cmd->add_option("--verify", m.verify,
                  "How outputs are verified: reference (cutune.Reference / ReferenceArguments), default (the "
                  "default configuration's output) or none; OUTPUT=MODE for one output (repeatable; overrides "
                  "cutune.Verification)")
      ->take_all()
      ->expected(1);
  cmd->add_option("--verifier", m.verifier,
                  "Unix socket of a verifier outside cutune (the Python package's, for verify= functions): each "
                  "configuration that passes cutune's own checks is also checked there, before it is timed (default: "
                  "none)");
}

/// `tune`; `device` is set to its --device option (whether it was given decides --gpus).
CLI::App* add_tune(CLI::App& app, TuneArgs& ta, CLI::Option*& device) {
  auto* tune = app.add_subcommand("tune", "Tune a kernel on a GPU and store every measurement");
  tune->add_option("KERNEL", ta.kernel, "Built-in template name or T1 .json file (required unless --simulate)");
  tune->add_option("--problem", ta.problem,
                   "Problem variables, e.g. n=268435456 (or n=2**28; default: the kernel's defaults)");
  tune->add_option("--strategy", ta.strategy,
                   fmt::format("One of {}", fmt::join(cutune::search::strategy_names(), ", ")));
  tune->add_option("--budget", ta.budget,
                   "Evaluate at most N new configurations (what the DB holds for the target is reused, not "
                   "counted; default: no limit, the strategy or --time-budget ends the run)")
      ->check(whole_number(1));
  tune->add_flag("--resume", ta.resume,
                 "Finish an interrupted run: the measurements the DB holds count against --budget and --time-budget");
  tune->add_option("--reuse", ta.reuse,
                   "Whose stored measurements of the kernel and problem are reused, never re-measured: model (every "
                   "GPU of this one's model, as Kernel Tuner's cache is per GPU name) or gpu (this physical GPU's "
                   "only, to measure a second GPU of the model on its own); default model. A simulation's GPU is "
                   "its recording's");
  tune->add_option("--shard", ta.shard,
                   "i/N: evaluate only the configurations whose position in the space's order is i mod N "
                   "(brute_force and random; each shard into its own DB, then `cutune merge`; default: the whole "
                   "space)");
  tune->add_option("--seed", ta.seed, "Strategy seed (stored with the run)")->check(whole_number());
  tune->add_option("--db", ta.db, "SQLite database (default: $CUTUNE_DB, else ~/.local/share/cutune/cutune.db)")
      ->check(directory_exists_for_output());
  auto* tune_device = tune->add_option("--device", ta.device, "GPU ordinal");
  tune->add_option("--gpus", ta.gpus,
                   "tune on several GPUs of this node, one GPU worker each, fed by one strategy: all, or "
                   "ordinals such as 0,2,3 (all of one model); default: --device alone");
  tune->add_option("--rank-timeout", ta.rank_timeout_s,
                   "under MPI: seconds a rank may stay silent beyond the evaluation timeout before its GPUs are "
                   "dropped and their configurations go to the others")
      ->check(CLI::PositiveNumber);
  tune->add_option("--cache", ta.kt_cache, "Also append each result to this Kernel Tuner cache file (resumed "
                                          "when it exists)")
      ->check(directory_exists_for_output());
  tune->add_option("--observe", ta.observe,
                   "Kernel Tuner NVMLObserver observables kept with each result under Kernel Tuner's names (in "
                   "the store and the --cache file): nvml_power (W), nvml_energy (J per launch; turns on --energy), "
                   "core_freq (MHz), temperature (C); repeatable or comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(cutune::kt_nvml_observables()));
  tune->add_option("--report", ta.report, "Write a JSON summary of the session to this file")
      ->check(directory_exists_for_output());
  add_measure_options(tune, ta.measure);
  tune->add_option("--objective", ta.objective,
                   "Rank by time (median), energy (per launch, NVML) or a metric of the problem (cutune.Metrics); "
                   "default: the file's General.Objective, else time");
  tune->add_flag("--objective-higher-is-better", ta.higher_is_better,
                 "The objective is maximised (default: the file's General.Minimize, else Kernel Tuner's default "
                 "for the name: GFLOP/s, GB/s... higher; others lower)");
  tune->add_flag("--objective-lower-is-better", ta.lower_is_better, "The objective is minimised");
  tune->add_option("--try", ta.first, "k=v,... evaluated right after the default, before the strategy's own "
                                     "(repeatable; counts against --budget)")
      ->take_all()
      ->expected(1);
  compiler_option(tune, ta.compiler);
  add_pool_options(tune, ta.pool, "--compile-workers", "--compile-mode",
                   "three per four cores, at most 12: the tuner and its GPU worker keep the rest");
  tune->add_option("--lookahead", ta.lookahead,
                   "Proposals queued, compiling or compiled ahead of the GPU workers, at most (default: one per "
                   "compile worker plus two per GPU worker for a strategy that learns, 512 for one that does not)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  tune->add_option("--timeout", ta.timeout_s, "Kill an evaluation after max(S, 50x the first one's time)")
      ->check(CLI::Range(0.1, 86400.0));
  tune->add_option("--finalists", ta.measure.finalists,
                   "Re-measure the best N and the default thoroughly, interleaved, to declare the winner (0: off)")
      ->check(CLI::Range(0, 100));
  device = tune_device;
  return tune;
}

CLI::App* add_measure(CLI::App& app, MeasureConfigArgs& ma) {
  auto* measure = app.add_subcommand("measure", "Measure one configuration thoroughly (verified first)");
  measure->add_option("KERNEL", ma.kernel, "Built-in template name or T1 .json file")->required();
  measure->add_option("--problem", ma.problem, "Problem variables, e.g. n=2**24 (default: the kernel's defaults)");
  measure->add_option("--config", ma.configs,
                      "k=v,... (others take their default); repeat it to measure several, interleaved")
      ->take_all()
      ->expected(1);
  measure->add_option("--loop", ma.loop_s,
                      "Also time about this many seconds of back-to-back launches (warm) as an independent check")
      ->check(CLI::Range(0.0, 60.0));
  measure->add_option("--device", ma.device, "GPU ordinal");
  measure->add_option("--json", ma.json, "Write the statistics and raw samples as JSON to this file")
      ->check(directory_exists_for_output());
  add_measure_options(measure, ma.measure);
  compiler_option(measure, ma.compiler);
  return measure;
}

CLI::App* add_query(CLI::App& app, QueryArgs& qa) {
  auto* query = app.add_subcommand("query", "Show the stored winners");
  query->add_option("--kernel", qa.kernel, "Kernel name (default: every kernel)");
  query->add_option("--gpu", qa.gpu, "GPU name or model (substring; default: every GPU)");
  query->add_option("--problem", qa.problem, "Problem key, e.g. n=268435456 (default: every problem)");
  query->add_option("--db", qa.db, "SQLite database (default as for tune)");
  query->add_option("--objective", qa.objective, "time, energy or a metric's name (default: every objective)");
  query->add_flag("--json", qa.json, "Print JSON");
  return query;
}

/// Parses the command line into the options `app` was given; the exit code when the process
/// ends here (help, version, bad input), none when a subcommand is to run.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  // CLI11 would report "a subcommand is required" for a misspelt one; name it instead.
  auto is_subcommand = [&](const std::string& name) {
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(argv[1])) {
    std::cerr << "cutune: unknown subcommand '" << argv[1]
              << "' (devices, kernels, space, compile, tune, measure, run, query, select, distill, import, export, merge, score, report; see --help)\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "cutune: " << e.what() << " (see --help)\n";
    return kBadInput;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cutune::cli;
  CLI::App app{"cutune: a CUDA kernel autotuner (NVRTC + SQLite). Bad input exits with 2."};
  app.set_version_flag("--version", std::string("cutune ") + CUTUNE_VERSION);
  app.require_subcommand(1);
  // Every option's default in --help (subcommands take these settings when they are added).
  app.option_defaults()->always_capture_default();

  bool devices_json = false;
  auto* devices = add_devices(app, devices_json);
  auto* kernels = app.add_subcommand("kernels", "List the built-in templates, their parameters and space sizes");

  SpaceArgs spa;
  auto* space = add_space(app, spa);
  CompileArgs ca;
  auto* compile = add_compile(app, ca);
  TuneArgs ta;
  CLI::Option* tune_device = nullptr;
  auto* tune = add_tune(app, ta, tune_device);
  SimulateArgs sa;
  add_simulate_options(tune, sa);
  std::string sweep;
  bool sweep_yes = false;
  auto* sweep_option = tune->add_option(
      "--sweep", sweep,
      "Tune every shape of a sweep, one after the other into the DB: n=2**10..2**28 (doubling), n=1000..64000:*4 or "
      "n=1024..8192:+1024 (a step), n=1000,2000,4000 (a list), n=2**10..2**20;m=64,128 (a grid); other variables "
      "from --problem or their default");
  tune->add_flag("--yes", sweep_yes, "Allow a sweep of more than 10^4 shapes")->needs(sweep_option);
  DistillArgs da;
  auto* distill = add_distill(app, da);
  SelectArgs sla;
  auto* select = add_select(app, sla);
  ScoreArgs sca;
  auto* score = add_score_command(app, sca);

  MeasureConfigArgs ma;
  auto* measure = add_measure(app, ma);
  RunArgs rua;
  auto* run = add_run(app, rua);
  QueryArgs qa;
  auto* query = add_query(app, qa);
  ImportArgs ia;
  auto* import_cmd = add_import(app, ia);
  ExportArgs ea;
  auto* export_cmd = add_export(app, ea);
  MergeArgs mga;
  auto* merge = add_merge(app, mga);
  ReportArgs ra;
  auto* report = add_report(app, ra);

  if (const std::optional<int> exit_code = parse_command_line(app, argc, argv)) return *exit_code;

  try {
    if (*devices) return cmd_devices(devices_json);
    if (*kernels) return cmd_kernels();
    if (*space) return cmd_space(spa.kernel, spa.problem, spa.show, spa.t1, spa.listing(), spa.max_threads);
    if (*compile) return cmd_compile(ca);
    if (*score) {
      sca.command = command_line(argc, argv);
      return cmd_score(sca);
    }
    if (*tune) {
      ta.command = command_line(argc, argv);
      sa.resume = ta.resume;
      sa.shard = ta.shard;
      sa.compile_workers = ta.pool.workers;
      sa.lookahead = ta.lookahead;
      sa.first = ta.first;
      if (!sa.cache.empty()) {
        if (sweep_option->count() > 0)
          throw cutune::InputError(fmt::format("tune: --sweep with --simulate {}: a recording is of one problem",
                                               sa.cache));
        if (!ta.kernel.empty())
          throw cutune::InputError(fmt::format("tune: KERNEL '{}' with --simulate {}: the recording is the kernel; "
                                               "give one of them",
                                               ta.kernel, sa.cache));
        return cmd_tune_simulated(sa, ta);
      }
      if (ta.kernel.empty()) throw cutune::InputError("tune: KERNEL is required (or --simulate CACHE)");
      ta.time_budget_s = sa.time_budget_s;
      ta.prior = sa.prior;
      ta.priors = priors_from_files(sa);
      ta.device_given = tune_device->count() > 0;
      if (sweep_option->count() > 0) return cmd_tune_sweep(ta, sweep, sweep_yes);
      return cmd_tune(ta);
    }
    if (*run) return cmd_run(rua);
    if (*query) return cmd_query(qa);
    if (*distill) return cmd_distill(da);
    if (*select) return cmd_select(sla);
    if (*import_cmd) {
      ia.command = command_line(argc, argv);
      return cmd_import(ia);
    }
    if (*export_cmd) return cmd_export(ea);
    if (*merge) return cmd_merge(mga);
    if (*report) return cmd_report(ra);
    if (*measure) {
      ma.command = command_line(argc, argv);
      return cmd_measure(ma);
    }
  } catch (const cutune::InputError& e) {
    std::cerr << "cutune: " << e.what() << '\n';
    return kBadInput;
  } catch (const cutune::cuda::NoDriver& e) {
    std::cerr << "cutune: this needs a GPU: " << e.what() << '\n';
    return kNoGpu;
  } catch (const std::exception& e) {
    std::cerr << "cutune: error: " << e.what() << '\n';
    return kFailure;
  }
  return kFailure;
}
