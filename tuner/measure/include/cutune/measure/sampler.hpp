#pragma once
// Cold measurement of one configuration (issue 4), after nvbench's measure_cold: a warm-up
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
#include "cutune/measure/stopping.hpp"

namespace cutune::measure {

struct SamplerSettings {
  /// Flush the L2 before each sample. Off when the caller rotates argument sets that
  /// together exceed the L2 (then each set is cold anyway) or measures warm on purpose.
  bool flush_l2 = true;
  /// The flush reads this many L2 sizes (L2Flush). 1.5, measured on an H100 with
  /// scripts/bench_flush.py (results/nvidia-h100-80gb-hbm3/flush.json): over four kernels
  /// whose data fit in L2, medians after 1.5x were within 0.5% of those after 3x, after 1x
  /// 0.6-0.9% above them, after 0.5x 10-30% off; 2x cost 0.07 ms more per configuration of
  /// 7 samples than 1.5x.
  double flush_l2_multiple = 1.5;
  /// Launch sequences before the first sample. 1: it loads the module's code and touches
  /// the data once; the samples then see a steady state (nvbench does the same).
  int warmup_launches = 1;
  /// Probe the SM clock after each sample (for the throttle filter). About 4 us per sample.
  bool probe_clock = true;
  /// What times a sample. "events": a CUDA event pair around the launches (issue 4's
  /// method). "activity": the GPU's own start/end timestamps of the work (CUPTI). Measured on
  /// an H100 (results/nvidia-h100-80gb-hbm3/measurement.json, fidelity, session 6): against
  /// ncu's gpu__time_duration, events read a constant 0.74-0.99 us long and activity 1.3-1.6
  /// us short, so below ~100 us neither is within 2% (ncu counts part of the launch that
  /// activity does not); from 186 us up events are within 0.33%. Activity costs a forced
  /// CUPTI flush per sample (screening 6.1 ms per configuration against 0.8), so events stay
  /// the default.
  std::string timer = "events";
  ThrottleSettings throttle;
};

/// What measuring one configuration produced.
struct SampleSet {
  std::vector<double> samples_ms;    ///< kept samples, in arrival order
  std::vector<double> clocks_mhz;    ///< SM clock after each kept sample (empty without probe)
  std::vector<double> discarded_ms;  ///< samples taken while throttled
  std::size_t back_offs = 0;
  std::size_t block_timeouts = 0;    ///< samples whose queueing outlasted the blocking kernel
  StopReason reason = StopReason::none;
  double wall_ms = 0;                ///< measurement time, warm-up and back-offs included
  std::string timer;                 ///< "activity" or "events": what timed the samples
  /// Activity-timed samples for which CUPTI delivered no record, timed by the events instead.
  std::size_t timer_fallbacks = 0;
};

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
  /// "activity" or "events": what times the samples (settings().timer resolved).
  const std::string& timer() const { return timer_; }
  Timed sample(const LaunchSequence& seq);
  /// The same for any work `enqueue` queues on the legacy default stream (a library call
  /// such as CUB or cuBLAS), so that a comparison times both sides alike.
  Timed sample_call(const std::function<void()>& enqueue);
  /// The event pair's own interval: the median of `samples` samples of no work at all, taken
  /// exactly like a sample (flush, blocking kernel, start, stop, probe). What a launch adds to
  /// an event-timed sample beyond the GPU's own duration of it is of this order; reported
  /// beside small kernels' medians (issue 4's fidelity), never subtracted from them.
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
  std::string timer_;
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
