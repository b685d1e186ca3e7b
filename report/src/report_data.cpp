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

// A stored result as the charts need it.
Evaluation evaluation_of(const db::Measurement& m) {
  Evaluation e;
  e.key = m.config.key();
  e.status = m.status;
  e.median_ms = m.median_ms;
  e.samples = m.samples_ms.size();
  e.run_id = m.run_id;
  e.energy_mj = m.energy_mj_per_launch();
  // Each value as the DB's JSON writes it (strings bare).
  const json config = m.config.to_json();
  for (auto it = config.begin(); it != config.end(); ++it)
    e.parameters.emplace_back(it.key(), it->is_string() ? it->get<std::string>() : it->dump());
  if (const ResultStats* s = m.stats()) {
    e.ci_low_ms = s->summary.ci_low;
    e.ci_high_ms = s->summary.ci_high;
  } else if (const ImportedOrigin* i = m.imported()) {
    e.ci_low_ms = i->ci_low_ms;
    e.ci_high_ms = i->ci_high_ms;
  }
  e.compile_s = m.compile_ms / 1e3;
  e.verify_s = m.verify_ms / 1e3;
  if (const SimulatedOrigin* sim = m.simulated()) {
    // The recording's parts where the simulation stored them; what they leave of the cost
    // (all of it for a DB made before they were stored) is the recorded cost, not split.
    e.simulated = true;
    e.sampling_s = sim->benchmark_s.value_or(0.0);
    const double rest = sim->cost_s - e.compile_s - e.verify_s - e.sampling_s;
    e.recorded_s = rest > 1e-9 * sim->cost_s ? rest : 0.0;
    return e;
  }
  // The timed samples: the sampling's wall time (cutune), else Kernel Tuner's
  // benchmark_time (imports), else the samples themselves.
  if (const MeasuredOrigin* measured = m.measured()) {
    e.load_s = measured->load_ms.value_or(0.0) / 1e3;
    e.resources = measured->resources;
    if (measured->stats) e.sampling_s = measured->stats->measure_ms / 1e3;
  } else if (const ImportedOrigin* i = m.imported(); i && !i->file_fields.empty()) {
    const auto field = [&](const char* name) {
      const auto it = i->file_fields.find(name);
      return it != i->file_fields.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    e.sampling_s = field("benchmark_time") / 1e3;
    e.overhead_s = (field("framework_time") + field("strategy_time")) / 1e3;
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
      if (it->median(m.config.key()) || it->failure(m.config.key())) continue;  // another device of the model has it
      if (m.status == Status::Ok && m.median_ms > 0) {
        it->ok.emplace(m.config.key(), m.median_ms);
        const Evaluation e = evaluation_of(m);
        if (e.ci_low_ms && e.ci_high_ms) it->intervals.emplace(m.config.key(), std::pair{*e.ci_low_ms, *e.ci_high_ms});
      } else {
        it->failed.emplace(m.config.key(), status_name(m.status));
      }
    }
  }
  return out;
}

}  // namespace cutune::report
