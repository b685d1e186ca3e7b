#include "cutune/measure/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cutune::measure {

// ---- SampleStream ----

SampleStream::SampleStream(double confidence) : confidence_(confidence) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument("SampleStream: confidence must be in (0, 1)");
}

void SampleStream::add(double sample_ms) {
  samples_.push_back(sample_ms);
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), sample_ms), sample_ms);
  sum_ms_ += sample_ms;
}

void SampleStream::set_elapsed_s(double wall_s) { wall_s_ = wall_s; }

double SampleStream::elapsed_s() const { return std::max(wall_s_, sum_ms_ * 1e-3); }

double SampleStream::median() const { return sorted_.empty() ? 0.0 : sorted_median(sorted_); }

Interval SampleStream::ci() const { return median_ci(sorted_, confidence_); }

double SampleStream::rel_noise() const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (sorted_.empty()) return inf;
  const Interval i = ci();
  const double width = i.high - i.low;
  const double m = median();
  if (m <= 0.0) return width == 0.0 ? 0.0 : inf;
  return width / (2.0 * m);
}

Summary SampleStream::summary() const { return summarize(sorted_, confidence_); }

// ---- NoiseCriterion ----

NoiseCriterion::NoiseCriterion(StoppingSettings settings)
    : settings_(settings), stream_(settings.confidence) {
  if (settings_.min_samples > settings_.max_samples)
    throw std::invalid_argument("NoiseCriterion: min_samples > max_samples");
  if (settings_.stabilisation_window < 2)
    throw std::invalid_argument("NoiseCriterion: stabilisation_window must be at least 2");
  if (!(settings_.max_rel_noise > 0.0))
    throw std::invalid_argument("NoiseCriterion: max_rel_noise must be positive");
}

void NoiseCriterion::add(double sample_ms) {
  stream_.add(sample_ms);
  // Only noise from min_samples on enters the window: below it the interval is [min, max]
  // or close to it, and its jumps say nothing about the stream.
  if (stream_.count() < std::max<std::size_t>(settings_.min_samples, 2)) return;
  noise_window_.push_back(stream_.rel_noise());
  if (noise_window_.size() > settings_.stabilisation_window) noise_window_.pop_front();
}

bool NoiseCriterion::stabilised() const {
  if (noise_window_.size() < settings_.stabilisation_window) return false;
  const double current = noise_window_.back();
  if (!std::isfinite(current)) return false;
  if (current == 0.0) return true;  // no spread at all: nothing left to improve
  double mean = 0;
  for (double v : noise_window_) mean += v;
  mean /= static_cast<double>(noise_window_.size());
  double ss = 0;
  for (double v : noise_window_) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / static_cast<double>(noise_window_.size() - 1));
  return sd / current < settings_.stabilisation_tolerance;
}

StopReason NoiseCriterion::reason() const {
  const std::size_t n = stream_.count();
  if (n >= settings_.min_samples && n > 0) {
    if (stream_.rel_noise() <= settings_.max_rel_noise) return StopReason::converged;
    if (stabilised()) return StopReason::noise_stabilised;
  }
  if (n >= settings_.max_samples) return StopReason::sample_cap;
  if (stream_.elapsed_s() >= settings_.time_cap_s) return StopReason::time_cap;
  return StopReason::none;
}

// ---- ScreeningCriterion ----

ScreeningCriterion::ScreeningCriterion(ScreeningSettings settings,
                                       std::optional<double> best_median_ms)
    : settings_(settings), best_median_ms_(best_median_ms), stream_(settings.confidence) {
  if (settings_.min_samples > settings_.max_samples)
    throw std::invalid_argument("ScreeningCriterion: min_samples > max_samples");
  if (!(settings_.slower_factor >= 1.0))
    throw std::invalid_argument("ScreeningCriterion: slower_factor must be at least 1");
}

StopReason ScreeningCriterion::reason() const {
  const std::size_t n = stream_.count();
  if (n >= settings_.min_samples && n > 0) {
    if (best_median_ms_ && stream_.ci().low > settings_.slower_factor * *best_median_ms_)
      return StopReason::clearly_slower;
    if (stream_.rel_noise() <= settings_.max_rel_noise) return StopReason::converged;
  }
  if (n >= settings_.max_samples) return StopReason::sample_cap;
  if (stream_.elapsed_s() >= settings_.time_cap_s) return StopReason::time_cap;
  return StopReason::none;
}

// ---- ThrottleFilter ----

ThrottleFilter::ThrottleFilter(ThrottleSettings settings) : settings_(settings) {
  if (!(settings_.min_clock_fraction > 0.0 && settings_.min_clock_fraction <= 1.0))
    throw std::invalid_argument("ThrottleFilter: min_clock_fraction must be in (0, 1]");
  if (settings_.back_off_after == 0)
    throw std::invalid_argument("ThrottleFilter: back_off_after must be at least 1");
}

double ThrottleFilter::reference_clock_mhz() const {
  return std::max(settings_.reference_clock_mhz, max_seen_mhz_);
}

bool ThrottleFilter::add(double sample_ms, double sm_clock_mhz) {
  max_seen_mhz_ = std::max(max_seen_mhz_, sm_clock_mhz);
  if (sm_clock_mhz >= settings_.min_clock_fraction * reference_clock_mhz()) {
    ++accepted_;
    consecutive_ = 0;
    return true;
  }
  discarded_ms_.push_back(sample_ms);
  ++consecutive_;
  return false;
}

bool ThrottleFilter::should_back_off() const { return consecutive_ >= settings_.back_off_after; }

void ThrottleFilter::backed_off() {
  if (should_back_off()) ++back_offs_;
  consecutive_ = 0;
}

}  // namespace cutune::measure
