// cutune tune --simulate RECORDING: the tuning loop (runner::tune) replays a recorded space
// instead of tuning on a GPU (runner::ReplayPipeline); what it prints and writes.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
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

namespace {

/// "12.3 s", or "12 evaluations" for a recording without costs (each evaluation costs 1).
class SimulatedTime {
 public:
  explicit SimulatedTime(const search::RecordedSpace& recorded)
      : in_evaluations_(recorded.cost_unit() == search::CostUnit::Evaluations) {}
  bool in_evaluations() const { return in_evaluations_; }
  std::string operator()(double t) const {
    return in_evaluations_ ? fmt::format("{:.0f} evaluations", t) : fmt::format("{:.1f} s", t);
  }

 private:
  bool in_evaluations_;
};

/// One replayed lane per GPU --gpus names (a GPU named twice is two); one without --gpus.
/// A replay has no GPU to count, so "all" is refused.
std::vector<int> replayed_gpus(const std::string& text) {
  std::vector<int> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    int gpu = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), gpu);
    if (ec != std::errc() || ptr != item.data() + item.size() || gpu < 0)
      throw InputError(fmt::format("--gpus {} with --simulate: name the GPUs to rehearse (e.g. 0,1), one lane each",
                                   text));
    out.push_back(gpu);
    start = end + 1;
  }
  return out;
}

/// The lines a replay prints after it ran: each evaluation with the simulated time it arrived
/// at, then the run's summary.
void print_replay(const runner::TuneReport& r, const search::RecordedSpace& recorded, const SimulateArgs& args,
                  const std::string& strategy, std::optional<std::uint64_t> budget, const std::string& db_path) {
  const SimulatedTime simulated(recorded);
  const Space& space = recorded.space();
  const auto resumed =
      static_cast<std::uint64_t>(std::count_if(r.trace.begin(), r.trace.end(), [](const auto& e) { return e.stored; }));
  if (resumed > 0) std::cout << runner::stored_results_line(args.resume, budget, resumed) << '\n';
  if (!r.prior_summary.empty()) std::cout << r.prior_summary << '\n';
  if (args.compile_workers)
    std::cout << fmt::format("as the tuning loop runs: {} compile workers ahead of the GPU, {} proposals ahead at most\n",
                             args.compile_workers, r.lookahead);
  double best = INFINITY;
  std::string best_key;
  std::uint64_t failed = 0;
  for (std::size_t i = 0; i < r.trace.size(); ++i) {
    const auto& e = r.trace[i];
    const std::string key = space.key(e.config);
    if (!e.observation.valid) ++failed;
    else if (e.observation.objective < best) {
      best = e.observation.objective;
      best_key = key;
    }
    if (e.stored) continue;
    std::cout << fmt::format("[{}] {} {} (simulated {}){}\n", i + 1, key,
                             e.observation.valid ? fmt::format("{:.4f}", e.observation.objective) : "failed",
                             simulated(e.elapsed_s), std::isfinite(best) ? fmt::format(" best {:.4f}", best) : "");
  }
  if (r.learnt_budget && r.pace_s)
    std::cout << fmt::format("--time-budget {} at the pace of the first {} results ({} per evaluation): {} planned for "
                             "{} evaluations\n",
                             simulated(*args.time_budget_s), search::kPaceResults,
                             simulated.in_evaluations() ? fmt::format("{:.3g} evaluations", *r.pace_s)
                                                        : fmt::format("{:.3g} s", *r.pace_s),
                             strategy, *r.learnt_budget);
  std::cout << fmt::format(
      "simulated {} on {}: {} evaluations ({} resumed, {} failed), {} revisits, {} simulated, ended by {}\n", strategy,
      recorded.name(), r.trace.size(), resumed, failed, r.revisits,
      simulated(r.trace.empty() ? 0.0 : r.trace.back().elapsed_s), search::session_end_name(r.end));
  if (std::isfinite(best)) std::cout << fmt::format("best: {} {:.4f}\n", best_key, best);
  std::size_t sources = 0, used = 0;
  for (const auto& u : r.prior)
    if (u.used) ++sources, used += u.measurements;
  if (sources > 0) std::cout << fmt::format("prior used: {} measurements from {} source(s)\n", used, sources);
  if (!db_path.empty()) {  // under the recording's names, which are not the file's: say how to find them
    std::cout << fmt::format("in {} under kernel {}, problem {}, GPU {}: cutune query --db {} --kernel {}\n", db_path,
                             r.kernel, r.problem_key, r.device.name, db_path, r.kernel);
    std::cout << report_hint(db_path, r.kernel, r.problem_key) << '\n';
  }
}

