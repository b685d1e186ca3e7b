#include "cutune/runner/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <utility>

#include "cutune/cuda/device.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/jit/compiler_choice.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/measure/finalists.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/kt_observables.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/runner/pipeline.hpp"
#include "cutune/search/lookahead.hpp"
#include "cutune/search/objective.hpp"
#include "cutune/search/pace.hpp"
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

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Throws cuda::NoDriver without a GPU, InputError for an ordinal that is not there.
void require_device(int device) {
  std::string why;
  const int count = cuda::device_count(&why);
  if (count == 0) throw cuda::NoDriver(why);
  if (device < 0 || device >= count)
    throw InputError(fmt::format("--device {}: there are {} GPU(s) (0..{})", device, count, count - 1));
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}
double seconds_since(Clock::time_point t) { return ms_since(t) / 1e3; }

search::Observation observation_of(const db::Measurement& m, const Objective& objective) {
  return search::observation_for(db::objective_value(m, objective), objective);
}

/// What evaluating a stored measurement cost: what a resumed session counts against a time
/// budget (the sum a replay's clock counts).
double cost_s(const db::Measurement& m) {
  return (m.compile_ms + m.verify_ms + std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0)) / 1e3;
}

/// One tuning, step by step (run()). Members hold what the steps share.
class Tuning {
 public:
  explicit Tuning(TuningSession& session)
      : session_(session),
        problem_(session.kernel_problem()),
        space_(session.space()),
        options_(session.options()),
        objective_(session.objective()) {}

  TuneReport run() {
    prepare();
    resume();
    run_search();
    const Ranking ranking = rank();
    remeasure_finalists(ranking);
    store_winner();
    finish();
    return std::move(report_);
  }

 private:
  /// Every result of the target, this run's and earlier runs', by configuration.
  using Results = std::map<Configuration, db::Measurement>;
  using Result = Results::value_type;
  /// The successful results with a value for the objective (energy: a reading; a metric:
  /// one that evaluated), best first.
  using Ranking = std::vector<std::pair<double, const Result*>>;

  void prepare();
  void resume();
  void run_search();
  Ranking rank();
  void remeasure_finalists(const Ranking& ranking);
  void store_winner();
  void finish();

  void log(const std::string& line) const {
    if (options_.log) *options_.log << line << '\n' << std::flush;
  }
  std::vector<std::pair<std::string, double>> metrics_of(const Configuration& c, double median_ms) const;
  void feed();
  /// A result into the counts and the progress; a fresh one (`outcome`) is told to the session
  /// at the time it arrived on the pipeline's clock.
  void record(const Configuration& c, const db::Measurement& m, const LaneOutcome* outcome);
  void store_and_record(const Configuration& c, db::Measurement& m, const LaneOutcome& outcome);
  void take_outcome(LaneOutcome outcome);
  void learn_pace(const LaneOutcome& outcome);
  void take_result(std::size_t lane, const Configuration& c, db::Measurement& m, const GpuEvaluation& ev,
                   double eval_ms);
  void take_recorded(const LaneOutcome& outcome, db::Measurement& m);
  void progress_of_workers(TuneOptions::Progress& p) const;
  /// Seconds on the pipeline's clock since the tuning began (what a time budget counts).
  double clock_s() const { return pipeline().now_s() - clock_origin_s_; }
  /// The session's time budget is spent (stored results count when resuming), or the clock
  /// has run past it with nothing told.
  bool out_of_time() const {
    return options_.time_budget_s && (search_->time_spent() || clock_s() >= *options_.time_budget_s);
  }
  Pipeline& pipeline() const { return *pipeline_; }
  /// The kernel as a prior knows it: the T1 file's name and its CUDA function's.
  const search::KernelNames& kernel_names() const { return session_.target().kernel; }

  TuningSession& session_;
  /// nullptr for a replay, which has no source, arguments or metrics.
  const KernelProblem* problem_;
  const Space& space_;
  const TuneOptions& options_;
  const Objective& objective_;
  const Clock::time_point t_start_ = Clock::now();
  TuneReport report_;
  db::kt::KtCacheWriter kt_cache_;
  std::optional<db::Run> run_;
  Results results_;
  std::unique_ptr<Pipeline> pipeline_;
  /// The session's time when the search began: the costs of the stored results it resumed.
  double clock_origin_s_ = 0.0;
  std::chrono::milliseconds timeout_{0};
  std::optional<search::Session> search_;
  std::size_t lookahead_ = 0;
  // A time budget without an evaluation budget: the pace of the first results, until the
  // strategy learns the evaluation budget it comes to (pace.hpp).
  std::optional<search::PacedBudget> paced_;

  // The search's bookkeeping: progress, the screening's best, what the report sums up.
  std::uint64_t done_ = 0, total_ = 0, screened_ = 0;
  double screening_wall_ms_ = 0.0;
  double best_ms_ = INFINITY;
  std::string best_key_;
  std::optional<double> best_objective_;  ///< a metric objective's best so far, for the progress line
  bool timeout_set_ = false;
  std::vector<double> compile_times_;
  Clock::time_point t_search_end_;
};

