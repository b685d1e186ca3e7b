#include "cutune/runner/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <numeric>
#include <cmath>
#include <fstream>
#include <future>
#include <memory>
#include <limits>
#include <deque>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cutune/cuda/device.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/measure/finalists.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/search/objective.hpp"
#include "cutune/search/session.hpp"
#include "cutune/search/strategy.hpp"
#include "cutune/worker/gpu_stage.hpp"

namespace cutune::runner {

std::string content_hash(const std::string& data) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::string config_json(const Space& space, const Config& config) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : space.assignments(config)) {
    switch (v.kind()) {
      case Value::Kind::Bool: j[name] = v.as_bool(); break;
      case Value::Kind::Int: j[name] = v.as_int(); break;
      case Value::Kind::Float: j[name] = v.as_float(); break;
      default: j[name] = v.str(); break;
    }
  }
  return j.dump();
}

namespace {

/// Configurations in the compile pool at most for a strategy that does not learn: bounded
/// memory (cubins of tens of kilobytes each: some megabytes).
constexpr std::size_t kBlindLookahead = 512;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The figure a configuration is ranked by: its median (time), its energy per launch
/// (energy, from the stored statistics) or a metric's value; none for a failure, a missing
/// energy reading or a metric that could not be evaluated (or is not finite).
std::optional<double> objective_value(const db::Measurement& m, const search::Objective& objective) {
  if (m.status != Status::Ok) return std::nullopt;
  if (objective.name == "time") return m.median_ms;
  if (objective.name == "energy") {
    const auto stats = nlohmann::json::parse(m.stats_json, nullptr, /*allow_exceptions=*/false);
    if (!stats.is_object() || !stats.contains("energy_mj_per_launch")) return std::nullopt;
    return stats["energy_mj_per_launch"].get<double>();
  }
  for (const auto& [name, v] : m.metrics)
    if (name == objective.name) return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  return std::nullopt;
}

/// Throws cuda::NoDriver without a GPU, InputError for an ordinal that is not there.
void require_device(int device) {
  std::string why;
  const int count = cuda::device_count(&why);
  if (count == 0) throw cuda::NoDriver(why);
  if (device < 0 || device >= count)
    throw InputError(fmt::format("--device {}: there are {} GPU(s) (0..{})", device, count, count - 1));
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
double seconds_since(std::chrono::steady_clock::time_point t) { return ms_since(t) / 1e3; }

search::Observation observation_of(const db::Measurement& m, const search::Objective& objective) {
  return search::observation_for(objective_value(m, objective), objective);
}

}  // namespace

std::string kernel_source_hash(const KernelProblem& problem) {
  return content_hash(problem.source() + '\0' + read_file(problem.json_file()));
}

std::vector<Config> parse_configs(const Space& space, const std::vector<std::string>& texts,
                                  const std::string& option) {
  std::vector<Config> out;
  for (const auto& text : texts) {
    Config c;
    try {
      c = space.parse_assignments(text);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", option, text, e.what()));
    }
    if (std::string r = space.violated_restriction(c); !r.empty())
      throw InputError(fmt::format("{} {}: violates \"{}\"", option, text, r));
    out.push_back(c);
  }
  return out;
}

Summary metric_cost_summary(Summary time_ms, const std::function<double(double)>& metric_at_ms,
                                     bool higher_is_better) {
  const double sign = higher_is_better ? -1.0 : 1.0;
  const double at_median = sign * metric_at_ms(time_ms.median), lo = sign * metric_at_ms(time_ms.ci_low),
               hi = sign * metric_at_ms(time_ms.ci_high);
  if (!std::isfinite(at_median) || !std::isfinite(lo) || !std::isfinite(hi)) {
    time_ms.median = time_ms.ci_low = time_ms.ci_high = std::numeric_limits<double>::infinity();
  } else {
    time_ms.median = at_median;
    time_ms.ci_low = std::min(lo, hi);
    time_ms.ci_high = std::max(lo, hi);
  }
  return time_ms;
}

std::string TuneReport::finalists_json() const {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& f : finalists) {
    nlohmann::ordered_json j;
    j["config_key"] = f.config_key;
    j["config"] = nlohmann::ordered_json::parse(f.config_json);
    j["is_default"] = f.is_default;
    j["tied_with_winner"] = f.tied;
    j["screening_median_ms"] = f.screening_ms;
    j["median_ms"] = f.stats.summary.median;
    if (std::isfinite(f.objective_value)) j["objective_value"] = f.objective_value;
    j["stats"] = nlohmann::ordered_json::parse(db::stats_json(f.stats));
    j["samples_ms"] = f.stats.set.samples_ms;
    arr.push_back(std::move(j));
  }
  return arr.dump();
}

