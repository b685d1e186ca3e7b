#include "report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "cutune/model/errors.hpp"

namespace cutune::report {

using json = nlohmann::ordered_json;

const char* clock_name(Clock c) {
  switch (c) {
    case Clock::Simulated: return "simulated";
    case Clock::Timestamps: return "timestamps";
    case Clock::SummedCost: return "summed cost";
  }
  return "?";
}

std::string RunView::label() const {
  if (id == 0) return "no run";
  return fmt::format("run {} ({}, seed {})", id, strategy, seed);
}

std::optional<double> parse_utc_s(const std::string& iso) {
  static const std::regex re(R"((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z)");
  std::smatch m;
  if (!std::regex_match(iso, m, re)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(m[1].str()) - 1900;
  tm.tm_mon = std::stoi(m[2].str()) - 1;
  tm.tm_mday = std::stoi(m[3].str());
  tm.tm_hour = std::stoi(m[4].str());
  tm.tm_min = std::stoi(m[5].str());
  tm.tm_sec = std::stoi(m[6].str());
  double frac = 0;
  if (m[7].matched) frac = std::stod("0." + m[7].str());
  return static_cast<double>(timegm(&tm)) + frac;
}

namespace {

double number_or(const json& obj, const char* field, double fallback = 0.0) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(field);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

std::optional<double> number_in(const json& obj, const char* field) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(field);
  if (it != obj.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

// A stored row as the charts need it: its statistics' JSON is read here, once.
Evaluation evaluation_of(const db::Measurement& m) {
  Evaluation e;
  e.key = m.config_key;
  e.status = m.status;
  e.median_ms = m.median_ms;
  e.samples = m.samples_ms.size();
  e.run_id = m.run_id;
  e.energy_mj = m.energy_mj_per_launch;
  const json config = json::parse(m.config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_object())
    for (auto it = config.begin(); it != config.end(); ++it)
      e.parameters.emplace_back(it.key(), it->is_string() ? it->get<std::string>() : it->dump());
  const json stats = json::parse(m.stats_json, nullptr, /*allow_exceptions=*/false);
  e.ci_low_ms = number_in(stats, "ci_low_ms");
  e.ci_high_ms = number_in(stats, "ci_high_ms");
  if (const auto sim = number_in(stats, "simulated_cost_s")) {
    // The recording's parts where the simulation stored them; what they leave of the cost
    // (all of it for a DB made before they were stored) is the recorded cost, not split.
    e.simulated = true;
    e.compile_s = m.compile_ms / 1e3;
    e.verify_s = m.verify_ms / 1e3;
    e.sampling_s = number_or(stats, "simulated_benchmark_s");
    const double rest = *sim - e.compile_s - e.verify_s - e.sampling_s;
    e.recorded_s = rest > 1e-9 * *sim ? rest : 0.0;
    return e;
  }
  e.compile_s = m.compile_ms / 1e3;
  e.verify_s = m.verify_ms / 1e3;
  e.load_s = number_or(stats, "load_ms") / 1e3;
  // The timed samples: the sampling's wall time (cutune), else Kernel Tuner's
  // benchmark_time (imports), else the samples themselves.
  if (const auto wall = number_in(stats, "measure_ms")) e.sampling_s = *wall / 1e3;
  else if (const auto kt = stats.is_object() ? stats.find("kt") : stats.end(); kt != stats.end() && kt->is_object()) {
    e.sampling_s = number_or(*kt, "benchmark_time") / 1e3;
    e.overhead_s = (number_or(*kt, "framework_time") + number_or(*kt, "strategy_time")) / 1e3;
  }
  if (e.sampling_s == 0)
    for (double s : m.samples_ms)
      if (std::isfinite(s)) e.sampling_s += s / 1e3;
  return e;
}

// The run's time axis (RunView::clock) and each evaluation's end on it.
void place_in_time(RunView& run, std::vector<Evaluation>& evals, const std::optional<db::RunInfo>& info,
                   const std::vector<std::optional<double>>& finished_s) {
  if (run.evaluations.empty()) return;
  const bool simulated = std::all_of(run.evaluations.begin(), run.evaluations.end(),
                                     [&](std::size_t i) { return evals[i].simulated; });
  bool stamps = !simulated && std::all_of(run.evaluations.begin(), run.evaluations.end(),
                                          [&](std::size_t i) { return finished_s[i].has_value(); });
  if (stamps) {
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t i : run.evaluations) lo = std::min(lo, *finished_s[i]), hi = std::max(hi, *finished_s[i]);
    // One evaluation has no span to check; several stored at one instant were not stamped
    // as they were made (an import without timestamps).
    stamps = run.evaluations.size() == 1 || hi > lo;
  }
  if (!stamps) {
    run.clock = simulated ? Clock::Simulated : Clock::SummedCost;
    double t = 0;
    for (std::size_t i : run.evaluations) evals[i].end_s = (t += evals[i].cost_s());
    run.wall_s = t;
    return;
  }
  run.clock = Clock::Timestamps;
  const Evaluation& first = evals[run.evaluations.front()];
  // The run's start, unless it started after its measurements were made (an import, whose
  // run is the import itself): then the first measurement's end less its cost.
  double origin = *finished_s[run.evaluations.front()] - first.cost_s();
  const auto started = info ? parse_utc_s(info->started_at) : std::nullopt;
  bool run_clock = false;
  if (started && *started <= *finished_s[run.evaluations.front()]) {
    origin = *started;
    run_clock = true;
  }
  double last = 0;
  for (std::size_t i : run.evaluations) last = std::max(last, evals[i].end_s = *finished_s[i] - origin);
  run.wall_s = last;
  if (run_clock) {
    if (const auto finished = parse_utc_s(info->finished_at)) run.wall_s = std::max(last, *finished - origin);
  }
}

}  // namespace

std::vector<TargetView> collect_targets(const db::Store& store, const ReportOptions& options) {
  std::optional<db::RunInfo> only_run;
  if (options.run) {
    only_run = store.run(*options.run);
    if (!only_run) throw InputError(fmt::format("--run {}: {} holds no such run", *options.run, store.path().string()));
  }
  db::WinnerFilter filter{options.kernel, options.gpu, options.problem, ""};
  std::vector<TargetView> out;
  for (const auto& t : store.measurement_targets(filter)) {
    if (only_run && (t.kernel_id != only_run->kernel_id || t.problem_id != only_run->problem_id ||
                     t.device_id != only_run->device_id))
      continue;
    TargetView v;
    v.kernel = t.kernel;
    v.problem = t.problem_key;
    v.gpu_model = t.gpu_model;
    if (const auto d = store.device(t.device_id)) v.device_name = d->name;
    std::vector<std::optional<double>> finished_s;
    for (const auto& m : store.measurements(t.kernel_id, t.problem_id, t.device_id)) {
      if (only_run && m.run_id != only_run->id) continue;
      v.evaluations.push_back(evaluation_of(m));
      finished_s.push_back(parse_utc_s(m.finished_at));
    }
    if (v.evaluations.empty()) continue;
    // Runs in id order; measurements stored without a run (run 0) first.
    std::map<std::int64_t, std::vector<std::size_t>> by_run;
    for (std::size_t i = 0; i < v.evaluations.size(); ++i) by_run[v.evaluations[i].run_id].push_back(i);
    for (auto& [id, indices] : by_run) {
      RunView r;
      r.id = id;
      r.evaluations = std::move(indices);
      const auto info = id ? store.run(id) : std::nullopt;
      if (info) {
        r.strategy = info->strategy;
        r.seed = info->seed;
        r.command = info->command;
        r.started_at = info->started_at;
        r.finished_at = info->finished_at;
        r.serial_compile = info->strategy == "import";
      }
      place_in_time(r, v.evaluations, info, finished_s);
      v.runs.push_back(std::move(r));
    }
    for (auto& w : store.winners({t.kernel, "", t.problem_key, "time"}))
      if (w.gpu_model == t.gpu_model) v.winner = std::move(w);
    out.push_back(std::move(v));
  }
  if (out.empty()) {
    std::vector<std::string> said;
    if (!options.kernel.empty()) said.push_back("--kernel " + options.kernel);
    if (!options.problem.empty()) said.push_back("--problem " + options.problem);
    if (!options.gpu.empty()) said.push_back("--gpu " + options.gpu);
    if (options.run) said.push_back(fmt::format("--run {}", *options.run));
    throw InputError(fmt::format("{}: no measurements{}", store.path().string(),
                                 said.empty() ? "" : fmt::format(" match {}", fmt::join(said, " "))));
  }
  return out;
}

std::optional<std::pair<std::string, double>> ModelMedians::best() const {
  std::optional<std::pair<std::string, double>> b;
  for (const auto& [key, ms] : ok)
    if (!b || ms < b->second || (ms == b->second && key < b->first)) b = {key, ms};
  return b;
}

std::optional<double> ModelMedians::median(const std::string& key) const {
  const auto it = ok.find(key);
  return it == ok.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::pair<double, double>> ModelMedians::interval(const std::string& key) const {
  const auto it = intervals.find(key);
  return it == intervals.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::string> ModelMedians::failure(const std::string& key) const {
  const auto it = failed.find(key);
  return it == failed.end() ? std::nullopt : std::optional(it->second);
}

std::vector<ModelMedians> medians_by_model(const db::Store& store, const std::string& kernel,
                                           const std::string& problem) {
  std::vector<ModelMedians> out;
  for (const auto& t : store.measurement_targets({kernel, "", problem, ""})) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ModelMedians& m) { return m.gpu_model == t.gpu_model; });
    if (it == out.end()) {
      out.push_back({t.gpu_model, {}, {}, {}});
      it = std::prev(out.end());
    }
    for (const auto& m : store.measurements(t.kernel_id, t.problem_id, t.device_id)) {
      if (it->median(m.config_key) || it->failure(m.config_key)) continue;  // another device of the model has it
      if (m.status == Status::Ok && m.median_ms > 0) {
        it->ok.emplace(m.config_key, m.median_ms);
        const Evaluation e = evaluation_of(m);
        if (e.ci_low_ms && e.ci_high_ms) it->intervals.emplace(m.config_key, std::pair{*e.ci_low_ms, *e.ci_high_ms});
      } else {
        it->failed.emplace(m.config_key, status_name(m.status));
      }
    }
  }
  return out;
}

}  // namespace cutune::report