// The metrics (Kernel Tuner's process_metrics) of one measured configuration at its
// median. One that fails for this configuration (a division by a parameter that is 0) is
// left out, so the configuration has no value for it and ranks after every one that has.
std::vector<std::pair<std::string, double>> Tuning::metrics_of(const Configuration& c, double median_ms) const {
  std::vector<std::pair<std::string, double>> out;
  if (!problem_ || problem_->metrics().empty()) return out;
  try {
    out = problem_->evaluate_metrics(session_.instance(), median_ms * 1e-3, &c.index());
  } catch (const InputError& e) {
    log(fmt::format("{}: {}", c.key(), e.what()));
  }
  return out;
}

// Start-up: the pipeline's lanes (GPU workers, or a recording's), the device, the Kernel
// Tuner cache, and the run in the store.
void Tuning::prepare() {
  if (!session_.objective_warning().empty()) log("warning: " + session_.objective_warning());
  worker::MeasureOptions measure_options = options_.measure;
  if (objective_.is_energy()) measure_options.energy_every_config = true;  // every configuration is ranked by it
  // The GPU workers start first: their set-up (driver, context, arguments, reference
  // outputs) overlaps the store and the first compiles. Each says which GPU it is on as soon
  // as its driver has started; without a GPU the first one says so at once.
  pipeline_ = session_.make_pipeline(measure_options, t_start_);
  const std::vector<DeviceIdentity> gpus = pipeline().identities();
  // Winners are per GPU model: one tuning runs on one model.
  for (std::size_t i = 1; i < gpus.size(); ++i)
    if (gpus[i].model_key() != gpus[0].model_key())
      throw InputError(fmt::format("{} is a {} but {} is a {}: tune each GPU model in a run of its own",
                                   pipeline().lane_name(i), gpus[i].model_key(), pipeline().lane_name(0),
                                   gpus[0].model_key()));
  report_.device = gpus[0];
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    TuneReport::Worker w;
    w.name = pipeline().lane_name(i);
    w.uuid = gpus[i].uuid;
    report_.workers.push_back(std::move(w));
  }
  const TuningTarget& target = session_.target();
  report_.kernel = target.kernel.name;
  report_.problem_key = target.problem_key;
  if (problem_) {
    // Decided before this (TuningSession's kernel-name check builds the default's request):
    // the same decision, said once here. A replay compiles nothing.
    const jit::CompilerDecision compiler = jit::decide_compiler(*problem_, report_.device.arch());
    report_.compiler = compiler_name(compiler.compiler);
    report_.compiler_reason = compiler.reason;
  }
  report_.date = db::utc_now_iso();
  report_.default_config = session_.default_config();
  report_.objective = objective_;

  if (!options_.kt_cache.empty()) {  // before the store: a disagreeing file writes nothing
    auto header = db::kt::cache_header(target.kernel.function, space_, session_.instance().problem_size,
                                       report_.device, objective_.name());
    if (session_.default_first()) db::kt::set_default_field(header, space_);
    db::kt::set_problem_field(header, session_.instance().variables);
    kt_cache_.open(options_.kt_cache, header);
  }
  db::RunSpec spec;
  spec.device = report_.device;
  spec.kernel = target.kernel.name;
  spec.kernel_function = search::bare_function_name(target.kernel.function);
  spec.source_hash = target.source_hash;
  spec.problem_key = report_.problem_key;
  spec.problem_json = target.problem_json;
  spec.tool_version = CUTUNE_TOOL_VERSION;
  spec.strategy = options_.strategy;
  spec.seed = options_.seed;
  spec.command = options_.command;
  run_.emplace(session_.store().begin_run(spec));
  report_.run_id = run_->id();
}

