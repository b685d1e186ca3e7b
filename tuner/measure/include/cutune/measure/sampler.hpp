#pragma once
// Cold measurement of one configuration, after nvbench's measure_cold: a warm-up
// (which also absorbs the module load), then samples of one event-timed launch sequence
// each. Per sample: L2 flush (or the next rotated argument set, chosen by the caller),
// blocking kernel, start event, the launches, stop event, clock probe, release, sync.
// A stopping criterion decides how many samples; throttled samples are discarded with a
// back-off.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cutune/cuda/activity.hpp"
#include "cutune/measure/benchmark.hpp"
#include "cutune/measure/gpu_helpers.hpp"
#include "cutune/measure/settings.hpp"
#include "cutune/measure/stopping.hpp"
#include "cutune/model/measurement.hpp"  // SampleSet

namespace cutune::measure {

class Sampler {
 public:
  /// `l2_bytes`, `sm_count`: the device's L2 size and SMs (for the flush). `rated_clock_mhz`:
  /// the reference clock of the throttle filter (0 = the highest clock seen).
  Sampler(std::size_t l2_bytes, int sm_count, double rated_clock_mhz, SamplerSettings settings = {});

  const SamplerSettings& settings() const { return settings_; }
  /// Work queued before every sample, ahead of the L2 flush and outside the timed interval:
  /// giving arguments the kernel reads and writes their initial data again, so that every
  /// sample starts from the same inputs (and the flush then evicts what the copy touched).
  void set_before_sample(std::function<void()> before) { before_sample_ = std::move(before); }

  /// Warm-up launches of `seq`, then a synchronize.
  void warm_up(const LaunchSequence& seq);
  /// One cold sample: {milliseconds, SM clock in MHz (0 without a probe)}.
  struct Timed {
    double ms = 0, clock_mhz = 0;
    bool block_timed_out = false;
    bool timer_fell_back = false;  ///< activity timing asked, no record: events used
  };
  /// What times the samples (settings().timer, once activity timing was found available).
  SampleTimer timer() const { return timer_; }
  Timed sample(const LaunchSequence& seq);
  /// The same for any work `enqueue` queues on the legacy default stream (a library call
  /// such as CUB or cuBLAS), so that a comparison times both sides alike.
  Timed sample_call(const std::function<void()>& enqueue);
  /// The event pair's own interval: the median of `samples` samples of no work at all, taken
  /// exactly like a sample (flush, blocking kernel, start, stop, probe). What a launch adds to
  /// an event-timed sample beyond the GPU's own duration of it is of this order; reported
  /// beside small kernels' medians (results/nvidia-h100-80gb-hbm3/measurement.json,
  /// fidelity), never subtracted from them.
  double timer_floor_ms(std::size_t samples = 51);

  /// Warm-up, then samples until `criterion` is done. `rotation` holds one launch sequence
  /// per argument set (size 1 without rotation); sample i uses rotation[i % size].
  /// Criterion: NoiseCriterion or ScreeningCriterion (add, set_elapsed_s, done, reason).
  /// `warmed_up`: the caller has just launched rotation.front() (a verification launch),
  /// which did all a warm-up does (module loaded, code and data touched): none is added.
  template <class Criterion>
  SampleSet measure(const std::vector<LaunchSequence>& rotation, Criterion& criterion, bool warmed_up = false);

  /// The thorough stage's interleaving: round-robin one sample per candidate that is not
  /// done yet, back to back, so that drift (clocks, temperature) affects all alike.
  std::vector<SampleSet> measure_interleaved(const std::vector<std::vector<LaunchSequence>>& candidates,
                                             std::vector<NoiseCriterion>& criteria);

 private:
  using Clock = std::chrono::steady_clock;
  /// Takes one sample of `seq` into `out`, through the throttle filter; sleeps when it asks.
  template <class Criterion>
  void take(const LaunchSequence& seq, Criterion& criterion, ThrottleFilter& filter, SampleSet& out);

  SamplerSettings settings_;
  std::function<void()> before_sample_;
  double rated_clock_mhz_;
  GpuHelpers helpers_;
  std::optional<L2Flush> flush_;
  cuda::Event start_, stop_;  ///< reused by every sample (each sample ends synchronised)
  cuda::ActivityTrace* activity_ = nullptr;  ///< set when samples are activity-timed
  SampleTimer timer_ = SampleTimer::Events;
};

template <class Criterion>
void Sampler::take(const LaunchSequence& seq, Criterion& criterion, ThrottleFilter& filter,
                   SampleSet& out) {
  const Timed t = sample(seq);
  out.timer = timer_;
  if (t.block_timed_out) ++out.block_timeouts;
  if (t.timer_fell_back) ++out.timer_fallbacks;
  // Without a probe every sample is kept (clock 0 would read as throttled).
  if (!settings_.probe_clock || filter.add(t.ms, t.clock_mhz)) {
    criterion.add(t.ms);
    out.samples_ms.push_back(t.ms);
    if (settings_.probe_clock) out.clocks_mhz.push_back(t.clock_mhz);
  } else {
    out.discarded_ms.push_back(t.ms);
    if (filter.should_back_off()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(filter.back_off_s()));
      filter.backed_off();
      ++out.back_offs;
    }
  }
}

template <class Criterion>
SampleSet Sampler::measure(const std::vector<LaunchSequence>& rotation, Criterion& criterion, bool warmed_up) {
  SampleSet out;
  const auto t0 = Clock::now();
  ThrottleSettings ts = settings_.throttle;
  ts.reference_clock_mhz = rated_clock_mhz_;
  ThrottleFilter filter(ts);
  if (!warmed_up) warm_up(rotation.front());
  for (std::size_t i = 0; !criterion.done(); ++i) {
    take(rotation[i % rotation.size()], criterion, filter, out);
    criterion.set_elapsed_s(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  out.reason = criterion.reason();
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out;
}

}  // namespace cutune::measure
