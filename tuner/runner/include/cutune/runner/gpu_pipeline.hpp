#pragma once
// The pipeline on GPUs (pipeline.hpp): the NVRTC compile pool ahead of one lane per GPU
// worker (evaluation_lanes.hpp), on the wall clock since the tuning began.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cutune/model/problem.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/evaluation_lanes.hpp"
#include "cutune/runner/pipeline.hpp"

namespace cutune::runner {

class GpuPipeline : public Pipeline {
 public:
  /// Starts a thread per lane factory at once, so that the GPU workers' set-up overlaps the
  /// store and the first compiles; `start` is when the tuning began (the clock's zero).
  GpuPipeline(const KernelProblem& problem, std::vector<EvaluationLanes::LaneFactory> factories,
              CompilePoolOptions compile, std::chrono::steady_clock::time_point start);

  std::vector<DeviceIdentity> identities() override;
  void start(const DeviceIdentity& device) override;
  std::size_t compile_workers() const override { return compiler_->workers(); }
  std::size_t lanes() const override { return lanes_->size(); }
  std::string lane_name(std::size_t lane) const override { return lanes_->name(lane); }
  std::size_t capacity() const override { return lanes_->capacity(); }
  void wait_ready() override { lanes_->wait_ready(); }
  const worker::Ready& ready(std::size_t lane) const override { return lanes_->ready(lane); }

  std::size_t room(std::size_t lookahead) const override;
  void submit(const Config& config) override { compiler_->submit(config); }
  std::size_t pending() const override { return compiler_->pending(); }
  void fed() override { lanes_->fed(); }
  std::optional<LaneOutcome> next(std::optional<double> deadline_s) override;
  void stop_taking() override;
  void set_best_ms(std::optional<double> best_ms) override { lanes_->set_best_ms(best_ms); }
  void set_timeout(std::chrono::milliseconds timeout) override { lanes_->set_timeout(timeout); }
  std::size_t restarts(std::size_t lane) const override { return lanes_->restarts(lane); }
  bool lost(std::size_t lane) const override { return lanes_->lost(lane); }

  void set_clock(double origin_s) override { origin_s_ = last_outcome_s_ = origin_s; }
  double now_s() const override;
  std::pair<double, double> pace_costs_s(const LaneOutcome& outcome) const override;

  std::vector<std::pair<Config, GpuEvaluation>> remeasure(const std::vector<Config>& finalists) override;
  double copy_bandwidth_gbps(std::size_t bytes) override;
  void release() override;
  CompilePool::Stats compile_stats() const override { return compiler_->stats(); }

 private:
  const KernelProblem& problem_;
  CompilePoolOptions compile_options_;
  std::chrono::steady_clock::time_point start_;
  double origin_s_ = 0.0;
  double last_outcome_s_ = 0.0;  ///< when the outcome before arrived (its cost's start)
  std::optional<CompilePool> compiler_;
  // After the pool: the lanes take from it, so they stop first.
  std::optional<EvaluationLanes> lanes_;
};

}  // namespace cutune::runner