// Resume: what the store holds for this kernel and problem on this GPU's model (or on this
// GPU alone, --reuse gpu) becomes results, and the search session is told it, so that nothing
// stored is evaluated again. Per model, because one process tuning on 8 GPUs stores them all
// under its first GPU while 8 processes (shards, or sessions on other machines of the model)
// stored 8 GPUs: a session on a second lent H200 re-measured the 1962 configurations of BAT's
// convolution the first one had stored.
void Tuning::resume() {
  std::vector<const Result*> resumed;
  const bool per_model = options_.reuse == TuneOptions::Reuse::Model;
  std::set<std::int64_t> other_gpus;
  std::size_t from_other_gpus = 0;
  for (auto& m : per_model ? run_->model_measurements() : run_->measurements()) {
    if (m.device_id != run_->device_id()) {
      other_gpus.insert(m.device_id);
      ++from_other_gpus;
    }
    // A stored key is text entering the process: it becomes a configuration here, once. One
    // outside the declared space cannot be proposed, compiled or re-measured: left out.
    std::optional<Configuration> c;
    try {
      c = Configuration::from_key(space_, m.config.key());
    } catch (const InputError&) {
      continue;
    }
    // Nor one the space's restrictions now reject (an edited problem; a key a recording lacks).
    if (!space_.is_valid(c->index())) continue;
    m.config = *c;
    // Stored before the problem had its metrics (or by an older cutune): computed now, here only.
    if (m.status == Status::Ok && m.metrics.empty() && problem_ && !problem_->metrics().empty())
      m.metrics = metrics_of(*c, m.median_ms);
    resumed.push_back(&*results_.insert_or_assign(*c, std::move(m)).first);
  }

  pipeline().start(report_.device);
  report_.compile_workers = pipeline().compile_workers();
  // A second run on the same target: what is stored is reused, and the budget is of new
  // evaluations (else `--seed 2 --budget 150` after a 150-evaluation run evaluated nothing and
  // reported the old best); --resume finishes an interrupted run within its budget instead.
  const Space& searched = session_.search_space();
  // The same kernel measured on other GPUs or problems: the strategy starts from it.
  {
    std::vector<search::Prior> priors = options_.priors;
    if (prior_from_db(options_.prior)) {
      auto from_db = priors_from_store(session_.store(), kernel_names(), objective_, run_->kernel_id(),
                                       run_->problem_id(), run_->device_id(),
                                       per_model ? report_.device.model_key() : std::string());
      priors.insert(priors.end(), from_db.begin(), from_db.end());
    }
    if (!priors.empty()) {
      auto prior =
          std::make_shared<const search::SpacePrior>(searched, kernel_names(), priors, session_.target().size);
      report_.prior = prior->uses();
      report_.prior_summary = prior->summary();
      log(report_.prior_summary);
      if (!prior->empty()) session_.use_prior(std::move(prior));
    }
  }
  const auto stored_in_search = static_cast<std::uint64_t>(std::count_if(
      resumed.begin(), resumed.end(), [&](const Result* r) { return searched.is_valid(r->first.index()); }));
  session_.reuse_stored(stored_in_search);
  const std::uint64_t searchable = searched.count_valid();
  if (options_.resume)
    total_ = options_.budget ? std::min(*options_.budget, searchable) : searchable;
  else
    total_ = options_.budget ? std::min(*options_.budget + stored_in_search, searchable) : searchable;
  if (!resumed.empty()) log(stored_results_line(options_.resume, options_.budget, resumed.size()));
  if (from_other_gpus > 0)
    log(fmt::format("{} of the stored measurements were made on {} other GPU{} of the model {} "
                    "(--reuse gpu: this GPU's own only)",
                    from_other_gpus, other_gpus.size(), other_gpus.size() == 1 ? "" : "s", report_.device.model_key()));
  // The runs whose measurements were reused: this GPU's, and per model those of the other GPUs
  // whose measurements were read (a run interrupted on another lent H200 is the one a session on
  // this one goes on with).
  if (!options_.resume && options_.budget) {
    std::vector<std::int64_t> devices{run_->device_id()};
    devices.insert(devices.end(), other_gpus.begin(), other_gpus.end());
    for (std::int64_t device : devices)
      for (const auto& r : session_.store().runs(run_->kernel_id(), run_->problem_id(), device))
        if (r.id != run_->id() && r.finished_at.empty())
          log(fmt::format("note: run {} ({} seed {}, started {}{}) has not finished (interrupted, or still running); "
                          "--resume finishes it within its budget",
                          r.id, r.strategy, r.seed, r.started_at,
                          device == run_->device_id() ? "" : ", on another GPU of the model"));
  }

  // The session asks the strategy, answers revisits and stored measurements from results,
  // and keeps the budgets.
  search::SessionOptions session_options;
  session_options.max_evaluations = options_.budget;
  session_options.max_time_s = options_.time_budget_s;
  session_options.stored_count_against_budget = options_.resume;
  search_.emplace(session_.strategy(), session_options, &space_);
  if (options_.time_budget_s && !options_.budget)
    paced_.emplace(*options_.time_budget_s, pipeline().compile_workers(), pipeline().lanes(), searchable);
  // Told in the order of the stored keys' text, as resumed sessions always were: an
  // adaptive strategy's state depends on the order it is told in.
  std::sort(resumed.begin(), resumed.end(),
            [](const Result* a, const Result* b) { return a->second.config.key() < b->second.config.key(); });
  for (const Result* r : resumed) {
    if (const auto recorded = pipeline().recorded_result(r->first.index()))
      search_->add_stored(r->first.index(), recorded->observation, recorded->cost_s);
    else
      search_->add_stored(r->first.index(), observation_of(r->second, objective_), cost_s(r->second));
  }
  // The clock goes on from the stored results' time, as a resumed session's trace does.
  clock_origin_s_ = search_->elapsed_s();
  pipeline().set_clock(clock_origin_s_);
}

// Asks the session for configurations to compile while the pipeline has room.
void Tuning::feed() {
  for (std::size_t room; !search_->done() && (room = pipeline().room(lookahead_)) > 0;) {
    // Never more than the lookahead: a strategy's proposals are only as informed as the
    // results it has when it makes them.
    const search::Session::Batch batch = search_->ask(std::min<std::size_t>(8, room));
    for (std::size_t i : batch.stored) {
      ++report_.configs_resumed;
      const Configuration c(space_, search_->trace()[i].config);
      const db::Measurement& stored = results_.at(c);
      if (stored.device_id != run_->device_id()) ++report_.configs_resumed_other_gpus;
      record(c, stored, nullptr);
    }
    for (const auto& c : batch.evaluate) pipeline().submit(c);
    if (batch.evaluate.empty() && batch.stored.empty()) break;  // wait for those in flight
  }
}

