#include "cutune/runner/gpu_pipeline.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/configuration.hpp"

namespace cutune::runner {

using Clock = std::chrono::steady_clock;

GpuPipeline::GpuPipeline(const KernelProblem& problem, std::vector<EvaluationLanes::LaneFactory> factories,
                         CompilePoolOptions compile, Clock::time_point start)
    : problem_(problem), compile_options_(std::move(compile)), start_(start) {
  lanes_.emplace(std::move(factories));
}

std::vector<DeviceIdentity> GpuPipeline::identities() {
  std::vector<DeviceIdentity> gpus = lanes_->identities();
  for (DeviceIdentity& d : gpus) d.nvrtc_version = jit::nvrtc_version();
  return gpus;
}

void GpuPipeline::start(const DeviceIdentity& device) {
  if (compile_options_.workers == 0) compile_options_.workers = tuning_compile_workers();
  compiler_.emplace(problem_, device.arch(), compile_options_);
  lanes_->attach(*compiler_);
}

std::size_t GpuPipeline::room(std::size_t lookahead) const {
  const std::size_t ahead = compiler_->pending();
  return ahead < lookahead ? lookahead - ahead : 0;
}

double GpuPipeline::now_s() const {
  return origin_s_ + std::chrono::duration<double>(Clock::now() - start_).count();
}

std::optional<LaneOutcome> GpuPipeline::next(std::optional<double> deadline_s) {
  std::optional<Clock::time_point> deadline;
  if (deadline_s)
    deadline = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*deadline_s - origin_s_));
  std::optional<LaneOutcome> o = lanes_->next(deadline);
  if (!o) return o;
  // On a GPU the time budget is wall-clock time since the tuning began, as Kernel Tuner's
  // time_limit: each result costs what the wall clock moved since the one before. The sum of
  // per-configuration costs (what --simulate replays) undercounts when compiles run in
  // parallel and cache hits report their original compile time: a 30 s budget stopped a
  // 4320-configuration space after 2.6 s (BAT's TRIAD on an H100).
  o->finished_s = now_s();
  o->cost_s = o->finished_s - last_outcome_s_;
  last_outcome_s_ = o->finished_s;
  return o;
}

void GpuPipeline::stop_taking() {
  lanes_->stop_taking();
  // Dropping restarts the compile workers: only when something is left to drop, so that the
  // finalists' compiles after a search that ran out of work find them started.
  if (compiler_->pending() > 0) compiler_->drop_pending();
}

// A compile answered from the cache or shared with another configuration cost no compile worker.
std::pair<double, double> GpuPipeline::pace_costs_s(const LaneOutcome& o) const {
  const bool compiled_here = !o.compiled.result.from_cache && !o.compiled.shared;
  return {compiled_here ? o.compiled.result.compile_ms / 1e3 : 0.0, o.evaluation ? o.eval_ms / 1e3 : 0.0};
}

std::vector<std::pair<Config, GpuEvaluation>> GpuPipeline::remeasure(const std::vector<Config>& finalists) {
  for (const Config& c : finalists) compiler_->submit(c);  // from the cubin cache when it has them
  // The pool hands compiles back as they finish, not in submission order: the finalists are
  // taken in the order their cubins arrive, which is the order they are measured in.
  std::vector<worker::Candidate> candidates;
  while (auto compiled = compiler_->next()) {
    if (!compiled->result.ok)
      throw std::runtime_error(fmt::format("finalist {} no longer compiles: {}",
                                           problem_.space().key(compiled->config), compiled->result.error));
    candidates.push_back(
        {compiled->config, std::move(compiled->result.cubin), std::move(compiled->result.lowered_names)});
  }
  std::vector<GpuEvaluation> evs;
  lanes_->run_on(0, [&](Lane& lane) { evs = lane.local()->remeasure(candidates); });
  std::vector<std::pair<Config, GpuEvaluation>> out;
  for (std::size_t i = 0; i < evs.size(); ++i) out.emplace_back(candidates.at(i).config, std::move(evs[i]));
  return out;
}

double GpuPipeline::copy_bandwidth_gbps(std::size_t bytes) {
  double gbps = 0.0;
  lanes_->run_on(0, [&](Lane& lane) {
    if (GpuWorker* w = lane.local()) gbps = w->copy_bandwidth_gbps(bytes);
  });
  return gbps;
}

void GpuPipeline::release() {
  lanes_.reset();
  compiler_->shutdown();
}

}  // namespace cutune::runner
