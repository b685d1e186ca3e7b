#pragma once
// The pipeline of a replay (pipeline.hpp; `tune --simulate`): a recorded space answers every
// evaluation with its recorded result, and each costs its recorded time on a simulated clock.
// Nothing is compiled and no GPU is touched. Its lanes are the GPUs being rehearsed.
//
// Without compile workers each configuration is compiled and benchmarked in series on its
// lane (Kernel Tuner's runner): a lane holds one, which costs its whole recorded cost, and the
// loop is asked for more only when nothing submitted waits for a lane, as many as keep
// max(8, lanes) unanswered (the loop asks a batch of 8, evaluates it in order, asks again).
//
// With N compile workers it is cutune's tuning loop: N compiles at once ahead of the lanes,
// each taking the recorded compile share of its cost (search::compile_and_evaluate_s), and a
// lane then spending the rest; a lane holds two (one running, one staged, as a GPU worker
// does), and the loop keeps its lookahead submitted. At the time budget what is queued,
// compiling or compiled is dropped and what the lanes hold finishes, as on GPUs.
//
// Events at the same simulated time: a compile finishes before an evaluation, compiles in the
// order they started, evaluations in lane order (in series: in the order they started). This
// is the event order of search::simulate, which `cutune score` runs: a replay and a score of
// the same recording, strategy and seed make the same proposals and results.
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "cutune/runner/pipeline.hpp"

namespace cutune::runner {

class ReplayPipeline : public Pipeline {
 public:
  /// `recorded` must outlive the pipeline; `device`: the recording's GPU; `lanes` >= 1.
  ReplayPipeline(const search::RecordedSpace& recorded, DeviceIdentity device, std::size_t lanes,
                 std::size_t compile_workers);

  std::vector<DeviceIdentity> identities() override { return std::vector<DeviceIdentity>(lanes_.size(), device_); }
  void start(const DeviceIdentity&) override {}
  std::size_t compile_workers() const override { return compile_workers_; }
  std::size_t lanes() const override { return lanes_.size(); }
  std::string lane_name(std::size_t lane) const override;
  std::size_t capacity() const override { return lanes_.size() * slots_; }
  void wait_ready() override {}
  const worker::Ready& ready(std::size_t) const override { return ready_; }

  std::size_t room(std::size_t lookahead) const override;
  void submit(const Config& config) override;
  std::size_t pending() const override { return queued_.size() + compiling_.size() + compiled_.size(); }
  void fed() override {}
  std::optional<LaneOutcome> next(std::optional<double> deadline_s) override;
  void stop_taking() override;
  void set_best_ms(std::optional<double>) override {}
  void set_timeout(std::chrono::milliseconds) override {}
  std::size_t restarts(std::size_t) const override { return 0; }
  bool lost(std::size_t) const override { return false; }

  void set_clock(double origin_s) override { now_s_ = origin_s; }
  double now_s() const override { return now_s_; }
  std::pair<double, double> pace_costs_s(const LaneOutcome& outcome) const override;
  std::optional<search::RecordedResult> recorded_result(const Config& config) const override;

  std::vector<std::pair<Config, GpuEvaluation>> remeasure(const std::vector<Config>&) override { return {}; }
  double copy_bandwidth_gbps(std::size_t) override { return 0.0; }
  void release() override {}
  CompilePool::Stats compile_stats() const override { return {}; }

 private:
  struct Item {
    Config config;
    const search::RecordedResult* result = nullptr;
    double compile_s = 0.0, evaluate_s = 0.0;
    std::uint64_t seq = 0;  ///< submission order: ties in series finish in the order they started
  };
  struct Compiling {
    double finish_s;
    Item item;
    bool operator>(const Compiling& o) const {
      return finish_s != o.finish_s ? finish_s > o.finish_s : item.seq > o.item.seq;
    }
  };
  struct Lane {
    std::deque<Item> held;  ///< front: running since started_s
    double started_s = 0.0;
  };
  bool in_series() const { return compile_workers_ == 0; }
  /// Compile workers take what is queued, lanes with room what is compiled (in series: queued).
  void start_work();
  LaneOutcome outcome_of(const Item& item, std::size_t lane) const;

  const search::RecordedSpace& recorded_;
  DeviceIdentity device_;
  std::size_t compile_workers_, slots_;
  worker::Ready ready_;
  std::deque<Item> queued_;  ///< submitted, not compiling yet
  std::priority_queue<Compiling, std::vector<Compiling>, std::greater<>> compiling_;
  std::deque<Item> compiled_;  ///< waiting for a lane's slot
  std::vector<Lane> lanes_;
  double now_s_ = 0.0;
  std::uint64_t submitted_ = 0;
  bool taking_ = true;
};

}  // namespace cutune::runner