// A result, fresh or resumed: told to the session (fresh ones), appended to the Kernel
// Tuner cache, counted, and reported as progress.
void Tuning::record(const Configuration& c, const db::Measurement& m, const LaneOutcome* outcome) {
  const bool fresh = outcome != nullptr;
  // At the time it arrived on the pipeline's clock, costing what the pipeline says (GpuPipeline::next).
  if (fresh) search_->tell_at(c.index(), observation_of(m, objective_), outcome->cost_s, outcome->finished_s);
  const auto v = objective_.is_metric() ? db::objective_value(m, objective_) : std::nullopt;
  if (v && (!best_objective_ || objective_.better(*v, *best_objective_))) best_objective_ = v;
  if (kt_cache_.is_open()) kt_cache_.append(db::kt::entry_of_measurement(m, c));
  ++done_;
  if (m.status != Status::Ok) ++report_.configs_failed;
  if (m.status == Status::Ok && m.median_ms < best_ms_) {
    best_ms_ = m.median_ms;
    best_key_ = m.config.key();
  }
  if (m.status == Status::Ok) report_.timed_ms_total += std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0);
  if (!fresh) return;
  ++report_.configs_tried;
  TuneOptions::Progress p;
  p.done = done_;
  p.total = std::max(total_, done_);
  p.failed = report_.configs_failed;
  p.best_ms = std::isfinite(best_ms_) ? best_ms_ : 0.0;
  p.best_key = best_key_;
  p.elapsed_s = clock_s();
  p.line = fmt::format("[{}] {} {}{} {}", done_, m.config.key(),
                       m.status == Status::Ok ? fmt::format("{:.4f} ms", m.median_ms)
                                              : fmt::format("{}: {}", status_name(m.status), m.error),
                       v ? fmt::format(" {:.6g} {}", *v, objective_.name()) : "",
                       best_objective_ ? fmt::format("(best {:.6g} {})", *best_objective_, objective_.name())
                       : std::isfinite(best_ms_) ? fmt::format("(best {:.4f} ms)", best_ms_)
                                                 : "");
  if (pipeline().lanes() > 1) progress_of_workers(p);
  if (options_.progress) options_.progress(p);
  else log(p.line);
}

// One line per GPU worker: what it has done and how it stands.
void Tuning::progress_of_workers(TuneOptions::Progress& p) const {
  for (const auto& w : report_.workers)
    p.workers.push_back(fmt::format("{}: {} evaluated, {:.0f}% busy{}{}", w.name, w.evaluations,
                                    std::min(100.0, w.evaluate_ms / std::max(1.0, ms_since(t_start_)) * 100.0),
                                    w.restarts ? fmt::format(", {} restarts", w.restarts) : "",
                                    w.lost ? ", lost" : ""));
}

// A fresh result leaves the process: it is committed to the store before the strategy hears of it.
void Tuning::store_and_record(const Configuration& c, db::Measurement& m, const LaneOutcome& outcome) {
  m.config = c;
  m.finished_at = db::utc_now_iso();
  const auto t_store = Clock::now();
  run_->add(m);
  report_.store_ms += ms_since(t_store);
  results_.insert_or_assign(c, m);
  record(c, m, &outcome);
}

// A lane's outcome into its row, stored and recorded.
void Tuning::take_outcome(LaneOutcome o) {
  const Configuration c(space_, o.compiled.config);
  db::Measurement m;
  m.started_at = db::utc_now_iso();
  m.compile_ms = o.compiled.result.compile_ms;
  if (!o.compiled.result.from_cache && !o.compiled.shared) compile_times_.push_back(m.compile_ms);
  if (o.recorded) {
    take_recorded(o, m);
  } else if (!o.evaluation) {
    m.status = Status::Compile;
    m.error = o.compiled.result.error;
  } else {
    take_result(o.lane, c, m, *o.evaluation, o.eval_ms);
  }
  store_and_record(c, m, o);
  learn_pace(o);
  // The screening stops a configuration early once it is surely slower than the best so
  // far: right only when time is what ranks. A slower configuration may use less energy,
  // and a metric may win while slower (GFLOP/s of a variant that does more useful work
  // per launch, or any metric not monotone in time), so with energy or a metric every
  // configuration is screened in full.
  if (std::isfinite(best_ms_) && objective_.is_time()) pipeline().set_best_ms(best_ms_);
}

// A fresh outcome's cost into the pace; at kPaceResults the strategy learns its budget. A
// compile answered from the cache or shared with another configuration cost no compile worker.
// The pace is the pipeline's model, as the simulation's and the scoring's (the compile workers'
// stage or the GPU's, whichever is slower), not the wall clock of the first results: on an
// H100 (12 compile workers, default strategy, 2026-11-27) the wall clock from the first
// proposal to the 8th result gave 0.234 s per evaluation on scan 2^26 and 0.141 s on reduction
// 2^26 (compile processes starting, the first plans), where the runs went on to make 480 in
// 22 s and 541 in 11 s: planned as short runs (172 and 142) they were long ones, the costlier
// mistake (told their budgets, the long runs as bayes_opt alone scored 0.687 against the
// portfolio's 0.808; the short ones as the portfolio 0.133 against 0.162). The model errs the
// other way, leaving out the host's own time: matmul 2048^3 0.042 s against the 0.124 s per
// evaluation the run made (planned 842, the whole space; made 250 in 31 s). Both runs are in
// results/nvidia-h100-80gb-hbm3/time_budget_pace/.
void Tuning::learn_pace(const LaneOutcome& o) {
  if (!paced_) return;
  const auto [compile_s, evaluate_s] = pipeline().pace_costs_s(o);
  const auto budget = paced_->add(compile_s, evaluate_s);
  if (!budget) return;
  session_.strategy().learn_budget(*budget);
  report_.learnt_budget = budget;
  log(fmt::format("--time-budget {:g} s at the pace of the first {} results ({:.3g} s per evaluation, {} compile "
                  "workers, {} GPUs): {} plans for {} evaluations",
                  *options_.time_budget_s, search::kPaceResults, *paced_->pace_s(), pipeline().compile_workers(),
                  pipeline().lanes(), options_.strategy, *budget));
}

