#include <algorithm>

#include "cutune/cluster/world.hpp"

namespace cutune::cluster {

void PollPace::answered(Clock::time_point now) {
  if (last_) {
    double us = std::chrono::duration<double, std::micro>(now - *last_).count();
    // A moving average over about the last 8 answers: a run's evaluations change in cost
    // as the search moves. An interval counts as at most 4x the average, so one long gap (the
    // strategy planning, a hang killed) slows the polls by a third at most; evaluations that
    // really got slower raise it within a dozen answers (polls too frequent cost only CPU).
    if (interval_us_ >= 0) us = std::min(us, 4.0 * interval_us_);
    interval_us_ = interval_us_ < 0 ? us : interval_us_ + (us - interval_us_) / 8.0;
  }
  last_ = now;
}

std::chrono::microseconds PollPace::longest_pause() const {
  if (interval_us_ < 0) return kLongestPause;
  const auto us = static_cast<std::int64_t>(interval_us_ / kLooksPerAnswer);
  return std::clamp(std::chrono::microseconds(us), kShortestPause, kLongestPause);
}

}  // namespace cutune::cluster
