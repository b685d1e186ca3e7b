#pragma once
// Cold measurement of one configuration (issue 4), after nvbench's measure_cold: a warm-up
// (which also absorbs the module load), then samples of one event-timed launch sequence
// each. Per sample: L2 flush (or the next rotated argument set, chosen by the caller),
// blocking kernel, start event, the launches, stop event, clock probe, release, sync.
// A stopping criterion decides how many samples; throttled samples are discarded with a
// back-off.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
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
  /// an H100 (results/nvidia-h100-80gb-hbm3/measurement.json, fidelity): against ncu's
  /// gpu__time_duration, events read 0.7-1.8 us long and activity 0.9-1.4 us short, so for
  /// a 5 us kernel neither is within 2% (ncu counts part of the launch that activity does
  /// not); above ~150 us both are. Activity costs a forced CUPTI flush per sample (screening
  /// 6.1 ms per configuration against 0.9), so events stay the default.
  std::string timer = "events";
  /// Samples queued behind one blocking kernel at most (sample_batch). 1, batching off: on
  /// an H100 a batched sample of a 20 us spin read 0.7 us (3%) longer than the same sample
  /// taken alone (tests/test_runner.cpp, "a batch of samples ..."), and the throughput
  /// bench's winners about as much, while batching saved only some 0.05 ms of a
  /// configuration's 7 samples (results/nvidia-h100-80gb-hbm3/README.md, issue 5).
  std::size_t max_batch = 1;
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
  /// Several cold samples queued behind one blocking kernel and synchronised once (at most
  /// GpuHelpers::kProbeSlots): each has its own flush, events and probe, as sample() does,
  /// without one host round trip per sample (issue 5). The activity timer takes them one
  /// at a time.
  std::vector<Timed> sample_batch(const std::vector<const LaunchSequence*>& seqs);
  std::vector<Timed> sample_calls(const std::vector<std::function<void()>>& enqueues);

  /// Warm-up, then samples until `criterion` is done. `rotation` holds one launch sequence
  /// per argument set (size 1 without rotation); sample i uses rotation[i % size].
  /// Criterion: NoiseCriterion or ScreeningCriterion (add, set_elapsed_s, done, reason).
  /// `warmed_up`: the caller has just launched rotation.front() (a verification launch),
  /// which did all a warm-up does (module loaded, code and data touched): none is added.
  /// Samples the criterion is certain to ask for (below its minimum) are queued as one
  /// batch (at most settings().max_batch), bounded by its time cap at `expected_ms` per sample (0: unknown, then the
  /// first sample is taken alone to learn it).
  template <class Criterion>
  SampleSet measure(const std::vector<LaunchSequence>& rotation, Criterion& criterion, bool warmed_up = false,
                    double expected_ms = 0.0);

  /// The thorough stage's interleaving: round-robin one sample per candidate that is not
  /// done yet, back to back, so that drift (clocks, temperature) affects all alike.
  std::vector<SampleSet> measure_interleaved(const std::vector<std::vector<LaunchSequence>>& candidates,
                                             std::vector<NoiseCriterion>& criteria);

 private:
  using Clock = std::chrono::steady_clock;
  /// Takes one sample of `seq` into `out`, through the throttle filter; sleeps when it asks.
  template <class Criterion>
  void take(const LaunchSequence& seq, Criterion& criterion, ThrottleFilter& filter, SampleSet& out);
  /// Files one timed sample into `out` and the criterion, through the throttle filter.
  template <class Criterion>
  void file(const Timed& t, Criterion& criterion, ThrottleFilter& filter, SampleSet& out);

  SamplerSettings settings_;
  double rated_clock_mhz_;
  GpuHelpers helpers_;
  std::optional<L2Flush> flush_;
  /// Event pairs of a batch, reused by every batch (each batch ends synchronised).
  std::vector<std::unique_ptr<cuda::Event>> starts_, stops_;
  cuda::ActivityTrace* activity_ = nullptr;  ///< set when samples are activity-timed
  std::string timer_;
};

template <class Criterion>
void Sampler::take(const LaunchSequence& seq, Criterion& criterion, ThrottleFilter& filter,
                   SampleSet& out) {
  file(sample(seq), criterion, filter, out);
}

template <class Criterion>
void Sampler::file(const Timed& t, Criterion& criterion, ThrottleFilter& filter, SampleSet& out) {
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
SampleSet Sampler::measure(const std::vector<LaunchSequence>& rotation, Criterion& criterion, bool warmed_up,
                           double expected_ms) {
  SampleSet out;
  const auto t0 = Clock::now();
  ThrottleSettings ts = settings_.throttle;
  ts.reference_clock_mhz = rated_clock_mhz_;
  ThrottleFilter filter(ts);
  if (!warmed_up) warm_up(rotation.front());
  std::vector<const LaunchSequence*> batch;
  for (std::size_t i = 0; !criterion.done();) {
    // How many to queue at once: what the criterion will take anyway, as many as fit in
    // its time cap at the expected time each; one when nothing is known yet.
    std::size_t k = std::max<std::size_t>(1, criterion.certain_remaining());
    const double per_ms = !out.samples_ms.empty() ? out.samples_ms.back() : expected_ms;
    if (per_ms <= 0.0)
      k = 1;
    else
      k = std::clamp<std::size_t>(static_cast<std::size_t>(criterion.time_left_s() * 1e3 / per_ms), 1, k);
    k = std::min({k, settings_.max_batch, GpuHelpers::kProbeSlots});
    batch.clear();
    for (std::size_t j = 0; j < k; ++j) batch.push_back(&rotation[(i + j) % rotation.size()]);
    i += k;
    for (const Timed& t : sample_batch(batch)) file(t, criterion, filter, out);
    criterion.set_elapsed_s(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  out.reason = criterion.reason();
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out;
}

}  // namespace cutune::measure