// A replayed evaluation into its row, as a simulated run stores it: the recorded result, and
// the recording's parts of its cost, as an import stores them (`cutune report` shows where the
// simulated time went).
void Tuning::take_recorded(const LaneOutcome& o, db::Measurement& m) {
  const search::RecordedResult& r = *o.recorded;
  ++report_.workers.at(o.lane).evaluations;
  m.status = o.evaluation->status;
  m.error = o.evaluation->error;
  m.median_ms = r.observation.valid ? r.observation.objective : 0.0;
  m.compile_ms = r.compile_s * 1e3;
  m.verify_ms = r.verify_s * 1e3;
  m.origin = SimulatedOrigin{o.cost_s, r.benchmark_s};
}

// The worker's answer into the row, and into the report's sums (the run's and its worker's).
void Tuning::take_result(std::size_t lane, const Configuration& c, db::Measurement& m, const GpuEvaluation& ev,
                         double eval_ms) {
  // The worker's sums; the run's are theirs added up (finish()).
  TuneReport::Worker& w = report_.workers.at(lane);
  ++w.evaluations;
  w.evaluate_ms += eval_ms;
  w.verify_ms += ev.verify_ms;
  w.load_ms += ev.load_ms;
  w.stage_ms += ev.stage_ms;
  if (w.evaluations > 1) w.idle_ms += ev.idle_before_ms;  // the first one's wait is start-up
  if (ev.stats) w.sampling_ms += ev.stats->set.wall_ms;
  w.restarts = pipeline().restarts(lane);
  w.lost = pipeline().lost(lane);
  if (!timeout_set_ && ev.status == Status::Ok) {
    // The hang timeout, from the first configuration that ran (normally the default).
    const double wall_s = eval_ms / 1e3;
    timeout_ = std::chrono::milliseconds(
        static_cast<std::int64_t>(1e3 * std::max(options_.timeout_floor_s, 50.0 * wall_s)));
    pipeline().set_timeout(timeout_);
    timeout_set_ = true;
  }
  m.status = ev.status;
  m.error = ev.error;
  m.samples_ms = ev.samples_ms();
  m.median_ms = ev.median_ms();
  m.verify_ms = ev.verify_ms;
  if (m.status == Status::Ok) m.metrics = metrics_of(c, m.median_ms);
  if (ev.stats) {
    // Loading the module is part of an evaluation's time that no other field holds:
    // `cutune report` stacks it beside compile, verification and the samples.
    m.origin = MeasuredOrigin{ResultStats::of(*ev.stats), ev.load_ms, std::nullopt, {}};
    screening_wall_ms_ += ev.stats->set.wall_ms;
    ++screened_;
  }
  // Kept for failures too: a configuration refused for its resources shows what it asked for.
  if (MeasuredOrigin* measured = std::get_if<MeasuredOrigin>(&m.origin)) {
    measured->resources = ev.resources;
    // Observers' values for a configuration that passed: the verifier's (the package's
    // observers), then the NVML readings a Kernel Tuner NVMLObserver asked for.
    if (m.status == Status::Ok) {
      measured->observed = ev.observed;
      if (measured->stats && !options_.kt_observables.empty())
        for (auto& kv : kt_nvml_observed(*measured->stats, options_.kt_observables))
          measured->observed.push_back(std::move(kv));
    }
  }
}

// The search: the session proposes, the pool compiles ahead, each GPU worker's lane takes
// compiled configurations with two in flight, every result is stored as it arrives; until
// the session is done, nothing is left in flight, or the time budget is spent.
void Tuning::run_search() {
  // The default configuration goes first when the problem names it or its output defines a
  // correct one (TuningSession::default_first says why not otherwise). The budget counts unique
  // configurations, the default included, resumed ones too.
  if (session_.default_first()) search_->add_first(session_.default_config().index());
  for (const Configuration& c : session_.first()) search_->add_first(c.index());
  // Proposals ahead of results, by the rule the simulation scores (search/lookahead.hpp).
  lookahead_ = options_.lookahead ? *options_.lookahead
                                  : search::proposals_ahead(session_.strategy().learns(), pipeline().compile_workers(),
                                                            pipeline().capacity());
  report_.lookahead = lookahead_;

  feed();
  pipeline().fed();
  pipeline().wait_ready();
  report_.startup_s = seconds_since(t_start_);
  const worker::Ready& ready = pipeline().ready(0);
  {
    nlohmann::json phases = nlohmann::json::object();
    for (const auto& [name, ms] : ready.setup_ms) phases[name] = ms;
    report_.gpu_setup_ms = phases.dump();
  }
  timeout_ = std::chrono::milliseconds(static_cast<std::int64_t>(options_.first_timeout_s * 1e3));
  pipeline().set_timeout(timeout_);
  report_.verification = session_.verification_of(ready);
  report_.l2_method = to_string(ready.l2);
  // "verification: none", not "against the none" (seen in a tuning of an unverified problem).
  const std::size_t lanes = pipeline().lanes();
  const std::string compiler_text =
      !problem_ ? std::string()
      : report_.compiler == "nvrtc"
          ? std::string(", compiler NVRTC")
          : ", compiler " + jit::CompilerDecision{Compiler::Nvcc, report_.compiler_reason}.describe();
  log(fmt::format("tuning {} ({}) on {} [{}]{}, verification: {}, L2 {}{}", report_.kernel, report_.problem_key,
                  report_.device.name, report_.device.arch(),
                  lanes > 1 ? fmt::format(" x{} ({} GPU workers)", lanes, lanes) : "", report_.verification,
                  report_.l2_method, compiler_text));

  std::optional<double> deadline_s;
  if (options_.time_budget_s) deadline_s = clock_origin_s_ + *options_.time_budget_s;
  while (true) {
    if (out_of_time()) {
      // What is queued or compiling is dropped, not evaluated: with brute force 512
      // configurations wait ahead, and one convolution compile took 16 s (BAT's on an H100),
      // so finishing them overran a 30 s budget by 45 s. What the GPUs hold finishes.
      pipeline().stop_taking();
      while (auto o = pipeline().next(std::nullopt)) take_outcome(std::move(*o));
      break;
    }
    const auto t_wait = Clock::now();
    auto outcome = pipeline().next(deadline_s);
    report_.compile_wait_ms += ms_since(t_wait);
    if (outcome) {
      take_outcome(std::move(*outcome));  // its result may let the strategy ask for more
      feed();
      pipeline().fed();
      continue;
    }
    if (out_of_time()) continue;
    // Nothing in flight and nothing compiled or compiling: the session proposes more, or is done.
    feed();
    if (pipeline().pending() == 0 && (search_->done() || search_->in_flight() == 0)) break;
    pipeline().fed();
  }
  pipeline().stop_taking();  // the finalists' compiles are the loop's own
  report_.trace = search_->trace();
  report_.revisits = search_->revisits();
  report_.end = search_->end_reason();
  if (paced_) report_.pace_s = paced_->pace_s();
  t_search_end_ = Clock::now();
  report_.search_ms =
      std::chrono::duration<double, std::milli>(t_search_end_ - t_start_).count() - report_.startup_s * 1e3;
}

