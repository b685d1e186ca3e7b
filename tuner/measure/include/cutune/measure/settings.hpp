#pragma once
// How one configuration is measured: the settings of the stopping criteria, the throttle
// filter and the sampler, as plain data (no CUDA), so that they travel to the GPU worker
// with its set-up request. The classes that use them: stopping.hpp, sampler.hpp.
#include <cstddef>

#include "cutune/model/measurement.hpp"  // SampleTimer

namespace cutune::measure {

/// Confidence level used when none is given: 95%, the usual reporting level.
inline constexpr double default_confidence = 0.95;

struct StoppingSettings {
  /// Below this no statistical exit is taken. 10: nvbench's --min-samples default, and
  /// past n = 9, where the 95% interval first drops both extremes (n = 10 gives
  /// [x(2), x(9)], 97.9% coverage), so a single outlier cannot set the noise.
  std::size_t min_samples = 10;
  /// Hard cap on samples, a second guard beside the time cap for very short kernels.
  std::size_t max_samples = 2000;
  /// Target relative half-width of the median's interval. 0.5% (nvbench's --max-noise
  /// default, though nvbench applies it to stddev/mean): two configurations 1% apart then
  /// have separate intervals, which is the resolution a tuning decision needs.
  double max_rel_noise = 0.005;
  /// Per-configuration time cap in seconds of wall time (thorough measurement of a
  /// finalist). 1 s: nvbench's --min-time is 0.5 s and its timeout 15 s per benchmark;
  /// a tuner re-measures a handful of finalists, so a few seconds in all.
  double time_cap_s = 1.0;
  /// Noise-stabilised exit: over the last `stabilisation_window` samples (all taken at or
  /// after min_samples), the relative noise varied by less than `stabilisation_tolerance`
  /// (its standard deviation over the window, relative to its current value). 5% is
  /// nvbench's tolerance for the same test, and 64 the count of noise values it waits for
  /// before applying it. For a stationary stream the half-width falls like 1/sqrt(n), so over
  /// a window of W it moves by about W / (2 n) and the test fires near
  /// n = W / (2 sqrt(12) tol), about 185 samples, unless the target is met first (on the
  /// 10% lognormal stream of the tests: median 230, 90th percentile 350, over 300 seeds,
  /// with a 1.7% median half-width). A stream whose noise still falls fast keeps going;
  /// one whose spread is constant (50/50 bimodal) stops soon after min_samples + W, and a
  /// drifting one (spread growing like sqrt(n)) near the same n as a stationary one. A
  /// window of 32 stopped noisy streams twice as early but with up to 5% half-width: too
  /// coarse to rank finalists.
  std::size_t stabilisation_window = 64;
  double stabilisation_tolerance = 0.05;
  double confidence = default_confidence;
  friend bool operator==(const StoppingSettings&, const StoppingSettings&) = default;
};

struct ScreeningSettings {
  /// A handful: 5 samples make [min, max] a 94% interval of the median, enough to say a
  /// configuration is far slower; compile time dominates screening, not these samples.
  std::size_t min_samples = 5;
  /// The screening sample count ("screening_samples"): 10, the size of cutune's first
  /// timing loop (before adaptive sampling), so screening costs no more than the timing it
  /// replaces.
  std::size_t max_samples = 10;
  /// Stop once the median's lower interval bound exceeds slower_factor x the best median
  /// so far. 1.5: far beyond any noise the thorough stage could resolve, so such a
  /// configuration cannot be a finalist.
  double slower_factor = 1.5;
  /// Stop after min_samples when the relative noise is already this small (quiet kernel).
  double max_rel_noise = 0.01;
  /// Seconds of wall time per configuration while searching.
  double time_cap_s = 0.1;
  double confidence = default_confidence;
  friend bool operator==(const ScreeningSettings&, const ScreeningSettings&) = default;
};

struct ThrottleSettings {
  /// A sample whose SM clock is below this fraction of the reference clock is discarded.
  /// 0.75: nvbench's --throttle-threshold default. Not 0.9: under sustained load boost
  /// clocks settle well below the rated peak, and that settled clock is the operating
  /// point a tuning is for; only a real throttle (thermal, power brake) falls this far.
  double min_clock_fraction = 0.75;
  /// The device's rated SM clock in MHz (CU_DEVICE_ATTRIBUTE_CLOCK_RATE / 1000); 0 when
  /// unknown. The reference is the larger of this and the highest clock seen, so without
  /// it a stream that starts throttled is only caught once a faster clock is seen: pass it.
  double reference_clock_mhz = 0;
  /// Request a back-off after this many consecutive throttled samples. 1: nvbench sleeps
  /// after every throttled sample.
  std::size_t back_off_after = 1;
  /// How long the GPU loop should sleep when asked: nvbench's --throttle-recovery-delay.
  double back_off_s = 0.05;
  friend bool operator==(const ThrottleSettings&, const ThrottleSettings&) = default;
};

struct SamplerSettings {
  /// Flush the L2 before each sample. Off when the caller rotates argument sets that
  /// together exceed the L2 (then each set is cold anyway) or measures warm on purpose.
  bool flush_l2 = true;
  /// The flush reads this many L2 sizes (L2Flush). 1.5, measured on an H100 with
  /// studies/bench_flush.py (results/nvidia-h100-80gb-hbm3/flush.json): over four kernels
  /// whose data fit in L2, medians after 1.5x were within 0.5% of those after 3x, after 1x
  /// 0.6-0.9% above them, after 0.5x 10-30% off; 2x cost 0.07 ms more per configuration of
  /// 7 samples than 1.5x.
  double flush_l2_multiple = 1.5;
  /// Launch sequences before the first sample. 1: it loads the module's code and touches
  /// the data once; the samples then see a steady state (nvbench does the same).
  int warmup_launches = 1;
  /// Probe the SM clock after each sample (for the throttle filter). About 4 us per sample.
  bool probe_clock = true;
  /// What times a sample. Events: a CUDA event pair around the launches (nvbench's
  /// method). Activity: the GPU's own start/end timestamps of the work (CUPTI). Measured on
  /// an H100 (results/nvidia-h100-80gb-hbm3/measurement.json, fidelity, session 6): against
  /// ncu's gpu__time_duration, events read a constant 0.74-0.99 us long and activity 1.3-1.6
  /// us short, so below ~100 us neither is within 2% (ncu counts part of the launch that
  /// activity does not); from 186 us up events are within 0.33%. Activity costs a forced
  /// CUPTI flush per sample (screening 6.1 ms per configuration against 0.8), so events stay
  /// the default.
  SampleTimer timer = SampleTimer::Events;
  ThrottleSettings throttle;
  friend bool operator==(const SamplerSettings&, const SamplerSettings&) = default;
};

}  // namespace cutune::measure
