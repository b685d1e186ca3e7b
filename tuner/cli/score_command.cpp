// cutune score: strategies compared on recorded spaces by the FGCS 2024 methodology.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/search/scoring_table.hpp"
#include "cutune/search/simulation.hpp"
#include "option_checks.hpp"
#include "replay_commands.hpp"

namespace cutune::cli {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Runs of another tool: {"traces": [{"space": NAME, "strategy": NAME, "runs": [[KEY, ...], ...]}]},
// each run the configuration keys in the order that tool evaluated them.
std::vector<search::ExternalRuns> read_traces(const std::string& file,
                                              const std::vector<search::RecordedSpace>& spaces) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("{}: cannot be read", file));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column 2: ...":
    // the part in brackets is the library's, not the user's.
    std::string why = e.what();
    if (const auto pos = why.find("] "); why.rfind("[json.exception", 0) == 0 && pos != std::string::npos)
      why = why.substr(pos + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", file, why));
  }
  if (!j.is_object() || !j.contains("traces") || !j["traces"].is_array())
    throw InputError(fmt::format("{}: expected an object with a \"traces\" list", file));
  std::vector<search::ExternalRuns> out;
  for (std::size_t i = 0; i < j["traces"].size(); ++i) {
    const auto& t = j["traces"][i];
    const std::string where = fmt::format("{}: traces[{}]", file, i);
    if (!t.is_object() || !t.contains("space") || !t["space"].is_string() || !t.contains("strategy") ||
        !t["strategy"].is_string() || !t.contains("runs") || !t["runs"].is_array())
      throw InputError(fmt::format("{}: expected \"space\", \"strategy\" (strings) and \"runs\" (a list)", where));
    search::ExternalRuns runs{t["strategy"].get<std::string>(), t["space"].get<std::string>(), {}};
    const search::RecordedSpace* space = nullptr;
    for (const auto& s : spaces)
      if (s.name() == runs.space) space = &s;
    if (!space) throw InputError(fmt::format("{}.space: '{}' is not among --spaces", where, runs.space));
    for (std::size_t r = 0; r < t["runs"].size(); ++r) {
      const auto& keys = t["runs"][r];
      const std::string at = fmt::format("{}.runs[{}]", where, r);
      if (!keys.is_array()) throw InputError(fmt::format("{}: expected a list of configuration keys", at));
      std::vector<Config> configs;
      for (const auto& k : keys) {
        if (!k.is_string()) throw InputError(fmt::format("{}: a configuration key must be a string", at));
        try {
          configs.push_back(space->space().parse_key(k.get<std::string>()));
        } catch (const InputError& e) {
          throw InputError(fmt::format("{}: {}", at, e.what()));
        }
      }
      runs.runs.push_back(search::replay_trace(*space, configs, at));
    }
    out.push_back(std::move(runs));
  }
  return out;
}

}  // namespace