/// --trace: the session's trace as JSON (what scripts/simulated_tunings.py reads).
void write_trace(const runner::TuneReport& r, const search::RecordedSpace& recorded, const SimulateArgs& args,
                 const std::string& strategy, std::uint64_t seed) {
  nlohmann::ordered_json j;
  j["space"] = recorded.name();
  j["strategy"] = strategy;
  j["seed"] = seed;
  j["end"] = search::session_end_name(r.end);
  j["revisits"] = r.revisits;
  j["cost_unit"] = search::cost_unit_name(recorded.cost_unit());  // of cost_s and elapsed_s
  auto& jp = j["prior"] = nlohmann::ordered_json::array();
  for (const auto& u : r.prior) jp.push_back(prior_use_json(u));
  auto& t = j["trace"] = nlohmann::ordered_json::array();
  for (const auto& e : r.trace)
    t.push_back({{"key", recorded.space().key(e.config)},
                 {"valid", e.observation.valid},
                 {"objective", e.observation.valid ? nlohmann::ordered_json(e.observation.objective) : nullptr},
                 {"cost_s", e.cost_s},
                 {"elapsed_s", e.elapsed_s},
                 {"stored", e.stored}});
  std::ofstream out(args.trace);
  if (!out) throw InputError(fmt::format("--trace {}: cannot be written", args.trace));
  out << j.dump(1) << '\n';
}

}  // namespace

int cmd_tune_simulated(const SimulateArgs& args, const TuneArgs& tune) {
  if (args.lookahead && !args.compile_workers)
    throw InputError("--lookahead with --simulate: give --compile-workers too (in series nothing is compiled ahead)");
  if (tune.budget && *tune.budget == 0) throw InputError("--budget 0: must be at least 1");
  replay::RecordingOrigin origin;
  const search::RecordedSpace recorded = replay::load_recorded_space(args.cache, &origin);
  runner::TuneOptions o;
  o.strategy = tune.strategy;
  o.budget = tune.budget;
  o.seed = tune.seed;
  o.resume = args.resume;
  // A replay resumes what the DB holds of the recording's own GPU, as its runs stored it.
  o.reuse = runner::TuneOptions::Reuse::Gpu;
  if (!args.shard.empty()) o.shard = parse_shard(args.shard);
  o.time_budget_s = args.time_budget_s;
  o.prior = runner::parse_prior_mode(args.prior);
  o.priors = priors_from_files(args);
  o.first = args.first;
  o.devices = replayed_gpus(tune.gpus);
  o.compile.workers = args.compile_workers;
  o.lookahead = args.lookahead;
  o.command = tune.command;
  // Without --db the run is stored nowhere that lasts: the loop still stores as it goes.
  o.db = tune.db.empty() ? std::filesystem::path(":memory:") : std::filesystem::path(tune.db);
  o.progress = [](const runner::TuneOptions::Progress&) {};  // printed from the report once it ran
  runner::TuningSession session(recorded, origin, std::move(o));
  const SimulatedTime simulated(recorded);
  if (simulated.in_evaluations())
    std::cout << fmt::format("{}: no recorded costs: simulated time is counted in evaluations (each costs 1){}\n",
                             recorded.name(), args.time_budget_s ? ", --time-budget too" : "");
  const runner::TuneReport report = runner::tune(std::move(session));
  print_replay(report, recorded, args, tune.strategy, tune.budget, tune.db);
  if (!args.trace.empty()) write_trace(report, recorded, args, tune.strategy, tune.seed);
  return kOk;
}

}  // namespace cutune::cli
