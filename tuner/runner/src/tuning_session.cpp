#include "cutune/runner/tuning_session.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/runner/evaluation_lanes.hpp"
#include "cutune/runner/gpu_pipeline.hpp"
#include "cutune/runner/replay_pipeline.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/objective.hpp"
#include "cutune/search/simulation.hpp"

namespace cutune::runner {

std::string stored_results_line(bool resume, std::optional<std::uint64_t> budget, std::size_t stored) {
  if (resume)
    return budget ? fmt::format("resuming: {} of {} already stored", stored, *budget)
                  : fmt::format("resuming: {} already stored; no budget: every configuration not stored", stored);
  return budget ? fmt::format("reusing {} stored measurements; budget {} new evaluations", stored, *budget)
                : fmt::format("reusing {} stored measurements; no budget: every configuration not stored", stored);
}

TuneOptions::Reuse parse_reuse(const std::string& text) {
  if (text == "model") return TuneOptions::Reuse::Model;
  if (text == "gpu") return TuneOptions::Reuse::Gpu;
  throw InputError(fmt::format("--reuse {}: expected model or gpu", text));
}

void check_shard_strategy(const std::string& strategy, const Shard& shard) {
  if (strategy != "brute_force" && strategy != "random")
    throw InputError(fmt::format("--shard {}: strategy {} cannot be split into shards; use brute_force or random",
                                 shard.text(), strategy));
}

bool evaluates_default_first(const KernelProblem& problem, const std::vector<std::string>& verify) {
  // The plan first: it checks --verify, whichever way the default goes.
  const bool defines_answer = plan_verification(problem, verify).any(VerifyMode::Default);
  return problem.space().default_named() || defines_answer;
}

TuningSession::TuningSession(const KernelProblem& problem, TuneOptions options)
    : problem_(&problem),
      space_(&problem.space()),
      options_(std::move(options)),
      // The strategy first: an unknown name is the likeliest mistake on the command line.
      strategy_(search::make_strategy(problem.space(), {options_.strategy, options_.seed, options_.budget})),
      instance_(problem.instantiate(options_.problem)),
      default_config_(Configuration::default_of(problem.space())),
      first_(parse_configs(problem.space(), options_.first, "--try")) {
  // A kernel name the source has in no configuration: one line, before any GPU work (any
  // architecture tells; the name is looked up in the source text first).
  if (std::string e = jit::kernel_name_error(compile_request(problem, default_config_.index(), "sm_90")); !e.empty())
    throw InputError(fmt::format("{}: KernelSpecification.KernelName: {}", problem.json_file().string(), e));
  if (options_.shard) {
    check_shard_strategy(options_.strategy, *options_.shard);
    search_space_ = std::make_unique<Space>(shard_of(problem.space(), *options_.shard));
  }
  strategy_ = make_strategy();  // over the shard, and with a budget learnt from a time budget's pace
  default_first_ = evaluates_default_first(problem, options_.measure.verify);
  objective_ = search::resolve_objective(problem, options_.objective, options_.objective_higher_is_better,
                                         &objective_warning_);
  // A metric that cannot be evaluated at all (a typo) is the file's error, before anything runs.
  if (!problem.metrics().empty()) (void)problem.evaluate_metrics(instance_, 1e-3, &default_config_.index());
  if (std::string r = default_config_.violated_restriction(); !r.empty())
    throw InputError(fmt::format("{}: the default configuration {} violates \"{}\"", problem.json_file().string(),
                                 default_config_.key(), r));
  target_.kernel = {problem.name(), problem.kernel_name()};
  target_.source_hash = kernel_source_hash(problem);
  target_.problem_key = instance_.key();
  target_.problem_json = instance_.json();
  target_.size = {nlohmann::json(instance_.problem_size).dump(), instance_.variables.empty() ? "" : instance_.key()};
  // Last, so that no other mistake has opened it. Refuses a file that is not a cutune DB
  // (leaving it as it was); a missing one is created once there is a GPU to tune on.
  if (std::filesystem::exists(options_.db)) store_ = db::Store::open(options_.db, /*create=*/true);
}

TuningSession::TuningSession(const search::RecordedSpace& recorded, const replay::RecordingOrigin& origin,
                             TuneOptions options)
    : recorded_(&recorded),
      origin_(origin),
      space_(&recorded.space()),
      options_(std::move(options)),
      strategy_(search::make_strategy(recorded.space(), {options_.strategy, options_.seed, options_.budget})),
      objective_(Objective::time()),
      default_config_(Configuration::default_of(recorded.space())),
      first_(parse_configs(recorded.space(), options_.first, "--try")) {
  if (options_.shard) {
    check_shard_strategy(options_.strategy, *options_.shard);
    search_space_ = std::make_unique<Space>(shard_of(recorded.space(), *options_.shard));
  }
  strategy_ = make_strategy();
  // What the recording's tuning evaluated first, as the loop would (the default it names).
  const std::vector<Config> first = search::loop_first(recorded);
  default_first_ = !first.empty();
  if (default_first_) default_config_ = Configuration(recorded.space(), first.front());
  options_.measure.finalists = 0;  // nothing to re-measure: the recording is the measurement
  // Without a name of its own the recording is known by its file's.
  target_.kernel = {origin.kernel_name.empty() ? recorded.name() : origin.kernel_name, origin.kernel_function};
  target_.source_hash = target_.problem_key = "recorded:" + recorded.name();
  target_.problem_json = "{}";
  // A cache names its problem by its size (problem_size), and by its variables where cutune wrote it.
  target_.size = {origin.problem, origin.problem_variables};
  if (std::filesystem::exists(options_.db)) store_ = db::Store::open(options_.db, /*create=*/true);
}

void TuningSession::reuse_stored(std::uint64_t stored) {
  if (options_.resume || !options_.budget || stored == 0) return;
  stored_reused_ = stored;
  strategy_ = make_strategy();
}

void TuningSession::use_prior(std::shared_ptr<const search::SpacePrior> prior) {
  prior_ = std::move(prior);
  strategy_ = make_strategy();
}

std::unique_ptr<search::Strategy> TuningSession::make_strategy() const {
  std::optional<std::uint64_t> budget = options_.budget;
  if (budget) *budget += stored_reused_;
  search::StrategyOptions so{options_.strategy, options_.seed, budget, prior_};
  // A time budget alone: the budget is learnt from the first results' pace (Tuning::learn_pace).
  so.budget_learnt = options_.time_budget_s && !options_.budget;
  return search::make_strategy(search_space(), so);
}

std::unique_ptr<Pipeline> TuningSession::make_pipeline(const worker::MeasureOptions& measure,
                                                       std::chrono::steady_clock::time_point start) const {
  const std::size_t lanes = std::max<std::size_t>(1, options_.devices.size());
  if (recorded_) {
    DeviceIdentity device;
    device.name = origin_->device_name.empty() ? "unknown" : origin_->device_name;
    return std::make_unique<ReplayPipeline>(*recorded_, device, lanes, options_.compile.workers);
  }
  std::vector<EvaluationLanes::LaneFactory> factories;
  const std::vector<int> devices = options_.devices.empty() ? std::vector<int>{0} : options_.devices;
  for (int d : devices)
    factories.push_back([problem = problem_, text = options_.problem, d, measure, seed = options_.data_seed] {
      return std::make_unique<LocalLane>(*problem, text, d, measure, seed);
    });
  if (options_.start_remote_lanes) {
    worker::Setup setup{std::filesystem::absolute(problem_->json_file()).string(), options_.problem, -1,
                        options_.data_seed, measure};
    for (auto& remote : options_.start_remote_lanes(setup)) factories.push_back(std::move(remote));
  }
  return std::make_unique<GpuPipeline>(*problem_, std::move(factories), options_.compile, start);
}

std::string TuningSession::verification_of(const worker::Ready& ready) const {
  return problem_ ? ready.verification.describe(*problem_) : "as recorded";
}

db::Store& TuningSession::store() {
  if (!store_) {
    if (options_.db.has_parent_path()) std::filesystem::create_directories(options_.db.parent_path());
    store_ = db::Store::open(options_.db, /*create=*/true);
  }
  return *store_;
}

}  // namespace cutune::runner
