// cutune tune --simulate CACHE: a tuning session replayed from a recorded space.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/configuration.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/shard.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/runner/tuning_session.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/search/pace.hpp"
#include "cutune/search/simulation.hpp"
#include "cutune/runner/db_prior.hpp"
#include "option_checks.hpp"
#include "replay_commands.hpp"
#include "report_command.hpp"

namespace cutune::cli {

void add_simulate_options(CLI::App* tune, SimulateArgs& args) {
  tune->add_option("--simulate", args.cache,
                   "Replay a recorded space (Kernel Tuner cache, T4 or KTT results, .json[.gz]) instead of a GPU: "
                   "each evaluation returns its recorded result and costs its recorded time (no KERNEL)");
  tune->add_option("--time-budget", args.time_budget_s,
                   "Stop proposing new configurations after S seconds: wall-clock seconds since the tuning "
                   "began on a GPU (as Kernel Tuner's time_limit); with --simulate, the recorded costs (compile + "
                   "verify + benchmark) of the evaluations replayed in series (with --compile-workers N: the clock of "
                   "N compiles at once ahead of the GPU, as the tuning loop runs), or their count for a recording "
                   "without costs. Without --budget the strategy plans for the evaluations that the pace of the first 8 "
                   "results says S holds (default: no limit)")
      ->check(positive_seconds());
  tune->add_option("--trace", args.trace, "With --simulate: write the session's trace (JSON) to this file")
      ->check(directory_exists_for_output());
  tune->add_option("--prior", args.prior,
                   fmt::format("Start from what the DB measured for this kernel on other GPUs or problems: auto (when "
                               "one matches{}), on (when one matches), none",
                               search::kPriorByDefault ? "" : "; off by default, see results/transfer_prior/transfer_prior.md"))
      ->check(CLI::IsMember({"auto", "on", "none"}));
  tune->add_option("--prior-from", args.prior_from,
                   "Also start from these recordings of the kernel (Kernel Tuner cache or T4 files, .json[.gz]) "
                   "made on other GPUs or problems; used when they match (kernel, parameter names and values)")
      ->expected(1, -1);
}

// The kernel a recording names (its file's name when it names none), by both its names.
search::KernelNames kernel_names_of(const replay::RecordingOrigin& o, const search::RecordedSpace& r) {
  return {o.kernel_name.empty() ? r.name() : o.kernel_name, o.kernel_function};
}

std::vector<search::Prior> priors_from_files(const SimulateArgs& args) {
  if (!args.prior_from.empty() && args.prior == "none")
    throw InputError("--prior none with --prior-from: give one of them");
  std::vector<search::Prior> out;
  for (const auto& f : args.prior_from) {
    replay::RecordingOrigin o;
    const search::RecordedSpace r = replay::load_recorded_space(f, &o);
    // A cache names its problem by its size (problem_size), and by its variables where cutune wrote it.
    out.push_back(search::prior_from_recording(
        r, {kernel_names_of(o, r), o.device_name, o.problem, {o.problem, o.problem_variables}}));
  }
  return out;
}

int cmd_simulate(const SimulateArgs& args, const std::string& strategy_name, std::optional<std::uint64_t> budget,
                 std::uint64_t seed, const std::string& db_path, const std::string& command) {
  if (args.lookahead && !args.compile_workers)
    throw InputError("--lookahead with --simulate: give --compile-workers too (in series nothing is compiled ahead)");
  replay::RecordingOrigin origin;
  const search::RecordedSpace recorded = replay::load_recorded_space(args.cache, &origin);
  const search::KernelNames kernel = kernel_names_of(origin, recorded);
  const Space& space = recorded.space();
  // --try as a tuning takes them, before anything is stored: each must be recorded.
  const std::vector<Configuration> tries = runner::parse_configs(space, args.first, "--try");
  // Without recorded costs every evaluation costs 1: "simulated time" and --time-budget are
  // evaluation counts.
  const bool in_evaluations = recorded.cost_unit() == search::CostUnit::Evaluations;
  const auto simulated = [&](double t) {
    return in_evaluations ? fmt::format("{:.0f} evaluations", t) : fmt::format("{:.1f} s", t);
  };
  if (in_evaluations)
    std::cout << fmt::format("{}: no recorded costs: simulated time is counted in evaluations (each costs 1){}\n",
                             recorded.name(), args.time_budget_s ? ", --time-budget too" : "");
  // A shard's strategy proposes from its share; the session still checks against the whole
  // recording, where the stored results of the other shards also lie.
  std::optional<Shard> shard;
  std::optional<Space> shard_space;
  if (!args.shard.empty()) {
    shard = parse_shard(args.shard);
    runner::check_shard_strategy(strategy_name, *shard);
    shard_space.emplace(shard_of(space, *shard));
  }
  const Space& searched = shard_space ? *shard_space : space;
  // Made now to refuse an unknown name before the DB is touched; made again below when stored
  // results widen its budget.
  std::optional<std::uint64_t> strategy_budget = budget;
  // A time budget alone: the strategy learns its evaluation budget from the first results' pace.
  const bool budget_learnt = args.time_budget_s && !budget;
  const auto make_strategy = [&](std::shared_ptr<const search::SpacePrior> prior) {
    search::StrategyOptions so{strategy_name, seed, strategy_budget, std::move(prior)};
    so.budget_learnt = budget_learnt;
    return search::make_strategy(searched, so);
  };
  auto strategy = make_strategy(nullptr);

  // With --db: the run and every evaluation are stored as a real run stores them, under the
  // recording's GPU and kernel; what that DB already holds is resumed, not re-run.
  std::optional<db::Store> store;
  std::optional<db::Run> run;
  std::vector<std::pair<Config, search::RecordedResult>> stored;
  std::string run_kernel, run_problem, run_device;
  if (!db_path.empty()) {
    store = db::Store::open(db_path, /*create=*/true);
    db::RunSpec spec;
    spec.device.name = origin.device_name.empty() ? "unknown" : origin.device_name;
    spec.kernel = kernel.name;
    spec.kernel_function = search::bare_function_name(kernel.function);
    spec.source_hash = "recorded:" + recorded.name();
    spec.problem_key = "recorded:" + recorded.name();
    spec.problem_json = "{}";
    spec.tool_version = CUTUNE_VERSION;
    spec.strategy = strategy_name;
    spec.seed = seed;
    spec.command = command;
    run.emplace(store->begin_run(spec));
    run_kernel = spec.kernel;
    run_problem = spec.problem_key;
    run_device = spec.device.name;
    for (const auto& m : run->measurements()) {
      const Configuration c = Configuration::from_key(space, m.config_key);
      const search::RecordedResult* r = recorded.find(c.index());
      if (r) stored.emplace_back(c.index(), *r);  // the recorded cost: resuming is free of re-measuring
    }
  }
  if (!stored.empty()) {
    std::cout << runner::stored_results_line(args.resume, budget, stored.size()) << '\n';
    // As TuningSession::reuse_stored: the strategy may propose the stored ones it reaches
    // (free) and still `budget` new ones.
    const auto in_share = static_cast<std::uint64_t>(
        std::count_if(stored.begin(), stored.end(), [&](const auto& s) { return searched.is_valid(s.first); }));
    if (!args.resume && budget && in_share > 0) {
      strategy_budget = *budget + in_share;
      strategy = make_strategy(nullptr);
    }
  }

  // A prior: the --prior-from recordings, and the DB's measurements of this kernel on other
  // GPUs or problems (not this run's own target, whose results are resumed above).
  std::vector<search::Prior> priors = priors_from_files(args);
  if (run && runner::prior_from_db(runner::parse_prior_mode(args.prior))) {
    auto from_db = runner::priors_from_store(*store, kernel, Objective::time(), run->kernel_id(),
                                             run->problem_id(), run->device_id());
    priors.insert(priors.end(), from_db.begin(), from_db.end());
  }
  std::shared_ptr<const search::SpacePrior> prior;
  std::vector<search::PriorUse> prior_uses;
  if (!priors.empty()) {
    // As a tuning and `cutune score` do: the recording's own problem size on other GPUs first.
    prior = std::make_shared<const search::SpacePrior>(
        searched, kernel, priors, search::ProblemSize{origin.problem, origin.problem_variables});
    std::cout << prior->summary() << '\n';
    prior_uses = prior->uses();
    if (prior->empty()) prior.reset();
    else
      strategy = make_strategy(prior);
  }

  search::SimulationOptions options;
  options.session.max_evaluations = budget;
  options.session.max_time_s = args.time_budget_s;
  options.session.stored_count_against_budget = args.resume;
  options.budget_from_pace = budget_learnt;
  options.compile_workers = args.compile_workers;
  // What the tuning loop evaluates before the strategy: a default the recording names, then --try.
  options.first = search::loop_first(recorded);
  for (const Configuration& c : tries) options.first.push_back(c.index());  // right after the default
  if (args.lookahead) options.lookahead = *args.lookahead;
  if (options.compile_workers)
    std::cout << fmt::format("as the tuning loop runs: {} compile workers ahead of the GPU, {} proposals ahead at most\n",
                             options.compile_workers, search::pipeline_lookahead(*strategy, options));
  const auto result = search::simulate(recorded, *strategy, options, stored);

  double best = INFINITY;
  std::string best_key;
  std::uint64_t failed = 0, resumed = 0;
  for (std::size_t i = 0; i < result.trace.size(); ++i) {
    const auto& e = result.trace[i];
    const Configuration c(space, e.config);
    const std::string key = c.key();
    if (!e.observation.valid) ++failed;
    else if (e.observation.objective < best) {
      best = e.observation.objective;
      best_key = key;
    }
    if (e.stored) {
      ++resumed;
      continue;
    }
    std::cout << fmt::format("[{}] {} {} (simulated {}){}\n", i + 1, key,
                             e.observation.valid ? fmt::format("{:.4f}", e.observation.objective) : "failed",
                             simulated(e.elapsed_s), std::isfinite(best) ? fmt::format(" best {:.4f}", best) : "");
    if (run) {
      db::Measurement m;
      m.config_key = key;
      m.config_json = c.json();
      m.status = e.observation.valid ? Status::Ok : Status::Runtime;
      if (!e.observation.valid) m.error = "failed in the recording";
      m.median_ms = e.observation.valid ? e.observation.objective : 0.0;
      // The recording's parts of the cost, as an import stores them: `cutune report` shows
      // where the simulated time went.
      const search::RecordedResult* recorded_result = recorded.find(e.config);
      m.compile_ms = recorded_result ? recorded_result->compile_s * 1e3 : 0.0;
      m.verify_ms = recorded_result ? recorded_result->verify_s * 1e3 : 0.0;
      m.stats_json = fmt::format(R"({{"simulated_cost_s":{},"simulated_benchmark_s":{}}})", e.cost_s,
                                 recorded_result ? recorded_result->benchmark_s : 0.0);
      m.started_at = m.finished_at = db::utc_now_iso();
      run->add(m);
    }
  }
  if (run) {
    // The winner as tune declares it without finalists: the best median over everything
    // stored for the target, equal medians in the order of their keys' text (runner::rank).
    std::optional<std::pair<double, std::string>> winner;
    const search::TraceEntry* winning = nullptr;
    for (const auto& e : result.trace) {
      if (!e.observation.valid) continue;
      std::pair<double, std::string> v{e.observation.objective, space.key(e.config)};
      if (!winner || v < *winner) {
        winner = std::move(v);
        winning = &e;
      }
    }
    if (winning) {
      db::WinnerChoice w;
      w.config_key = winner->second;
      w.config_json = Configuration(space, winning->config).json();
      w.median_ms = winner->first;
      w.objective = Objective::time();
      w.objective_value = winner->first;
      w.verdict = Verdict::Screening;  // nothing re-measured
      run->set_winner(w);
    }
    run->end();
  }
  if (result.learnt_budget)
    std::cout << fmt::format("--time-budget {} at the pace of the first {} results ({} per evaluation): {} planned for "
                             "{} evaluations\n",
                             simulated(*args.time_budget_s), search::kPaceResults,
                             in_evaluations ? fmt::format("{:.3g} evaluations", *result.pace_s)
                                            : fmt::format("{:.3g} s", *result.pace_s),
                             strategy_name, *result.learnt_budget);
  std::cout << fmt::format(
      "simulated {} on {}: {} evaluations ({} resumed, {} failed), {} revisits, {} simulated, ended by {}\n",
      strategy_name, recorded.name(), result.trace.size(), resumed, failed, result.revisits,
      simulated(result.trace.empty() ? 0.0 : result.trace.back().elapsed_s), search::session_end_name(result.end));
  if (std::isfinite(best)) std::cout << fmt::format("best: {} {:.4f}\n", best_key, best);
  if (prior)
    std::cout << fmt::format("prior used: {} measurements from {} source(s)\n", prior->measurements_used(),
                             std::count_if(prior->uses().begin(), prior->uses().end(),
                                           [](const search::PriorUse& u) { return u.used; }));
  if (run) {  // under the recording's names, which are not the file's: say how to find them
    std::cout << fmt::format("in {} under kernel {}, problem {}, GPU {}: cutune query --db {} --kernel {}\n",
                             db_path, run_kernel, run_problem, run_device, db_path, run_kernel);
    std::cout << report_hint(db_path, run_kernel, run_problem) << '\n';
  }

  if (!args.trace.empty()) {
    nlohmann::ordered_json j;
    j["space"] = recorded.name();
    j["strategy"] = strategy_name;
    j["seed"] = seed;
    j["end"] = search::session_end_name(result.end);
    j["revisits"] = result.revisits;
    j["cost_unit"] = search::cost_unit_name(recorded.cost_unit());  // of cost_s and elapsed_s
    auto& jp = j["prior"] = nlohmann::ordered_json::array();
    for (const auto& u : prior_uses) jp.push_back(prior_use_json(u));
    auto& t = j["trace"] = nlohmann::ordered_json::array();
    for (const auto& e : result.trace)
      t.push_back({{"key", Configuration(space, e.config).key()},
                   {"valid", e.observation.valid},
                   {"objective", e.observation.valid ? nlohmann::ordered_json(e.observation.objective) : nullptr},
                   {"cost_s", e.cost_s},
                   {"elapsed_s", e.elapsed_s},
                   {"stored", e.stored}});
    std::ofstream out(args.trace);
    if (!out) throw InputError(fmt::format("--trace {}: cannot be written", args.trace));
    out << j.dump(1) << '\n';
  }
  return kOk;
}

}  // namespace cutune::cli
