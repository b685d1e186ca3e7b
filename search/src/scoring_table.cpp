#include "cutune/search/scoring_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cutune/model/errors.hpp"
#include "cutune/search/pace.hpp"
#include "cutune/search/simulation.hpp"

namespace cutune::search {

std::uint64_t planning_budget(const SpaceScoring& scoring) {
  return std::min<std::uint64_t>(2 * scoring.expected_evaluations(), scoring.size());
}

std::uint64_t pipeline_planning_budget(const RecordedSpace& space, const SpaceScoring& scoring,
                                       std::size_t compile_workers, std::size_t workers) {
  if (compile_workers == 0) return planning_budget(scoring);
  // The pipeline's pace over the valid configurations (those random search draws, as
  // SpaceScoring's tau); a run with a time budget alone measures the same over its first
  // results (pace.hpp).
  PaceEstimate pace(compile_workers, workers);
  for (const auto& e : space.entries()) {
    if (!e.result.observation.valid) continue;
    const auto [c, v] = compile_and_evaluate_s(e.result, space.cost_unit());
    pace.add(c, v);
  }
  if (pace.results() == 0) return planning_budget(scoring);
  return planning_budget_at_pace(scoring.window_end_s(), pace.per_evaluation_s(), scoring.size());
}

double sampling_error(const SpaceScoring& scoring, const std::vector<std::vector<TraceEntry>>& runs) {
  const std::size_t k = runs.size() / kErrorSubsetRuns;
  if (k < 2) return std::nan("");
  std::vector<double> scores;
  for (std::size_t i = 0; i < k; ++i)
    scores.push_back(scoring.score({runs.begin() + static_cast<std::ptrdiff_t>(i * kErrorSubsetRuns),
                                    runs.begin() + static_cast<std::ptrdiff_t>((i + 1) * kErrorSubsetRuns)}));
  double mean = 0.0;
  for (double s : scores) mean += s;
  mean /= static_cast<double>(k);
  double ss = 0.0;
  for (double s : scores) ss += (s - mean) * (s - mean);
  const double sd = std::sqrt(ss / static_cast<double>(k - 1));
  return sd * std::sqrt(static_cast<double>(kErrorSubsetRuns) / static_cast<double>(runs.size()));
}

ScoreTable compare_strategies(const std::vector<RecordedSpace>& spaces, const ComparisonOptions& options,
                              const std::vector<ExternalRuns>& external) {
  const auto known = strategy_names();
  for (const auto& s : options.strategies)
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw InputError(fmt::format("unknown strategy '{}' (known: {})", s, fmt::join(known, ", ")));
  if (options.repeats == 0) throw InputError("--repeats must be at least 1");
  if (options.workers == 0) throw InputError("--workers must be at least 1");
  if (options.workers != options.scoring.workers)
    throw std::logic_error("compare_strategies: the runs' and the scoring's evaluators differ");
  if (options.workers > 1 && !external.empty())
    throw InputError(fmt::format("other tools' runs (--traces) are sequential: they cannot be scored with {} "
                                 "workers",
                                 options.workers));

  ScoreTable table;
  table.workers = options.workers;
  std::vector<SpaceScoring> scorings;
  for (const auto& s : spaces) {
    scorings.emplace_back(s, options.scoring);
    table.spaces.push_back(s.name());
    table.units.push_back(s.cost_unit());
    table.time_budget_s.push_back(scorings.back().window_end_s());
    table.evaluation_budget.push_back(
        pipeline_planning_budget(s, scorings.back(), options.compile_workers, options.workers));
  }

  // runs[strategy][space][repeat], filled by worker threads (one task per strategy, space).
  const std::size_t ns = options.strategies.size(), nsp = spaces.size();
  std::vector<std::vector<std::vector<std::vector<TraceEntry>>>> runs(
      ns, std::vector<std::vector<std::vector<TraceEntry>>>(nsp, std::vector<std::vector<TraceEntry>>(options.repeats)));
  // What a tuning evaluates before its strategy on each space: the same for every run there.
  std::vector<std::vector<Config>> first(nsp);
  if (options.default_first)
    for (std::size_t sp = 0; sp < nsp; ++sp) first[sp] = loop_first(spaces[sp]);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const std::size_t tasks = ns * nsp * options.repeats;
  auto work = [&] {
    for (std::size_t t = next++; t < tasks; t = next++) {
      const std::size_t st = t / (nsp * options.repeats), sp = (t / options.repeats) % nsp,
                        r = t % options.repeats;
      try {
        StrategyOptions so{options.strategies[st], options.seed + r,
                           options.budget_from_pace ? std::nullopt
                                                    : std::optional<std::uint64_t>(table.evaluation_budget[sp])};
        so.budget_learnt = options.budget_from_pace;
        if (!options.priors.empty()) so.prior = options.priors.at(sp);
        auto strategy = make_strategy(spaces[sp].space(), so);
        SimulationOptions sim;
        sim.batch = options.batch;
        sim.workers = options.workers;
        sim.compile_workers = options.compile_workers;
        sim.lookahead = options.lookahead;
        sim.session.max_time_s = table.time_budget_s[sp];
        sim.budget_from_pace = options.budget_from_pace;
        sim.first = first[sp];
        runs[st][sp][r] = simulate(spaces[sp], *strategy, sim).trace;
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = tasks;
      }
    }
  };
  const unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < std::min<std::size_t>(threads, tasks); ++i) pool.emplace_back(work);
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);

  auto finish = [&](ScoreRow row) {
    double sum = 0.0;
    bool complete = true;
    for (double s : row.per_space) {
      if (std::isnan(s)) complete = false;
      else sum += s;
    }
    row.overall = complete ? sum / static_cast<double>(nsp) : std::nan("");
    double sum_fa = 0.0;
    for (double s : row.per_space_failure_aware) sum_fa += s;
    row.overall_failure_aware = complete ? sum_fa / static_cast<double>(nsp) : std::nan("");
    // The spaces' runs are independent: the error of the mean is sqrt(sum of squares) / n.
    double squares = 0.0;
    for (double e : row.per_space_error) squares += e * e;  // NaN anywhere: NaN
    row.overall_error = complete ? std::sqrt(squares) / static_cast<double>(nsp) : std::nan("");
    table.rows.push_back(std::move(row));
  };
  for (std::size_t st = 0; st < ns; ++st) {
    ScoreRow row{options.strategies[st], "cutune", {}, {}, 0.0, {}, 0.0, {}, 0.0};
    for (std::size_t sp = 0; sp < nsp; ++sp) {
      const Scores s = scorings[sp].scores(runs[st][sp]);
      row.per_space.push_back(s.methodology);
      row.per_space_failure_aware.push_back(s.failure_aware);
      row.per_space_error.push_back(sampling_error(scorings[sp], runs[st][sp]));
      row.runs.push_back(options.repeats);
    }
    finish(std::move(row));
  }
  // Other tools' runs, grouped by strategy in the order first seen.
  std::vector<std::string> names;
  for (const auto& e : external) {
    if (std::find(table.spaces.begin(), table.spaces.end(), e.space) == table.spaces.end())
      throw InputError(fmt::format("runs of '{}' name space '{}', which is not among --spaces", e.strategy, e.space));
    if (std::find(names.begin(), names.end(), e.strategy) == names.end()) names.push_back(e.strategy);
  }
  for (const auto& name : names) {
    ScoreRow row{name, "trace", std::vector<double>(nsp, std::nan("")), std::vector<std::size_t>(nsp, 0), 0.0,
                 std::vector<double>(nsp, std::nan("")), 0.0, std::vector<double>(nsp, std::nan("")), 0.0};
    for (std::size_t sp = 0; sp < nsp; ++sp) {
      std::vector<std::vector<TraceEntry>> pooled;
      for (const auto& e : external)
        if (e.strategy == name && e.space == table.spaces[sp]) pooled.insert(pooled.end(), e.runs.begin(), e.runs.end());
      if (pooled.empty()) continue;
      const Scores s = scorings[sp].scores(pooled);
      row.per_space[sp] = s.methodology;
      row.per_space_failure_aware[sp] = s.failure_aware;
      row.per_space_error[sp] = sampling_error(scorings[sp], pooled);
      row.runs[sp] = pooled.size();
    }
    finish(std::move(row));
  }
  std::stable_sort(table.rows.begin(), table.rows.end(), [](const ScoreRow& a, const ScoreRow& b) {
    const double x = std::isnan(a.overall) ? -INFINITY : a.overall, y = std::isnan(b.overall) ? -INFINITY : b.overall;
    return x > y;
  });
  return table;
}