// The screening's ranking over everything stored for this kernel, problem and device
// (resumed runs too), and its winner; the finalists' re-measurement may overturn it.
Tuning::Ranking Tuning::rank() {
  std::map<std::string, std::uint64_t> by_status;
  std::vector<const Result*> succeeded;
  std::size_t differs_from_default = 0;
  for (const Result& r : results_) {
    const db::Measurement& m = r.second;
    if (m.status != Status::Ok) {
      ++by_status[status_name(m.status)];
      differs_from_default += m.error.starts_with(kDiffersFromDefault);
      continue;
    }
    succeeded.push_back(&r);
  }
  // Most of a space rejected for differing from the default: outputs that differ by design
  // (a stencil's halo, scratch) look just like wrong ones; the user must choose, so say how.
  if (differs_from_default >= 2 && 2 * differs_from_default > results_.size())
    log(fmt::format("{} of {} configurations fail verification against the default configuration's output; if "
                    "outputs may differ by design, verify against a reference or not at all: --verify none, "
                    "--verify OUTPUT=none or cutune.Verification in the problem file", differs_from_default,
                    results_.size()));
  // Equal values keep the order of their keys' text, as ranking has always broken ties, so
  // that a resumed session declares the same winner.
  std::sort(succeeded.begin(), succeeded.end(),
            [](const Result* a, const Result* b) { return a->second.config.key() < b->second.config.key(); });
  Ranking ranking;
  for (const Result* r : succeeded)
    if (auto v = db::objective_value(r->second, objective_)) ranking.emplace_back(*v, r);
  std::stable_sort(ranking.begin(), ranking.end(),
                   [&](const auto& a, const auto& b) { return objective_.better(a.first, b.first); });

  report_.failures_by_status.assign(by_status.begin(), by_status.end());
  report_.space_valid = space_.count_valid();
  if (screened_) report_.screening_ms_per_config = screening_wall_ms_ / static_cast<double>(screened_);
  if (auto it = results_.find(session_.default_config()); it != results_.end()) {
    report_.default_evaluated = true;
    if (it->second.status == Status::Ok) report_.default_ms = it->second.median_ms;
  }
  if (!ranking.empty()) {
    const Result* best = ranking.front().second;
    report_.winner = best->first;
    report_.winner_ms = best->second.median_ms;
    report_.winner_objective_value = ranking.front().first;
  }
  return ranking;
}

