// How long an MPI lane's polls may sleep, from how often its answers come (cluster::PollPace).
#include <catch2/catch.hpp>

#include "cutune/cluster/world.hpp"

using cutune::cluster::kLongestPause;
using cutune::cluster::PollPace;
using std::chrono::microseconds;

namespace {
PollPace::Clock::time_point feed(PollPace& pace, PollPace::Clock::time_point t, microseconds every, int answers) {
  for (int i = 0; i < answers; ++i, t += every) pace.answered(t);
  return t;
}
}  // namespace

TEST_CASE("poll pace: the longest pause until two answers have come", "[cluster][poll_pace]") {
  PollPace pace;
  CHECK(pace.longest_pause() == kLongestPause);
  pace.answered(PollPace::Clock::now());
  CHECK(pace.longest_pause() == kLongestPause);
}

TEST_CASE("poll pace: a fiftieth of the time between answers, within 10 us and 1 ms", "[cluster][poll_pace]") {
  const auto t0 = PollPace::Clock::time_point{};
  PollPace fast;  // BAT's MD5Hash on an H100: an answer every 1.5 ms
  feed(fast, t0, microseconds(1500), 10);
  CHECK(fast.longest_pause() == microseconds(30));
  PollPace slow;  // matmul 4096^3: tens of ms
  feed(slow, t0, microseconds(80'000), 10);
  CHECK(slow.longest_pause() == kLongestPause);
  PollPace fastest;
  feed(fastest, t0, microseconds(100), 10);
  CHECK(fastest.longest_pause() == PollPace::kShortestPause);
}

TEST_CASE("poll pace: follows a run whose evaluations get faster, and one slow answer moves it little",
          "[cluster][poll_pace]") {
  PollPace pace;
  auto t = feed(pace, PollPace::Clock::time_point{}, microseconds(50'000), 10);
  REQUIRE(pace.longest_pause() == kLongestPause);
  t = feed(pace, t, microseconds(1000), 60);
  CHECK(pace.longest_pause() == microseconds(20));
  pace.answered(t + microseconds(400'000));  // one answer after a 0.4 s pause
  CHECK(pace.longest_pause() <= microseconds(28));
}