CLI::App* add_score_command(CLI::App& app, ScoreArgs& a) {
  auto* score = app.add_subcommand(
      "score", "Compare search strategies on recorded spaces (FGCS 2024 methodology; simulated, no GPU)");
  score->add_option("--spaces", a.spaces, "Recorded spaces: Kernel Tuner cache or T4 files, or KTT results (.json[.gz]); "
                                              "without recorded costs, scored in evaluations")
      ->required()
      ->expected(1, -1);
  score->add_option("--strategies", a.strategies, "Comma-separated strategy names (default: all)");
  score->add_option("--repeats", a.repeats, "Runs per strategy and space")->check(CLI::Range(1u, 100000u));
  score->add_option("--seed", a.seed, "Run r of every strategy uses seed + r")->check(whole_number());
  score->add_option("--traces", a.traces, "Other tools' runs (JSON: {\"traces\": [{space, strategy, runs}]}), "
                                          "scored beside cutune's")
      ->expected(1, -1);
  score->add_option("--json", a.json, "Write the table, spaces and settings as JSON to this file")
      ->check(directory_exists_for_output());
  score->add_option("--threads", a.threads, "Simulation threads (0: one per core)")->check(whole_number());
  score->add_option("--workers", a.workers,
                    "Evaluators (GPUs) at once in each simulated run; the baseline is random search with as "
                    "many, the window T(p) / workers of simulated wall time")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  score->add_option("--batch", a.batch,
                    "Proposals a strategy is asked for at a time, before it is told their results (the real "
                    "tuning loop asks up to 8 at a time and has one per compile worker plus 4 pending; 1: sequential, as "
                    "Kernel Tuner's runner)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  score->add_option("--compile-workers", a.compile_workers,
                    "Simulate cutune's runs as its tuning loop makes them: this many compile workers compile "
                    "ahead in parallel and the evaluators only benchmark (0: compile and benchmark in series, "
                    "as Kernel Tuner runs and as the methodology charges; other tools' traces stay in series)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{4096}));
  score->add_option("--lookahead", a.lookahead,
                    "With --compile-workers: proposals queued, compiling or compiled ahead of the evaluators, at "
                    "most (0: the tuning loop's own rule)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  score->add_flag("--budget-from-pace", a.budget_from_pace,
                  "Strategies are not told their evaluation budget: they learn it from the pace of their first "
                  "results, as a tuning with --time-budget and no --budget does");
  score->add_flag("--strategy-alone", a.strategy_alone,
                  "cutune's runs without the default configuration its tuning loop evaluates first: each "
                  "strategy's proposals alone, as other tools' runs are");
  score->add_option("--points", a.points, "Points in the time window")->check(CLI::Range(2, 1000000));
  score->add_option("--curve", a.curve, "S(t): median of the repeats, or isotonic regression of the pooled "
                                        "repeats (the reference implementation's)")
      ->check(CLI::IsMember({"median", "isotonic"}));
  score->add_option("--prior-from", a.prior_from,
                    "Recordings of the kernels on other GPUs or problems (.json[.gz]; may repeat --spaces): each "
                    "space is scored with and without a prior from the others of its kernel (rows NAME+prior)")
      ->expected(1, -1);
  return score;
}

search::ComparisonOptions comparison_options(const ScoreArgs& a) {
  search::ComparisonOptions o;
  o.strategies = a.strategies.empty() ? search::strategy_names() : split_commas(a.strategies);
  o.repeats = a.repeats;
  o.seed = a.seed;
  o.threads = a.threads;
  o.workers = a.workers;
  o.batch = a.batch;
  o.compile_workers = a.compile_workers;
  o.lookahead = a.lookahead;
  o.budget_from_pace = a.budget_from_pace;
  o.default_first = !a.strategy_alone;
  o.scoring.workers = a.workers;
  o.scoring.points = a.points;
  o.scoring.curve = a.curve == "isotonic" ? search::CurveMethod::Isotonic : search::CurveMethod::Median;
  return o;
}

int cmd_score(const ScoreArgs& a) {
  if (!a.prior_from.empty()) return cmd_score_with_prior(a);
  std::vector<search::RecordedSpace> spaces;
  for (const auto& f : a.spaces) {
    spaces.push_back(replay::load_recorded_space(f));
    for (std::size_t i = 0; i + 1 < spaces.size(); ++i)
      if (spaces[i].name() == spaces.back().name())
        throw InputError(fmt::format("--spaces: two files are named {}", spaces.back().name()));
  }
  std::vector<search::ExternalRuns> external;
  for (const auto& f : a.traces) {
    auto runs = read_traces(f, spaces);
    external.insert(external.end(), runs.begin(), runs.end());
  }
  const search::ComparisonOptions o = comparison_options(a);
  const auto t0 = std::chrono::steady_clock::now();
  const search::ScoreTable table = search::compare_strategies(spaces, o, external);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::cout << search::format_score_table(table);
  // A reader of the table needs the scale: a strategy below 0 is not broken, it is slower to
  // good configurations than picking at random (brute force, which walks the space in order).
  std::cout << "score: the mean over the window of (best so far - random) / (optimum - random): 1 = the optimum "
               "from the start, 0 = as good as the calculated random search, below 0 = worse than random search "
               "(e.g. brute force, which walks the space in order); a sampled random run scatters around 0. The "
               "failure-aware score replaces the random search over the valid configurations by one over every "
               "recorded configuration, whose failures spend their cost and find nothing: on a space with many "
               "failures, random search scores about 0 there and below 0 on the methodology's\n";
  std::cout << fmt::format("{} repeats per strategy and space{}{}, proposals asked {} at a time{}, window T({})..T({}){}, {} points, "
                           "S(t): {}; {:.1f} s\n",
                           a.repeats,
                           o.budget_from_pace ? " (evaluation budgets learnt from the pace of the first results)" : "",
                           o.default_first ? ", cutune's runs start with the default configuration where the recording names it, as its "
                                             "tuning loop does"
                                           : ", cutune's runs are its strategies' proposals alone (--strategy-alone)",
                           o.batch,
                           o.compile_workers == 0
                               ? std::string()
                               : fmt::format(" (cutune's: {} compile workers ahead of the evaluators, lookahead {})",
                                             o.compile_workers,
                                             o.lookahead ? std::to_string(o.lookahead) : std::string("by the loop's rule")),
                           o.scoring.p_start, o.scoring.p_end,
                           o.workers == 1 ? std::string() : fmt::format(" / {} workers", o.workers), o.scoring.points,
                           a.curve == "median" ? "median of the repeats" : "isotonic regression of the pooled repeats",
                           wall_s);
  if (!a.json.empty()) {
    nlohmann::ordered_json j;
    j["date"] = db::utc_now_iso();
    j["command"] = a.command;
    j["methodology"] = {{"window", {o.scoring.p_start, o.scoring.p_end}},
                        {"points", o.scoring.points},
                        {"curve", a.curve == "median" ? "median of the repeats' best-so-far"
                                                   : "isotonic regression of the pooled repeats' best-so-far ranks"},
                        {"baseline", "calculated random search, tau = mean cost"},
                        {"baseline_failure_aware",
                         "calculated random search over every recorded configuration, failures included"}};
    j["repeats"] = a.repeats;
    j["seed"] = a.seed;
    j["batch"] = o.batch;
    j["workers"] = o.workers;
    j["compile_workers"] = o.compile_workers;
    j["lookahead"] = o.lookahead ? nlohmann::ordered_json(o.lookahead) : nlohmann::ordered_json("the tuning loop's rule");
    j["budget_from_pace"] = o.budget_from_pace;
    // Scores made before the loop's default evaluation was simulated have no such field: they
    // are the strategies alone.
    j["default_first"] = o.default_first;
    auto& js = j["spaces"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < spaces.size(); ++i) {
      const search::SpaceScoring s(spaces[i], o.scoring);
      js.push_back({{"name", spaces[i].name()},
                    {"file", a.spaces[i]},
                    {"configurations", spaces[i].entries().size()},
                    {"valid", s.size()},
                    // "seconds", or "evaluations" for a space without recorded costs: then every
                    // "_s" field below (costs, window, time budget) is an evaluation count.
                    {"cost_unit", search::cost_unit_name(s.unit())},
                    {"imputed_costs", spaces[i].imputed_costs()},
                    {"optimum", s.optimum()},
                    {"median", s.median()},
                    {"median_cost_s", s.median_cost_s()},
                    {"mean_cost_s", s.mean_cost_s()},
                    {"window_s", {s.window_start_s(), s.window_end_s()}},
                    {"time_budget_s", table.time_budget_s[i]},
                    {"evaluation_budget", table.evaluation_budget[i]}});
    }
    auto& jr = j["strategies"] = nlohmann::ordered_json::array();
    for (const auto& r : table.rows) {
      auto number = [](double v) { return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); };
      nlohmann::ordered_json per = nlohmann::ordered_json::object(), per_fa = nlohmann::ordered_json::object(),
                             error = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < table.spaces.size(); ++i) {
        per[table.spaces[i]] = number(r.per_space[i]);
        per_fa[table.spaces[i]] = number(r.per_space_failure_aware[i]);
        if (!std::isnan(r.per_space_error[i])) error[table.spaces[i]] = r.per_space_error[i];
      }
      jr.push_back({{"strategy", r.strategy},
                    {"source", r.source},
                    {"overall", number(r.overall)},
                    {"per_space", per},
                    {"score_failure_aware", number(r.overall_failure_aware)},
                    {"per_space_failure_aware", per_fa},
                    {"runs", r.runs}});
      // The scores' standard errors (search::sampling_error), where estimated: 10 runs or more.
      if (!error.empty()) jr.back()["sampling_error"] = error;
      if (!std::isnan(r.overall_error)) jr.back()["sampling_error_overall"] = r.overall_error;
    }
    std::ofstream out(a.json);
    if (!out) throw InputError(fmt::format("--json {}: cannot be written", a.json));
    out << j.dump(1) << '\n';
  }
  return kOk;
}

}  // namespace cutune::cli