// Declaring a winner: the top k and the default, re-measured thoroughly, interleaved, back
// to back; declared only if its interval separates from the rest.
void Tuning::remeasure_finalists(const Ranking& ranking) {
  if (ranking.empty() || options_.measure.finalists == 0) return;
  const Configuration& default_config = session_.default_config();
  std::vector<const Result*> chosen;
  for (std::size_t i = 0; i < std::min(ranking.size(), options_.measure.finalists); ++i)
    chosen.push_back(ranking[i].second);
  auto is_default = [&](const Result* r) { return r->first == default_config; };
  if (report_.default_ms > 0 && std::none_of(chosen.begin(), chosen.end(), is_default))
    chosen.push_back(&*results_.find(default_config));
  std::vector<Config> configs;
  for (const Result* r : chosen) configs.push_back(r->first.index());
  log(fmt::format("re-measuring {} finalists thoroughly, interleaved", configs.size()));
  // In the order they were measured (as their compiles arrived).
  std::vector<GpuEvaluation> evs;
  std::vector<const Result*> measured;
  for (auto& [config, ev] : pipeline().remeasure(configs)) {
    const Configuration c(space_, config);
    measured.push_back(*std::find_if(chosen.begin(), chosen.end(), [&](const Result* r) { return r->first == c; }));
    evs.push_back(std::move(ev));
  }
  if (evs.empty()) return;
  std::vector<Summary> summaries;
  std::optional<std::size_t> default_index;
  double thorough_wall_ms = 0.0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    if (!evs[i].stats) {
      log(fmt::format("finalist {} failed on re-measurement: {}", measured[i]->second.config.key(), evs[i].error));
      return;
    }
    summaries.push_back(evs[i].stats->summary);
    thorough_wall_ms += evs[i].stats->set.wall_ms;
    if (is_default(measured[i])) default_index = i;
  }
  // A metric's value for each finalist at its thorough median, and the metric's interval
  // from the median's (the metric is evaluated at both ends: it may rise or fall with
  // time). The verdict is then declared over the metric, as a cost (negated when higher
  // is better), so the interval test that separates times separates the metric too.
  std::vector<double> finalist_values(summaries.size(), std::numeric_limits<double>::quiet_NaN());
  if (objective_.is_metric()) {
    auto metric_at = [&](std::size_t i, double ms) {
      for (const auto& [name, v] : metrics_of(measured[i]->first, ms))
        if (name == objective_.metric && std::isfinite(v)) return v;
      return std::numeric_limits<double>::quiet_NaN();
    };
    for (std::size_t i = 0; i < summaries.size(); ++i) {
      finalist_values[i] = metric_at(i, summaries[i].median);
      summaries[i] = metric_cost_summary(
          summaries[i], [&](double ms) { return metric_at(i, ms); }, objective_.higher_is_better);
    }
  }
  const measure::Verdict v = measure::declare_winner(summaries, default_index);
  report_.verdict = v.separated ? Verdict::Separated : Verdict::Tie;
  report_.thorough_ms_per_config = thorough_wall_ms / static_cast<double>(evs.size());
  for (std::size_t i : v.ranking) {
    TuneReport::Finalist f(measured[i]->first);
    f.is_default = is_default(measured[i]);
    f.tied = std::find(v.tied.begin(), v.tied.end(), i) != v.tied.end();
    f.screening_ms = measured[i]->second.median_ms;
    f.stats = *evs[i].stats;
    f.objective_value =
        objective_.is_metric()   ? finalist_values[i]
        : objective_.is_energy() ? f.stats.energy_mj_per_launch.value_or(std::numeric_limits<double>::quiet_NaN())
                                 : f.stats.summary.median;
    report_.finalists.push_back(std::move(f));
  }
  if (objective_.is_energy()) {
    // Ranked by energy per launch instead; one window per finalist gives no interval,
    // so nothing is declared (verdict screening).
    auto joules = [](const TuneReport::Finalist& f) {
      return f.stats.energy_mj_per_launch.value_or(std::numeric_limits<double>::infinity());
    };
    std::stable_sort(report_.finalists.begin(), report_.finalists.end(),
                     [&](const auto& a, const auto& b) { return joules(a) < joules(b); });
    report_.verdict = Verdict::Screening;
  }
  const auto& w = report_.finalists.front();
  report_.winner = w.config;
  report_.winner_ms = w.stats.summary.median;
  report_.winner_objective_value = objective_.is_energy()
                                       ? w.stats.energy_mj_per_launch.value_or(report_.winner_objective_value)
                                   : objective_.is_metric() ? w.objective_value
                                                            : report_.winner_ms;
  if (default_index) report_.default_ms = evs[*default_index].stats->summary.median;
  for (const auto& f : report_.finalists)
    log(fmt::format("  {} {:.4f} ms [{:.4f}, {:.4f}] n={} ({}){}{}{}", f.config.key(), f.stats.summary.median,
                    f.stats.summary.ci_low, f.stats.summary.ci_high, f.stats.summary.count,
                    to_string(f.stats.set.reason),
                    objective_.is_metric() ? fmt::format(" {:.6g} {}", f.objective_value, objective_.metric) : "",
                    f.is_default ? " default" : "", f.tied && report_.verdict == Verdict::Tie ? " tied" : ""));
}

// The winner, with its metrics, into the store: one per (kernel, problem, GPU model, objective).
void Tuning::store_winner() {
  if (!report_.winner) return;
  report_.winner_metrics = metrics_of(*report_.winner, report_.winner_ms);
  db::WinnerChoice w;
  w.config = *report_.winner;
  w.median_ms = report_.winner_ms;
  w.default_ms = report_.default_ms;
  w.objective = objective_;
  w.objective_value = report_.winner_objective_value;
  w.verdict = report_.verdict;
  w.finalists = report_.stored_finalists();
  run_->set_winner(w);
}