TuneReport tune(const KernelProblem& problem, const TuneOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  const Space& space = problem.space();
  ProblemInstance instance = problem.instantiate(options.problem);
  auto log = [&](const std::string& line) {
    if (options.log) *options.log << line << '\n' << std::flush;
  };
  std::string objective_warning;
  const search::Objective objective =
      search::resolve_objective(problem, options.objective, options.objective_higher_is_better, &objective_warning);
  if (!objective_warning.empty()) log("warning: " + objective_warning);
  // The metrics (Kernel Tuner's process_metrics) of one measured configuration at its
  // median. One that fails for this configuration (a division by a parameter that is 0) is
  // left out, so the configuration has no value for it and ranks after every one that has.
  auto metrics_of = [&](const Config& c, double median_ms) {
    std::vector<std::pair<std::string, double>> out;
    if (problem.metrics().empty()) return out;
    try {
      out = problem.evaluate_metrics(instance, median_ms * 1e-3, &c);
    } catch (const InputError& e) {
      log(fmt::format("{}: {}", space.key(c), e.what()));
    }
    return out;
  };
  // A metric that cannot be evaluated at all (a typo) is the file's error, before anything runs.
  if (const Config d = space.default_config(); !problem.metrics().empty()) (void)problem.evaluate_metrics(instance, 1e-3, &d);
  const bool energy = objective.name == "energy";
  worker::MeasureOptions measure_options = options.measure;
  if (energy) measure_options.energy_every_config = true;  // every configuration is ranked by it
  // The GPU worker starts first: its set-up (driver, context, arguments, reference outputs)
  // overlaps this process's own driver start (0.1-0.2 s on an H100), the store and the first
  // compiles, instead of adding up. Without a GPU it ends as soon as it starts.
  GpuWorker gpu(problem, options.problem, options.device, measure_options, options.data_seed);
  require_device(options.device);

  TuneReport report;
  report.device = cuda::identify(options.device);
  report.device.nvrtc_version = jit::nvrtc_version();
  report.kernel = problem.name();
  report.problem_key = instance.key();
  report.date = db::utc_now_iso();

  Config default_config = space.default_config();
  if (std::string r = space.violated_restriction(default_config); !r.empty())
    throw InputError(fmt::format("{}: the default configuration {} violates \"{}\"",
                                 problem.json_file().string(), space.key(default_config), r));
  report.default_key = space.key(default_config);
  const std::vector<Config> first = parse_configs(space, options.first, "--try");  // before any write

  db::kt::KtCacheWriter kt_cache;  // before the store: a disagreeing file writes nothing
  if (!options.kt_cache.empty())
    kt_cache.open(options.kt_cache,
                  db::kt::cache_header(problem.kernel_name(), space, instance.problem_size, report.device,
                                       objective.name));
  if (options.db.has_parent_path()) std::filesystem::create_directories(options.db.parent_path());
  db::Store store = db::Store::open(options.db, /*create=*/true);
  const auto device_id = store.upsert_device(report.device);
  const auto kernel_id = store.upsert_kernel(problem.name(), kernel_source_hash(problem));
  const auto problem_id = store.upsert_problem(kernel_id, report.problem_key, instance.json());
  report.run_id = store.begin_run(kernel_id, problem_id, device_id, CUTUNE_TOOL_VERSION,
                                  options.strategy, options.seed, options.command);

  std::map<std::string, db::Measurement> stored;
  for (auto& m : store.measurements(kernel_id, problem_id, device_id)) {
    // Stored before the problem had its metrics (or by an older cutune): computed now, here only.
    if (m.status == Status::Ok && m.metrics.empty() && !problem.metrics().empty())
      if (Config c; [&] { try { c = space.parse_key(m.config_key); return true; } catch (const InputError&) { return false; } }())
        m.metrics = metrics_of(c, m.median_ms);
    stored[m.config_key] = m;
  }

  search::StrategyOptions so{options.strategy, options.seed, options.budget};
  auto strategy = search::make_strategy(space, so);
  CompilePoolOptions compile_options = options.compile;
  if (compile_options.workers == 0) compile_options.workers = tuning_compile_workers();
  CompilePool compiler(problem, report.device.arch(), compile_options);
  report.compile_workers = compiler.workers();
  report.objective = objective.name;
  report.objective_higher_is_better = objective.higher_is_better;
  double screening_wall_ms = 0.0;
  std::uint64_t screened = 0;

  double best_ms = INFINITY;
  std::string best_key;
  std::uint64_t done = 0;
  const std::uint64_t total = options.budget ? std::min<std::uint64_t>(*options.budget, space.count_valid())
                                             : space.count_valid();
  // The session asks the strategy, answers revisits and stored measurements (resume) from
  // results, and keeps the budgets.
  search::SessionOptions session_options;
  session_options.max_evaluations = options.budget;
  session_options.max_time_s = options.time_budget_s;
  search::Session session(*strategy, session_options, &space);
  auto cost_s = [](const db::Measurement& m) {
    return (m.compile_ms + m.verify_ms + std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0)) / 1e3;
  };
  for (const auto& [key, m] : stored) {
    // A stored key outside the declared space cannot be proposed: nothing to resume.
    if (Config c; [&] { try { c = space.parse_key(key); return true; } catch (const InputError&) { return false; } }())
      session.add_stored(c, observation_of(m, objective), cost_s(m));
  }
  std::optional<double> best_objective;  // a metric objective's best so far, for the progress line
  // On a GPU the time budget is wall-clock time since the tuning began, as Kernel Tuner's
  // time_limit: each fresh result is told what the wall clock moved since the one before.
  // The sum of per-configuration costs (what --simulate replays) undercounts when compiles run
  // in parallel and cache hits report their original compile time: a 30 s budget stopped a
  // 4320-configuration space after 2.6 s (BAT's TRIAD on an H100).
  auto last_told = t_start;
  auto wall_cost_s = [&] {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_told).count();
    last_told = now;
    return s;
  };
  auto record = [&](const Config& c, const db::Measurement& m, bool fresh) {
    if (fresh) session.tell(c, observation_of(m, objective), wall_cost_s());
    const auto v = objective.is_metric() ? objective_value(m, objective) : std::nullopt;
    if (v && (!best_objective || objective.better(*v, *best_objective))) best_objective = v;
    if (kt_cache.is_open()) kt_cache.append(db::kt::entry_of_measurement(m));
    ++done;
    if (m.status != Status::Ok) ++report.configs_failed;
    if (m.status == Status::Ok && m.median_ms < best_ms) {
      best_ms = m.median_ms;
      best_key = m.config_key;
    }
    if (m.status == Status::Ok) report.timed_ms_total += std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0);
    if (!fresh) return;
    ++report.configs_tried;
    TuneOptions::Progress p;
    p.done = done;
    p.total = std::max(total, done);
    p.failed = report.configs_failed;
    p.best_ms = std::isfinite(best_ms) ? best_ms : 0.0;
    p.best_key = best_key;
    p.elapsed_s = seconds_since(t_start);
    p.line = fmt::format("[{}] {} {}{} {}", done, m.config_key,
                         m.status == Status::Ok ? fmt::format("{:.4f} ms", m.median_ms)
                                                    : fmt::format("{}: {}", status_name(m.status), m.error),
                         v ? fmt::format(" {:.6g} {}", *v, objective.name) : "",
                         best_objective ? fmt::format("(best {:.6g} {})", *best_objective, objective.name)
                         : std::isfinite(best_ms) ? fmt::format("(best {:.4f} ms)", best_ms)
                                                  : "");
    if (options.progress) options.progress(p);
    else log(p.line);
  };

  // The default configuration goes first: it is the baseline of the reported speedup and
  // (without a CPU reference) the definition of a correct answer. The budget counts unique
  // configurations, the default included, resumed ones too.
  session.add_first(default_config);
  for (const Config& c : first) session.add_first(c);
  // As many as the pool may hold: its workers compile ahead while the GPU worker sets up.
  // A strategy that learns from results gets 4 per worker (the pool stays busy, proposals
  // stay informed); one that does not, kBlindLookahead: the start-up's half second then
  // compiles a few hundred configurations ahead, and the GPU waited for compiles 0.1 ms
  // per configuration less on an H100 (results/nvidia-h100-80gb-hbm3/throughput.json).
  const std::size_t lookahead = strategy->learns() ? 4 * compiler.workers() : kBlindLookahead;
  auto feed = [&] {
    while (!session.done() && compiler.pending() < lookahead) {
      const search::Session::Batch batch = session.ask(8);
      for (std::size_t i : batch.stored) {
        ++report.configs_resumed;
        const Config& c = session.trace()[i].config;
        record(c, stored.at(space.key(c)), false);
      }
      for (const auto& c : batch.evaluate) compiler.submit(c);
      if (batch.evaluate.empty() && batch.stored.empty()) break;  // wait for those in flight
    }
  };

  feed();
  gpu.wait_ready();
  report.startup_s = seconds_since(t_start);
  report.gpu_setup_ms = gpu.setup_ms_json();
  std::vector<double> compile_times;
  gpu.set_timeout(std::chrono::milliseconds(static_cast<std::int64_t>(options.first_timeout_s * 1e3)));
  bool timeout_set = false;
  report.verification = gpu.verification_source();
  report.l2_method = to_string(gpu.l2_method());
  log(fmt::format("tuning {} ({}) on {} [{}], verification against the {}, L2 {}", problem.name(),
                  report.problem_key, report.device.name, report.device.arch(), report.verification,
                  report.l2_method));
  // Two evaluations in flight in the GPU worker: the oldest one's result is stored and told
  // to the strategy while the worker measures the next, and the one after that already
  // waits in its pipe, so that the GPU does not idle while answers and requests travel.
  // The price: the screening's best so far lags two configurations behind.
  struct InFlight {
    std::optional<CompiledConfig> compiled;
    db::Measurement m;
    std::chrono::steady_clock::time_point submitted;
    double eval_ms = 0.0;  ///< startable (submitted, or the one before answered) to answered
  };
  std::deque<InFlight> in_flight;  // oldest first
  std::uint64_t collected = 0;
  std::chrono::steady_clock::time_point last_answer{};
  // Takes the oldest evaluation in flight and its answer.
  auto collect = [&] {
    std::pair<InFlight, GpuEvaluation> out{std::move(in_flight.front()), GpuEvaluation{}};
    in_flight.pop_front();
    out.second = gpu.collect();
    // From when the worker could start it: its submission, or the answer before it.
    out.first.eval_ms = ms_since(std::max(out.first.submitted, last_answer));
    last_answer = std::chrono::steady_clock::now();
    return out;
  };
  auto store_and_record = [&](const Config& c, db::Measurement& m) {
    m.finished_at = db::utc_now_iso();
    const auto t_store = std::chrono::steady_clock::now();
    store.add_measurement(report.run_id, kernel_id, problem_id, device_id, m);
    report.store_ms += ms_since(t_store);
    stored[m.config_key] = m;
    record(c, m, true);
  };
  auto take_result = [&](InFlight& f, GpuEvaluation ev) {
    const double eval_ms = f.eval_ms;
    report.evaluate_ms += eval_ms;
    report.verify_ms += ev.verify_ms;
    report.worker_load_ms += ev.load_ms;
    report.worker_stage_ms += ev.stage_ms;
    if (collected++ > 0) report.worker_idle_ms += ev.idle_before_ms;  // the first one's wait is start-up
    if (ev.stats) report.sampling_ms += ev.stats->set.wall_ms;
    if (!timeout_set && ev.status == Status::Ok) {
      // The hang timeout, from the first configuration that ran (normally the default).
      const double wall_s = eval_ms / 1e3;
      gpu.set_timeout(std::chrono::milliseconds(
          static_cast<std::int64_t>(1e3 * std::max(options.timeout_floor_s, 50.0 * wall_s))));
      timeout_set = true;
    }
    f.m.status = ev.status;
    f.m.error = ev.error;
    f.m.samples_ms = ev.samples_ms();
    f.m.median_ms = ev.median_ms();
    f.m.verify_ms = ev.verify_ms;
    if (f.m.status == Status::Ok) f.m.metrics = metrics_of(f.compiled->config, f.m.median_ms);
    if (ev.stats) {
      f.m.stats_json = db::stats_json(*ev.stats);
      screening_wall_ms += ev.stats->set.wall_ms;
      ++screened;
    }
  };
  auto drain = [&] {  // the oldest evaluation in flight, collected, stored and recorded
    if (in_flight.empty()) return;
    auto [f, ev] = collect();
    take_result(f, std::move(ev));
    store_and_record(f.compiled->config, f.m);
  };
  auto out_of_time = [&] { return options.time_budget_s && seconds_since(t_start) >= *options.time_budget_s; };
  while (true) {
    if (out_of_time()) {
      // What is queued or compiling is dropped, not evaluated: with brute force 512
      // configurations wait ahead, and one convolution compile took 16 s (BAT's on an H100),
      // so finishing them overran a 30 s budget by 45 s. The GPU's two in flight finish.
      while (!in_flight.empty()) drain();
      compiler.drop_pending();
      break;
    }
    feed();
    const auto t_wait = std::chrono::steady_clock::now();
    auto compiled = compiler.next();
    report.compile_wait_ms += ms_since(t_wait);
    if (!compiled) {
      if (!in_flight.empty()) {
        drain();  // its result may let the strategy ask for more
        continue;
      }
      if (session.done() || session.in_flight() == 0) break;
      continue;
    }
    InFlight next;
    next.m.config_key = space.key(compiled->config);
    next.m.config_json = config_json(space, compiled->config);
    next.m.started_at = db::utc_now_iso();
    next.m.compile_ms = compiled->result.compile_ms;
    if (!compiled->result.from_cache && !compiled->shared) compile_times.push_back(next.m.compile_ms);
    if (!compiled->result.ok) {
      next.m.status = Status::Compile;
      next.m.error = compiled->result.error;
      store_and_record(compiled->config, next.m);
      continue;
    }
    std::optional<std::pair<InFlight, GpuEvaluation>> previous;
    if (in_flight.size() >= GpuWorker::kMaxInFlight) previous = collect();
    next.submitted = std::chrono::steady_clock::now();
    gpu.submit(compiled->config, compiled->result.cubin, compiled->result.lowered_names,
               // The screening stops a configuration early once it is surely slower than the
               // best so far: right only when time is what ranks. A slower configuration may
               // use less energy, and a metric may win while slower (GFLOP/s of a variant
               // that does more useful work per launch, or any metric not monotone in time),
               // so with energy or a metric every configuration is screened in full.
               std::isfinite(best_ms) && objective.name == "time" ? std::optional<double>(best_ms)
                                                                  : std::nullopt);
    next.compiled = std::move(compiled);
    in_flight.push_back(std::move(next));
    if (previous) {
      auto& [f, ev] = *previous;
      take_result(f, std::move(ev));
      store_and_record(f.compiled->config, f.m);
    }
  }
  const auto t_search_end = std::chrono::steady_clock::now();
  report.search_ms = std::chrono::duration<double, std::milli>(t_search_end - t_start).count() - report.startup_s * 1e3;
  // Screening winner over everything stored for this kernel, problem and device (resumed
  // runs too); the thorough stage below may overturn it.
  std::map<std::string, std::uint64_t> by_status;
  // Only those with a value (energy: a reading; a metric: one that evaluated), best first.
  std::vector<std::pair<double, const db::Measurement*>> by_objective;
  std::size_t differs_from_default = 0;
  for (const auto& [key, m] : stored) {
    if (m.status != Status::Ok) {
      ++by_status[status_name(m.status)];
      differs_from_default += m.error.starts_with(kDiffersFromDefault);
      continue;
    }
    if (auto v = objective_value(m, objective)) by_objective.emplace_back(*v, &m);
  }
  // Most of a space rejected for differing from the default: outputs that differ by design
  // (a stencil's halo, scratch) look just like wrong ones; the user must choose, so say how.
  if (differs_from_default >= 2 && 2 * differs_from_default > stored.size())
    log(fmt::format("{} of {} configurations fail verification against the default configuration's output; if "
                    "outputs may differ by design, verify against a reference or not at all: --verify none, "
                    "--verify OUTPUT=none or cutune.Verification in the problem file", differs_from_default,
                    stored.size()));
  std::stable_sort(by_objective.begin(), by_objective.end(),
                   [&](const auto& a, const auto& b) { return objective.better(a.first, b.first); });
  std::vector<const db::Measurement*> ranked;
  for (const auto& [v, m] : by_objective) ranked.push_back(m);
  report.failures_by_status.assign(by_status.begin(), by_status.end());
  report.space_valid = space.count_valid();
  if (screened) report.screening_ms_per_config = screening_wall_ms / static_cast<double>(screened);
  if (auto it = stored.find(report.default_key); it != stored.end() && it->second.status == Status::Ok)
    report.default_ms = it->second.median_ms;
  if (!ranked.empty()) {
    const db::Measurement* best = ranked.front();
    report.winner_key = best->config_key;
    report.winner_json = best->config_json;
    report.winner_ms = best->median_ms;
    report.winner_objective_value = by_objective.front().first;
  }
  if (!ranked.empty() && options.measure.finalists > 0) {
    // Declaring a winner: the top k and the default, re-measured thoroughly,
    // interleaved, back to back; declared only if its interval separates from the rest.
    std::vector<const db::Measurement*> chosen(
        ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(std::min(ranked.size(), options.measure.finalists)));
    auto is_default = [&](const db::Measurement* m) { return m->config_key == report.default_key; };
    if (report.default_ms > 0 && std::none_of(chosen.begin(), chosen.end(), is_default))
      chosen.push_back(&stored.at(report.default_key));
    std::vector<worker::Candidate> candidates;
    for (const db::Measurement* m : chosen) {
      compiler.submit(space.parse_key(m->config_key));  // from the cubin cache when it has them
    }
    while (auto compiled = compiler.next()) {
      if (!compiled->result.ok)
        throw std::runtime_error(fmt::format("finalist {} no longer compiles: {}", space.key(compiled->config),
                                             compiled->result.error));
      candidates.push_back(
          {compiled->config, std::move(compiled->result.cubin), std::move(compiled->result.lowered_names)});
    }
    log(fmt::format("re-measuring {} finalists thoroughly, interleaved", candidates.size()));
    auto evs = gpu.remeasure(candidates);
    std::vector<Summary> summaries;
    std::optional<std::size_t> default_index;
    bool all_ok = true;
    double thorough_wall_ms = 0.0;
    for (std::size_t i = 0; i < evs.size(); ++i) {
      if (!evs[i].stats) {
        all_ok = false;
        log(fmt::format("finalist {} failed on re-measurement: {}", chosen[i]->config_key, evs[i].error));
        break;
      }
      summaries.push_back(evs[i].stats->summary);
      thorough_wall_ms += evs[i].stats->set.wall_ms;
      if (is_default(chosen[i])) default_index = i;
    }
    // A metric's value for each finalist at its thorough median, and the metric's interval
    // from the median's (the metric is evaluated at both ends: it may rise or fall with
    // time). The verdict is then declared over the metric, as a cost (negated when higher
    // is better), so the interval test that separates times separates the metric too.
    std::vector<double> finalist_values(summaries.size(), std::numeric_limits<double>::quiet_NaN());
    if (all_ok && objective.is_metric()) {
      auto metric_at = [&](std::size_t i, double ms) {
        for (const auto& [name, v] : metrics_of(space.parse_key(chosen[i]->config_key), ms))
          if (name == objective.name && std::isfinite(v)) return v;
        return std::numeric_limits<double>::quiet_NaN();
      };
      for (std::size_t i = 0; i < summaries.size(); ++i) {
        finalist_values[i] = metric_at(i, summaries[i].median);
        summaries[i] = metric_cost_summary(
            summaries[i], [&](double ms) { return metric_at(i, ms); }, objective.higher_is_better);
      }
    }
    if (all_ok) {
      const measure::Verdict v = measure::declare_winner(summaries, default_index);
      report.verdict = v.separated ? "separated" : "tie";
      report.thorough_ms_per_config = thorough_wall_ms / static_cast<double>(evs.size());
      for (std::size_t i : v.ranking) {
        TuneReport::Finalist f;
        f.config_key = chosen[i]->config_key;
        f.config_json = chosen[i]->config_json;
        f.is_default = is_default(chosen[i]);
        f.tied = std::find(v.tied.begin(), v.tied.end(), i) != v.tied.end();
        f.screening_ms = chosen[i]->median_ms;
        f.stats = *evs[i].stats;
        f.objective_value = objective.is_metric() ? finalist_values[i]
                            : energy ? f.stats.energy_mj_per_launch.value_or(std::numeric_limits<double>::quiet_NaN())
                                     : f.stats.summary.median;
        report.finalists.push_back(std::move(f));
      }
      if (energy) {
        // Ranked by energy per launch instead; one window per finalist gives no interval,
        // so nothing is declared (verdict "screening").
        auto joules = [](const TuneReport::Finalist& f) {
          return f.stats.energy_mj_per_launch.value_or(std::numeric_limits<double>::infinity());
        };
        std::stable_sort(report.finalists.begin(), report.finalists.end(),
                         [&](const auto& a, const auto& b) { return joules(a) < joules(b); });
        report.verdict = "screening";
      }
      const auto& w = report.finalists.front();
      report.winner_key = w.config_key;
      report.winner_json = w.config_json;
      report.winner_ms = w.stats.summary.median;
      report.winner_objective_value =
          energy               ? w.stats.energy_mj_per_launch.value_or(report.winner_objective_value)
          : objective.is_metric() ? w.objective_value
                                  : report.winner_ms;
      if (default_index) report.default_ms = evs[*default_index].stats->summary.median;
      for (const auto& f : report.finalists)
        log(fmt::format("  {} {:.4f} ms [{:.4f}, {:.4f}] n={} ({}){}{}{}", f.config_key, f.stats.summary.median,
                        f.stats.summary.ci_low, f.stats.summary.ci_high, f.stats.summary.count,
                        to_string(f.stats.set.reason),
                        objective.is_metric() ? fmt::format(" {:.6g} {}", f.objective_value, objective.name) : "",
                        f.is_default ? " default" : "",
                        f.tied && report.verdict == "tie" ? " tied" : ""));
    }
  }
  if (!report.winner_key.empty()) {
    report.winner_metrics = metrics_of(space.parse_key(report.winner_key), report.winner_ms);
    store.set_winner(kernel_id, problem_id, device_id, report.run_id,
                     {report.winner_key, report.winner_json, report.winner_ms, report.default_ms,
                      report.objective, report.winner_objective_value, report.verdict,
                      report.finalists_json(), report.objective_higher_is_better});
  }
  store.end_run(report.run_id);
  kt_cache.close();
  {
    // The copy ceiling, measured in the same run: as many bytes as the problem's arguments
    // (at least 256 MiB so that the L2 does not serve it).
    std::size_t bytes = std::max<std::size_t>(gpu.total_argument_bytes() / 2, std::size_t{256} << 20);
    report.copy_gbps = gpu.copy_bandwidth_gbps(bytes);
  }
  compiler.shutdown();
  // Everything is stored: the worker releases its context on its own time (its exit
  // took part of the 0.4 s between the report's wall time and the process's).
  report.worker_restarts = gpu.restarts();
  report.timeout_s = static_cast<double>(gpu.timeout().count()) / 1e3;
  gpu.release();
  report.after_search_ms = ms_since(t_search_end);
  if (!compile_times.empty()) {
    std::sort(compile_times.begin(), compile_times.end());
    report.compile_ms_median = compile_times[compile_times.size() / 2];
  }
  report.compile = compiler.stats();
  report.wall_s = seconds_since(t_start);
  return report;
}