std::string format_score_table(const ScoreTable& table) {
  std::size_t name_width = 8;
  for (const auto& r : table.rows) name_width = std::max(name_width, r.strategy.size());
  auto cell = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.3f}", v); };
  auto block = [&](bool failure_aware) {
    std::string out = fmt::format("{:<{}}", "strategy", name_width);
    for (const auto& s : table.spaces) out += fmt::format("  {:>{}}", s, std::max<std::size_t>(s.size(), 7));
    out += failure_aware ? "  overall\n" : "  overall      ±\n";
    for (const auto& r : table.rows) {
      const auto& per = failure_aware ? r.per_space_failure_aware : r.per_space;
      out += fmt::format("{:<{}}", r.strategy, name_width);
      for (std::size_t i = 0; i < table.spaces.size(); ++i)
        out += fmt::format("  {:>{}}", cell(per[i]), std::max<std::size_t>(table.spaces[i].size(), 7));
      out += fmt::format("  {:>7}", cell(failure_aware ? r.overall_failure_aware : r.overall));
      out += failure_aware ? "\n" : fmt::format("  {:>5}\n", cell(r.overall_error));
    }
    return out;
  };
  std::string out = fmt::format("{} evaluator{} at once\n", table.workers, table.workers == 1 ? "" : "s");
  out += block(false);
  out += "\nagainst the failure-aware random baseline (random search over every recorded configuration, "
         "failures included):\n";
  out += block(true);
  std::vector<std::string> in_evaluations;
  for (std::size_t i = 0; i < table.spaces.size(); ++i)
    if (i < table.units.size() && table.units[i] == CostUnit::Evaluations) in_evaluations.push_back(table.spaces[i]);
  if (!in_evaluations.empty())
    out += fmt::format("scored in evaluations (no recorded costs: every evaluation costs 1, the window and time "
                       "budget are evaluation counts): {}\n",
                       fmt::join(in_evaluations, ", "));
  return out;
}

}  // namespace cutune::search
