#include "cutune/runner/replay_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "cutune/model/errors.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/search/simulation.hpp"

namespace cutune::runner {

namespace {
/// Proposals the tuning loop asks for at a time (Tuning::feed): in series a lane's batch.
constexpr std::size_t kBatch = 8;
}  // namespace

ReplayPipeline::ReplayPipeline(const search::RecordedSpace& recorded, DeviceIdentity device, std::size_t lanes,
                               std::size_t compile_workers)
    : recorded_(recorded),
      device_(std::move(device)),
      compile_workers_(compile_workers),
      // In series a lane compiles and benchmarks one configuration at a time; behind compile
      // workers it holds a GPU worker's two (GpuWorker::kMaxInFlight).
      slots_(compile_workers == 0 ? 1 : GpuWorker::kMaxInFlight),
      lanes_(lanes) {
  if (lanes == 0) throw InputError("a replay needs at least one lane (GPU)");
}

std::string ReplayPipeline::lane_name(std::size_t lane) const { return fmt::format("GPU {} (replayed)", lane); }

std::size_t ReplayPipeline::room(std::size_t lookahead) const {
  if (!in_series()) {
    const std::size_t ahead = pending();
    return ahead < lookahead ? lookahead - ahead : 0;
  }
  // In series, asked only when a lane is free and nothing waits for one.
  std::size_t running = 0;
  for (const Lane& l : lanes_) running += l.held.size();
  if (!queued_.empty() || running == lanes_.size()) return 0;
  const std::size_t window = std::max(kBatch, lanes_.size());
  return running < window ? window - running : 0;
}

void ReplayPipeline::submit(const Config& config) {
  const search::RecordedResult* r = recorded_.find(config);
  if (!r)  // the session checked validity, and valid means recorded
    throw std::logic_error(
        fmt::format("{}: configuration {} is not recorded", recorded_.name(), recorded_.space().key(config)));
  Item item{config, r, 0.0, r->cost_s, submitted_++};
  // In series the lane spends the whole cost; behind compile workers the recorded compile share
  // is theirs.
  if (!in_series()) std::tie(item.compile_s, item.evaluate_s) = search::compile_and_evaluate_s(*r, recorded_.cost_unit());
  queued_.push_back(std::move(item));
}

void ReplayPipeline::stop_taking() {
  taking_ = false;
  queued_.clear();
  compiling_ = {};
  compiled_.clear();
}

void ReplayPipeline::start_work() {
  if (!taking_) return;
  std::deque<Item>& ready_for_lanes = in_series() ? queued_ : compiled_;
  while (compiling_.size() < compile_workers_ && !queued_.empty()) {
    Item item = std::move(queued_.front());
    queued_.pop_front();
    const double finish_s = now_s_ + item.compile_s;
    compiling_.push(Compiling{finish_s, std::move(item)});
  }
  for (Lane& l : lanes_) {
    while (l.held.size() < slots_ && !ready_for_lanes.empty()) {
      if (l.held.empty()) l.started_s = now_s_;
      l.held.push_back(std::move(ready_for_lanes.front()));
      ready_for_lanes.pop_front();
    }
  }
}

std::optional<LaneOutcome> ReplayPipeline::next(std::optional<double>) {
  while (true) {
    start_work();
    // The next event: an evaluation or a compile finishing (a compile first at the same time).
    std::optional<std::size_t> finishing;
    double finish_s = INFINITY;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const Lane& l = lanes_[i];
      if (l.held.empty()) continue;
      const double f = l.started_s + l.held.front().evaluate_s;
      const bool earlier = f < finish_s || (in_series() && finishing && f == finish_s &&
                                            l.held.front().seq < lanes_[*finishing].held.front().seq);
      if (earlier) finishing = i, finish_s = f;
    }
    if (!compiling_.empty() && compiling_.top().finish_s <= finish_s) finishing.reset();
    if (!finishing && compiling_.empty()) return std::nullopt;
    if (!finishing) {
      now_s_ = compiling_.top().finish_s;
      Compiling c = compiling_.top();
      compiling_.pop();
      compiled_.push_back(std::move(c.item));
      continue;
    }
    now_s_ = finish_s;
    Lane& l = lanes_[*finishing];
    Item done = std::move(l.held.front());
    l.held.pop_front();
    l.started_s = now_s_;  // the one staged behind it starts now
    return outcome_of(done, *finishing);
  }
}

LaneOutcome ReplayPipeline::outcome_of(const Item& item, std::size_t lane) const {
  const search::RecordedResult& r = *item.result;
  LaneOutcome o;
  o.compiled.config = item.config;
  o.compiled.result.ok = true;
  o.compiled.result.from_cache = true;  // nothing compiled here
  o.evaluation.emplace();
  o.evaluation->status = r.observation.valid ? Status::Ok : Status::Runtime;
  if (!r.observation.valid) o.evaluation->error = "failed in the recording";
  o.eval_ms = item.evaluate_s * 1e3;
  o.lane = lane;
  o.finished_s = now_s_;
  o.cost_s = r.cost_s;
  o.recorded = r;
  return o;
}

std::pair<double, double> ReplayPipeline::pace_costs_s(const LaneOutcome& outcome) const {
  return search::compile_and_evaluate_s(*outcome.recorded, recorded_.cost_unit());
}

std::optional<search::RecordedResult> ReplayPipeline::recorded_result(const Config& config) const {
  const search::RecordedResult* r = recorded_.find(config);
  return r ? std::optional<search::RecordedResult>(*r) : std::nullopt;
}

}  // namespace cutune::runner
