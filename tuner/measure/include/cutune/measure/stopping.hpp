#pragma once
// When to stop sampling one configuration, as small classes over a stream of
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

#include "cutune/measure/settings.hpp"
#include "cutune/measure/statistics.hpp"
#include "cutune/model/measurement.hpp"  // StopReason

namespace cutune::measure {

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
