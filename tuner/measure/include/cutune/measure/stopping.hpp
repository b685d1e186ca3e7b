#pragma once
// When to stop sampling one configuration (issue 4), as small classes over a stream of
// samples, after nvbench's stopping criteria (nvbench/detail/stdrel_criterion.cxx): pure
// logic, so they are tested on synthetic streams without a GPU. The GPU loop feeds each
// sample (and the wall time it has spent) and asks done().
//
// Defaults: chosen from nvbench's published defaults and the synthetic streams of
// tests/test_measure.cpp, then checked on the H200 (results/nvidia-h200/measurement.json,
// session 2): reduction n = 2^24 (20 us), 720 configurations: screening stopped 336 as
// clearly slower, 330 at the sample cap, 54 converged (median 9 samples, 0.88 ms each);
// the thorough finalists converged at 0.5% in 25-37 samples (2.3 ms each); five tunings
// from scratch agreed within 0.24%. Each default still says why it is what it is.
#include <cstddef>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "cutune/measure/statistics.hpp"

namespace cutune::measure {

enum class StopReason {
  none,              ///< keep sampling
  converged,         ///< the median's relative interval half-width reached the target
  noise_stabilised,  ///< the noise stopped improving: an inherently noisy stream
  time_cap,          ///< the per-configuration time budget is spent
  sample_cap,        ///< max_samples taken
  clearly_slower,    ///< screening: certainly slower than the best so far
};

/// "none", "converged", "noise stabilised", "time cap", "sample cap", "clearly slower".
std::string_view to_string(StopReason r);

/// Samples of one configuration, in milliseconds, with the time spent on them: the state
/// every criterion shares. Keeps the raw samples in arrival order and a sorted copy (kept
/// sorted by insertion, so each add costs O(n), not a sort).
class SampleStream {
 public:
  explicit SampleStream(double confidence = default_confidence);

  void add(double sample_ms);
  /// Wall time spent on this configuration so far (samples, L2 flushes, syncs, back-offs,
  /// discarded samples). The time cap uses the larger of this and the sum of the samples,
  /// so a stream fed without wall time still stops.
  void set_elapsed_s(double wall_s);

  std::size_t count() const { return samples_.size(); }
  double elapsed_s() const;
  const std::vector<double>& samples() const { return samples_; }
  const std::vector<double>& sorted() const { return sorted_; }
  double median() const;  ///< 0 when empty
  /// Interval of the median at the stream's confidence. Throws when empty.
  Interval ci() const;
  /// Relative half-width of the median's interval, (high - low) / (2 median): 0 for one
  /// sample of spread 0, +infinity when empty or the median is not positive.
  double rel_noise() const;
  /// Full statistics. Throws std::invalid_argument when empty.
  Summary summary() const;
  double confidence() const { return confidence_; }

 private:
  double confidence_;
  std::vector<double> samples_, sorted_;
  double sum_ms_ = 0, wall_s_ = 0;
};

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
  /// drifting one (spread growing like sqrt(n)) near the same n as a stationary one. A window of 32 stopped noisy streams twice as early but with up to
  /// 5% half-width: too coarse to rank finalists.
  std::size_t stabilisation_window = 64;
  double stabilisation_tolerance = 0.05;
  double confidence = default_confidence;
};

/// The thorough criterion: min_samples, then converged (relative noise <= target) or noise
/// stabilised; time and sample caps at any point. Throws std::invalid_argument on
/// inconsistent settings (min_samples > max_samples, window < 2, non-positive target).
class NoiseCriterion {
 public:
  explicit NoiseCriterion(StoppingSettings settings = {});

  void add(double sample_ms);
  void set_elapsed_s(double wall_s) { stream_.set_elapsed_s(wall_s); }

  bool done() const { return reason() != StopReason::none; }
  /// Why it stopped; when several hold, the most informative: converged, noise
  /// stabilised, sample cap, time cap.
  StopReason reason() const;
  /// The noise has stopped improving (regardless of min_samples and caps).
  bool stabilised() const;

  const SampleStream& stream() const { return stream_; }
  Summary summary() const { return stream_.summary(); }
  const StoppingSettings& settings() const { return settings_; }

 private:
  StoppingSettings settings_;
  SampleStream stream_;
  std::deque<double> noise_window_;  ///< relative noise after each of the last W adds
};

struct ScreeningSettings {
  /// A handful: 5 samples make [min, max] a 94% interval of the median, enough to say a
  /// configuration is far slower; compile time dominates screening, not these samples.
  std::size_t min_samples = 5;
  /// The screening sample count ("screening_samples"): 10, the size of cutune's issue-2
  /// timing loop, so screening costs no more than the timing it replaces.
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
};

/// The cheap criterion used while searching: clearly slower than the best so far, quiet
/// enough, the screening sample count, or the time cap.
class ScreeningCriterion {
 public:
  /// `best_median_ms`: the best screening median so far; none for the first configuration.
  explicit ScreeningCriterion(ScreeningSettings settings = {},
                              std::optional<double> best_median_ms = std::nullopt);

  void add(double sample_ms) { stream_.add(sample_ms); }
  void set_elapsed_s(double wall_s) { stream_.set_elapsed_s(wall_s); }

  bool done() const { return reason() != StopReason::none; }
  /// Priority: clearly slower, converged, sample cap, time cap.
  StopReason reason() const;

  const SampleStream& stream() const { return stream_; }
  Summary summary() const { return stream_.summary(); }

 private:
  ScreeningSettings settings_;
  std::optional<double> best_median_ms_;
  SampleStream stream_;
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
};

/// Discards samples taken while the GPU was throttled and says when to back off. Pure
/// logic: the GPU loop measures the clock, feeds it here, and sleeps when asked.
class ThrottleFilter {
 public:
  explicit ThrottleFilter(ThrottleSettings settings = {});

  /// Records one sample with the SM clock it ran at; true when it should be kept.
  bool add(double sample_ms, double sm_clock_mhz);
  /// Back-off requested: back_off_after consecutive throttled samples since the last one.
  bool should_back_off() const;
  /// The caller slept for back_off_s(); clears the request.
  void backed_off();

  double reference_clock_mhz() const;
  double back_off_s() const { return settings_.back_off_s; }
  std::size_t accepted() const { return accepted_; }
  std::size_t back_offs() const { return back_offs_; }
  /// Discarded samples in arrival order, kept for the record.
  const std::vector<double>& discarded_ms() const { return discarded_ms_; }

 private:
  ThrottleSettings settings_;
  double max_seen_mhz_ = 0;
  std::size_t consecutive_ = 0, accepted_ = 0, back_offs_ = 0;
  std::vector<double> discarded_ms_;
};

}  // namespace cutune::measure