// The run ends, the copy ceiling is measured, the workers go, and the report gets its totals.
void Tuning::finish() {
  run_->end();
  kt_cache_.close();
  {
    // The copy ceiling, measured in the same run: as many bytes as the problem's arguments
    // (at least 256 MiB so that the L2 does not serve it).
    std::size_t bytes = std::max<std::size_t>(pipeline().ready(0).total_argument_bytes / 2, std::size_t{256} << 20);
    report_.copy_gbps = pipeline().copy_bandwidth_gbps(bytes);
  }
  // Everything is stored: each worker releases its context on its own time (its exit took
  // part of the 0.4 s between the report's wall time and the process's). The lanes go before
  // the pool they take from.
  for (std::size_t i = 0; i < pipeline().lanes(); ++i) {
    TuneReport::Worker& w = report_.workers[i];
    w.restarts = pipeline().restarts(i);
    w.lost = pipeline().lost(i);
    report_.worker_restarts += w.restarts;
    report_.evaluate_ms += w.evaluate_ms;
    report_.verify_ms += w.verify_ms;
    report_.worker_load_ms += w.load_ms;
    report_.worker_stage_ms += w.stage_ms;
    report_.worker_idle_ms += w.idle_ms;
    report_.sampling_ms += w.sampling_ms;
  }
  report_.timeout_s = static_cast<double>(timeout_.count()) / 1e3;
  pipeline().release();
  report_.after_search_ms = ms_since(t_search_end_);
  if (!compile_times_.empty()) {
    std::sort(compile_times_.begin(), compile_times_.end());
    report_.compile_ms_median = compile_times_[compile_times_.size() / 2];
  }
  report_.compile = pipeline().compile_stats();
  report_.wall_s = seconds_since(t_start_);
}

}  // namespace

std::string kernel_source_hash(const KernelProblem& problem) {
  return content_hash(problem.source() + '\0' + read_file(problem.json_file()));
}

std::vector<Configuration> parse_configs(const Space& space, const std::vector<std::string>& texts,
                                         const std::string& option) {
  std::vector<Configuration> out;
  for (const auto& text : texts) {
    std::optional<Configuration> c;
    try {
      c = Configuration::from_assignments(space, text);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", option, text, e.what()));
    }
    if (std::string r = c->violated_restriction(); r == Space::kNotAMember)
      throw InputError(fmt::format("{} {}: not in the space (a recording holds only what it measured)", option, text));
    else if (!r.empty())
      throw InputError(fmt::format("{} {}: violates \"{}\"", option, text, r));
    out.push_back(std::move(*c));
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

std::vector<cutune::Finalist> TuneReport::stored_finalists() const {
  std::vector<cutune::Finalist> out;
  for (const auto& f : finalists) {
    cutune::Finalist s;
    s.config = f.config;
    s.is_default = f.is_default;
    s.tied = f.tied;
    s.screening_ms = f.screening_ms;
    if (std::isfinite(f.objective_value)) s.objective_value = f.objective_value;
    s.stats = ResultStats::of(f.stats);
    s.samples_ms = f.stats.set.samples_ms;
    out.push_back(std::move(s));
  }
  return out;
}

TuneReport tune(TuningSession session) {
  Tuning tuning(session);
  return tuning.run();
}

TuneReport tune(const KernelProblem& problem, const TuneOptions& options) {
  return tune(TuningSession(problem, options));
}

MeasureSession measure_configs(const KernelProblem& problem, const std::string& problem_text,
                               const std::vector<std::string>& config_texts, int device,
                               const worker::MeasureOptions& options, double loop_s, std::uint64_t data_seed) {
  const Space& space = problem.space();
  ProblemInstance instance = problem.instantiate(problem_text);
  const std::vector<Configuration> configs =
      parse_configs(space, config_texts.empty() ? std::vector<std::string>{""} : config_texts, "--config");
  require_device(device);
  MeasureSession session;
  session.device = cuda::identify(device);
  session.device.nvrtc_version = jit::nvrtc_version();
  session.problem_key = instance.key();
  session.compiler = compiler_name(jit::decide_compiler(problem, session.device.arch()).compiler);
  worker::GpuStage gpu(problem, instance, device, options, data_seed);
  const jit::CubinCache cache(jit::CubinCache::default_dir());
  session.l2_method = to_string(gpu.l2_method());
  session.verification = gpu.verification_source();
  std::vector<worker::Candidate> candidates;
  std::vector<std::size_t> index;  // session.configs entry of each candidate
  for (const Configuration& c : configs) {
    MeasuredConfig mc(c);
    // Through the tuner's cubin cache: distill measures the same configurations at every shape
    // of a sweep, and a tuning has compiled them already.
    const jit::CompileRequest request = compile_request(problem, c.index(), session.device.arch());
    const std::string key = jit::compile_key(request, session.device.nvrtc_version);
    std::optional<jit::CompileResult> hit = cache.get(key);
    jit::CompileResult compiled = hit ? std::move(*hit) : jit::compile(request);
    if (!hit) cache.put(key, compiled);
    mc.compile_ms = compiled.compile_ms;
    if (!compiled.ok) {
      mc.evaluation.status = Status::Compile;
      mc.evaluation.error = compiled.error;
    } else {
      // One configuration: verified and measured thoroughly in one go. Several: verified
      // (and screened) one by one, then measured thoroughly together, interleaved.
      mc.evaluation =
          gpu.evaluate(c.index(), compiled.cubin, compiled.lowered_names, std::nullopt, configs.size() == 1);
      if (mc.evaluation.context_lost) throw std::runtime_error(c.key() + ": " + mc.evaluation.error);
      if (mc.evaluation.status == Status::Ok) {
        if (loop_s > 0) {
          mc.loop_launches = static_cast<std::size_t>(
              std::clamp(loop_s * 1e3 / std::max(mc.evaluation.median_ms(), 1e-4), 10.0, 1e6));
          mc.loop_ms = gpu.back_to_back_ms(c.index(), compiled.cubin, compiled.lowered_names, mc.loop_launches);
        }
        index.push_back(session.configs.size());
        candidates.push_back({c.index(), std::move(compiled.cubin), std::move(compiled.lowered_names)});
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