MeasureSession measure_configs(const KernelProblem& problem, const std::string& problem_text,
                               const std::vector<std::string>& config_texts, int device,
                               const worker::MeasureOptions& options, double loop_s, std::uint64_t data_seed) {
  const Space& space = problem.space();
  ProblemInstance instance = problem.instantiate(problem_text);
  const std::vector<Config> configs =
      parse_configs(space, config_texts.empty() ? std::vector<std::string>{""} : config_texts, "--config");
  require_device(device);
  MeasureSession session;
  session.device = cuda::identify(device);
  session.device.nvrtc_version = jit::nvrtc_version();
  session.problem_key = instance.key();
  worker::GpuStage gpu(problem, instance, device, options, data_seed);
  session.l2_method = to_string(gpu.l2_method());
  session.verification = gpu.verification_source();
  std::vector<worker::Candidate> candidates;
  std::vector<std::size_t> index;  // session.configs entry of each candidate
  for (const Config& c : configs) {
    MeasuredConfig mc;
    mc.config_key = space.key(c);
    mc.config_json = config_json(space, c);
    jit::CompileResult compiled = jit::compile(compile_request(problem, c, session.device.arch()));
    mc.compile_ms = compiled.compile_ms;
    if (!compiled.ok) {
      mc.evaluation.status = Status::Compile;
      mc.evaluation.error = compiled.error;
    } else {
      // One configuration: verified and measured thoroughly in one go. Several: verified
      // (and screened) one by one, then measured thoroughly together, interleaved.
      mc.evaluation = gpu.evaluate(c, compiled.cubin, compiled.lowered_names, std::nullopt, configs.size() == 1);
      if (mc.evaluation.context_lost) throw std::runtime_error(mc.config_key + ": " + mc.evaluation.error);
      if (mc.evaluation.status == Status::Ok) {
        if (loop_s > 0) {
          mc.loop_launches = static_cast<std::size_t>(
              std::clamp(loop_s * 1e3 / std::max(mc.evaluation.median_ms(), 1e-4), 10.0, 1e6));
          mc.loop_ms = gpu.back_to_back_ms(c, compiled.cubin, compiled.lowered_names, mc.loop_launches);
        }
        index.push_back(session.configs.size());
        candidates.push_back({c, std::move(compiled.cubin), std::move(compiled.lowered_names)});
      }
    }
    session.configs.push_back(std::move(mc));
  }
  if (configs.size() > 1 && !candidates.empty()) {
    auto evs = gpu.remeasure(candidates);
    for (std::size_t k = 0; k < evs.size(); ++k) {
      evs[k].verify_ms = session.configs[index[k]].evaluation.verify_ms;
      session.configs[index[k]].evaluation = std::move(evs[k]);
    }
  }
  session.timer_floor_ms = gpu.timer_floor_ms();
  return session;
}

}  // namespace cutune::runner
