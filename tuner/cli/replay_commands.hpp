#pragma once
// Recorded spaces on the command line: `cutune tune --simulate CACHE` (a tuning session replayed
// from a recorded space, no GPU) and `cutune score` (strategies compared by the FGCS 2024
// methodology). Kept apart from commands.cpp: these need no CUDA, only search and replay.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cutune/search/prior.hpp"
#include "cutune/search/scoring_table.hpp"
#include "printers/report_json_printer.hpp"  // prior_use_json

namespace CLI {
class App;
}

namespace cutune::cli {

struct TuneArgs;

struct SimulateArgs {
  std::string cache;                   ///< --simulate: a Kernel Tuner cache or T4 file
  std::optional<double> time_budget_s; ///< --time-budget (tune: also for real runs)
  std::string trace;                   ///< --trace: write the session's trace as JSON
  bool resume = false;                 ///< --resume (tune's): stored results count against the budget
  std::string shard;                   ///< --shard i/N (tune's); "" = the whole space
  std::string prior = "auto";          ///< --prior auto|on|none (tune's, real runs too)
  std::vector<std::string> prior_from; ///< --prior-from: recordings to build a prior from (tune's too)
  /// tune's --compile-workers and --lookahead: with --simulate, N > 0 replays the tuning loop's
  /// pipeline (N compiles at once ahead of the GPU; search::SimulationOptions); 0, compile and
  /// benchmark in series.
  std::size_t compile_workers = 0;
  std::optional<std::size_t> lookahead;
  std::vector<std::string> first;  ///< tune's --try: evaluated right after the default
};
/// Adds --simulate, --time-budget, --trace, --prior and --prior-from to `tune`.
void add_simulate_options(CLI::App* tune, SimulateArgs& args);
/// The priors of --prior-from files (each a Kernel Tuner cache or T4 file); InputError when
/// --prior none is given with them.
std::vector<search::Prior> priors_from_files(const SimulateArgs& args);
/// `tune --simulate`: the tuning loop replays the recording (one lane per GPU of --gpus),
/// prints one line per evaluation and a summary, writes --trace, and with --db stores the run,
/// its measurements and its winner (time, screening) as a tuning does, reusing what that DB
/// already holds (--budget and --resume say how it counts). Of `tune`'s options it takes the
/// strategy, budget, seed, DB, --gpus and the command line.
int cmd_tune_simulated(const SimulateArgs& args, const TuneArgs& tune);

struct ScoreArgs {
  std::vector<std::string> spaces, traces;
  std::string strategies;  ///< comma-separated; "" = every strategy
  unsigned repeats = 100;
  std::uint64_t seed = 1;
  std::string json;
  unsigned threads = 0;
  std::size_t workers = 1;  ///< evaluators at once in each simulated run
  std::size_t batch = search::ComparisonOptions{}.batch;  ///< proposals asked at a time
  std::size_t compile_workers = 0;  ///< --compile-workers: 0 = compile and evaluation in series
  std::size_t lookahead = 0;        ///< --lookahead: 0 = the tuning loop's rule
  bool budget_from_pace = false;    ///< --budget-from-pace
  bool strategy_alone = false;      ///< --strategy-alone
  std::size_t points = 1000;
  std::string curve = "isotonic";  ///< S(t): "isotonic" (the reference's) or "median"
  std::string command;
  /// --prior-from: recordings the priors come from; each of --spaces is then scored with
  /// and without a prior from the ones of its kernel measured elsewhere (leave one out).
  std::vector<std::string> prior_from;
};
CLI::App* add_score_command(CLI::App& app, ScoreArgs& args);
int cmd_score(const ScoreArgs& args);
/// The strategies, runs and scoring options that --strategies, --repeats, --seed, --threads,
/// --workers, --points and --curve ask for (both score commands).
search::ComparisonOptions comparison_options(const ScoreArgs& args);
/// cmd_score with --prior-from (transfer_score_command.cpp).
int cmd_score_with_prior(const ScoreArgs& args);

}  // namespace cutune::cli
