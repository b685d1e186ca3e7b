// Measurement engine, CPU part: statistics, stopping criteria, throttle filter
// and winner declaration on synthetic sample streams with seeded generators.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cutune/measure/finalists.hpp"
#include "cutune/measure/statistics.hpp"
#include "cutune/measure/stopping.hpp"

using namespace cutune::measure;
using cutune::StopReason;
using cutune::Summary;

namespace {

// Portable seeded streams: std::mt19937_64's output is fixed by the standard, the
// std::*_distribution classes are not, so the transforms are written out here.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double uniform() { return (static_cast<double>(g_() >> 11) + 0.5) * 0x1p-53; }  // (0, 1)
  double normal() {  // Box-Muller
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  std::mt19937_64 g_;
};

// Feeds `next()` into the criterion until it stops (or a safety limit far above any cap).
template <class Criterion, class Next>
void run_until_done(Criterion& c, Next next) {
  for (int i = 0; i < 100000 && !c.done(); ++i) c.add(next(i));
}

bool covers(const Summary& s, double x) { return s.ci_low <= x && x <= s.ci_high; }

Summary summary_with_ci(double median, double low, double high) {
  Summary s;
  s.count = 20;
  s.median = median;
  s.ci_low = low;
  s.ci_high = high;
  return s;
}

}  // namespace

TEST_CASE("summarize keeps the basic statistics and adds the median's interval", "[measure]") {
  const Summary s = summarize({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  CHECK(s.count == 10);
  CHECK(s.median == Approx(5.5));
  CHECK(s.mean == Approx(5.5));
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.stddev == Approx(3.0276503540974917));
  CHECK(s.rel_stddev == Approx(3.0276503540974917 / 5.5));
  // n = 10 at 95%: [x(2), x(9)], coverage 1 - 2 * 11/1024.
  CHECK(s.ci_low == 2);
  CHECK(s.ci_high == 9);
  CHECK(s.ci_coverage == Approx(1.0 - 22.0 / 1024.0));
  CHECK(s.rel_ci_half_width == Approx(7.0 / 11.0));
  CHECK_THROWS_AS(summarize({}), std::invalid_argument);
}

TEST_CASE("median interval ranks from the binomial distribution", "[measure]") {
  SECTION("exact for small n") {
    // n = 25: P(B <= 7) = 726206 / 2^25, the largest tail below 2.5%.
    const MedianRanks r = median_ci_ranks(25);
    CHECK(r.lower == 8);
    CHECK(r.upper == 18);
    CHECK(r.coverage == Approx(1.0 - 2.0 * 726206.0 / 33554432.0));
    // At 80%: P(B <= 8) = 0.0539 <= 0.1 < P(B <= 9) = 0.1148.
    const MedianRanks r80 = median_ci_ranks(25, 0.80);
    CHECK(r80.lower == 9);
    CHECK(r80.upper == 17);
  }
  SECTION("too few samples: [min, max] with its real coverage") {
    const MedianRanks r = median_ci_ranks(5);
    CHECK(r.lower == 1);
    CHECK(r.upper == 5);
    CHECK(r.coverage == Approx(0.9375));
    CHECK(median_ci_ranks(6).coverage == Approx(1.0 - 2.0 / 64.0));
    CHECK(median_ci_ranks(1).coverage == Approx(0.0));
  }
  SECTION("the normal approximation continues the exact sums") {
    const MedianRanks exact = median_ci_ranks(1000), approx = median_ci_ranks(1001);
    CHECK(exact.coverage >= 0.95);
    CHECK(approx.coverage >= 0.95);
    const auto l_exact = static_cast<long>(exact.lower), l_approx = static_cast<long>(approx.lower);
    CHECK(std::labs(l_exact - l_approx) <= 1);
    CHECK(median_ci_ranks(100000).lower > 49600);
    CHECK(median_ci_ranks(100000).upper < 50400);
  }
  SECTION("normal quantile") {
    CHECK(normal_quantile(0.975) == Approx(1.959963984540054));
    CHECK(normal_quantile(0.5) == Approx(0.0).margin(1e-12));
  }
  CHECK_THROWS_AS(median_ci_ranks(0), std::invalid_argument);
  CHECK_THROWS_AS(median_ci_ranks(10, 1.0), std::invalid_argument);
}

TEST_CASE("(g) the 95% median interval covers the true median 93-97% of the time", "[measure]") {
  // 1000 seeded experiments of n = 25 from a skewed distribution (lognormal, true median
  // 1); the exact coverage at n = 25 is 95.67%.
  Rng rng(20240604);
  int covered = 0;
  for (int e = 0; e < 1000; ++e) {
    std::vector<double> x(25);
    for (double& v : x) v = std::exp(0.2 * rng.normal());
    covered += covers(summarize(x), 1.0) ? 1 : 0;
  }
  CHECK(covered >= 930);
  CHECK(covered <= 970);
}

TEST_CASE("(a) a quiet stream converges soon after min_samples", "[measure]") {
  Rng rng(1);
  NoiseCriterion c;  // defaults
  run_until_done(c, [&](int) { return 2.0 * (1.0 + 0.005 * rng.normal()); });
  CHECK(c.reason() == StopReason::converged);
  CHECK(c.stream().count() >= c.settings().min_samples);
  CHECK(c.stream().count() <= c.settings().min_samples + 10);
  const Summary s = c.summary();
  CHECK(std::abs(s.median / 2.0 - 1.0) < 0.005);
  CHECK(s.rel_ci_half_width <= c.settings().max_rel_noise);
}

TEST_CASE("(b) an inherently noisy stream stops by noise stabilisation", "[measure]") {
  // 10% lognormal (true median 1): reaching 0.5% would take ~2400 samples; the criterion
  // must give up long before the sample cap, and the interval it reports must still cover
  // the true median about as often as promised (sequential stopping costs a little).
  StoppingSettings settings;
  settings.time_cap_s = 1e9;  // only the statistics may stop it
  int covered = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    NoiseCriterion c(settings);
    run_until_done(c, [&](int) { return std::exp(0.1 * rng.normal()); });
    INFO("seed " << seed << ", " << c.stream().count() << " samples");
    CHECK(c.reason() == StopReason::noise_stabilised);
    CHECK(c.stream().count() < settings.max_samples / 3);
    const Summary s = c.summary();
    covered += covers(s, 1.0) ? 1 : 0;
    CHECK(s.rel_ci_half_width > settings.max_rel_noise);  // honest: not converged
    CHECK(s.rel_ci_half_width < 0.05);
  }
  CHECK(covered >= 17);
}

TEST_CASE("(c) a drifting stream stops with an honest, wide interval", "[measure]") {
  // Documented choice: the criterion does not detrend. A linear drift (here +0.5% of the
  // start value per sample, say a GPU heating up) makes the spread grow with n, so the
  // interval never shrinks to the target: the stream stops by noise stabilisation, not by
  // a false convergence, and the median reports the middle of the measured window. Drift
  // between configurations is the finalists' interleaving's job, not this criterion's.
  Rng rng(7);
  StoppingSettings settings;
  settings.time_cap_s = 1e9;
  NoiseCriterion c(settings);
  run_until_done(c, [&](int i) { return 1.0 + 0.005 * i + 0.005 * rng.normal(); });
  CHECK(c.reason() == StopReason::noise_stabilised);
  const Summary s = c.summary();
  CHECK(s.count < settings.max_samples / 4);
  CHECK(s.rel_ci_half_width > settings.max_rel_noise);
  const double middle = 1.0 + 0.005 * static_cast<double>(s.count - 1) / 2.0;
  CHECK(covers(s, middle));
}

TEST_CASE("(d) a bimodal stream stops before the cap at the main mode", "[measure]") {
  StoppingSettings settings;
  settings.time_cap_s = 1e9;
  SECTION("70% at 1.0, 30% at 1.3: the median ignores the slow mode") {
    for (std::uint64_t seed : {1, 2, 3}) {
      Rng rng(seed);
      NoiseCriterion c(settings);
      run_until_done(c, [&](int) {
        return (rng.uniform() < 0.7 ? 1.0 : 1.3) * (1.0 + 0.005 * rng.normal());
      });
      INFO("seed " << seed << ": " << to_string(c.reason()));
      CHECK((c.reason() == StopReason::converged || c.reason() == StopReason::noise_stabilised));
      CHECK(c.stream().count() < settings.max_samples / 10);
      CHECK(c.summary().median == Approx(1.0).epsilon(0.01));
      CHECK(c.summary().mean > 1.05);  // what a mean-based tuner would have reported
    }
  }
  SECTION("50/50: the noise cannot fall, so it stabilises") {
    Rng rng(4);
    NoiseCriterion c(settings);
    run_until_done(c, [&](int) {
      return (rng.uniform() < 0.5 ? 1.0 : 1.3) * (1.0 + 0.005 * rng.normal());
    });
    CHECK(c.reason() == StopReason::noise_stabilised);
    CHECK(c.stream().count() < settings.max_samples / 10);
    CHECK(c.summary().rel_ci_half_width > 0.05);
  }
}

TEST_CASE("caps stop a stream that never settles", "[measure]") {
  SECTION("sample cap") {
    StoppingSettings settings;
    settings.stabilisation_tolerance = 0;  // never stabilises
    settings.max_samples = 300;
    settings.time_cap_s = 1e9;
    Rng rng(5);
    NoiseCriterion c(settings);
    run_until_done(c, [&](int) { return std::exp(0.1 * rng.normal()); });
    CHECK(c.reason() == StopReason::sample_cap);
    CHECK(c.stream().count() == 300);
  }
  SECTION("time cap from the samples' own time, even below min_samples") {
    NoiseCriterion c;  // 1 s cap
    run_until_done(c, [](int) { return 400.0; });  // 400 ms kernel
    CHECK(c.reason() == StopReason::time_cap);
    CHECK(c.stream().count() == 3);
  }
  SECTION("time cap from the wall time the loop reports") {
    NoiseCriterion c;
    c.add(1.0);
    CHECK_FALSE(c.done());
    c.set_elapsed_s(1.5);
    CHECK(c.reason() == StopReason::time_cap);
  }
  SECTION("settings are checked") {
    StoppingSettings bad;
    bad.min_samples = 50;
    bad.max_samples = 10;
    CHECK_THROWS_AS(NoiseCriterion(bad), std::invalid_argument);
  }
}

TEST_CASE("(e) throttled samples are discarded and a back-off is requested", "[measure]") {
  // 200 samples at 1980 MHz, except samples 3..27 at 60% clock and 1.6x time.
  Rng rng(11);
  ThrottleFilter filter(ThrottleSettings{.reference_clock_mhz = 1980});
  StoppingSettings settings;
  settings.time_cap_s = 1e9;
  NoiseCriterion c(settings);
  std::vector<double> unfiltered;
  int back_off_requests = 0;
  for (int i = 0; i < 200 && !c.done(); ++i) {
    const bool throttled = i >= 3 && i < 28;
    const double clock = throttled ? 0.6 * 1980 : 1980 - 20 * rng.uniform();
    const double t = (throttled ? 1.6 : 1.0) * (1.0 + 0.005 * rng.normal());
    unfiltered.push_back(t);
    if (filter.add(t, clock)) c.add(t);
    if (filter.should_back_off()) {
      ++back_off_requests;
      filter.backed_off();  // the GPU loop would sleep filter.back_off_s() here
    }
  }
  CHECK(filter.discarded_ms().size() == 25);
  CHECK(back_off_requests == 25);  // back_off_after = 1, as nvbench
  CHECK(filter.back_offs() == 25);
  CHECK(c.reason() == StopReason::converged);
  const Summary s = c.summary();
  CHECK(s.max < 1.1);  // no throttled sample got through
  CHECK(std::abs(s.median - 1.0) < 0.005);
  CHECK(summarize(unfiltered).median > 1.1);  // what keeping them would have reported
}

TEST_CASE("throttle filter without a device clock uses the highest clock seen", "[measure]") {
  ThrottleFilter f(ThrottleSettings{.min_clock_fraction = 0.9, .back_off_after = 3});
  CHECK(f.add(1.0, 1800));
  CHECK(f.add(1.0, 1700));  // 94%: kept
  CHECK_FALSE(f.add(1.5, 1500));
  CHECK_FALSE(f.add(1.5, 1500));
  CHECK_FALSE(f.should_back_off());
  CHECK_FALSE(f.add(1.5, 1500));
  CHECK(f.should_back_off());  // third in a row
  f.backed_off();
  CHECK_FALSE(f.should_back_off());
  CHECK(f.add(1.0, 1900));
  CHECK(f.reference_clock_mhz() == 1900);
  CHECK(f.accepted() == 3);
  CHECK(f.back_offs() == 1);
}

TEST_CASE("(f) screening stops a clearly slower stream early, not a close one", "[measure]") {
  const double best_ms = 1.0;
  SECTION("2x slower, 3% noise: stops at min_samples") {
    Rng rng(3);
    ScreeningCriterion c({}, best_ms);
    run_until_done(c, [&](int) { return 2.0 * (1.0 + 0.03 * rng.normal()); });
    CHECK(c.reason() == StopReason::clearly_slower);
    CHECK(c.stream().count() == ScreeningSettings{}.min_samples);
  }
  SECTION("10% slower, 3% noise: runs to the screening sample count") {
    Rng rng(3);
    ScreeningCriterion c({}, best_ms);
    run_until_done(c, [&](int) { return 1.1 * (1.0 + 0.03 * rng.normal()); });
    CHECK(c.reason() == StopReason::sample_cap);
    CHECK(c.stream().count() == ScreeningSettings{}.max_samples);
  }
  SECTION("2x slower but one fast sample: the interval's lower bound keeps it going") {
    ScreeningCriterion c({}, best_ms);
    for (double x : {2.0, 0.9, 2.1, 1.9, 2.0}) c.add(x);
    CHECK_FALSE(c.done());  // [min, max] at n = 5 reaches 0.9
  }
  SECTION("first configuration: no best yet, quiet stream converges") {
    Rng rng(3);
    ScreeningCriterion c;
    run_until_done(c, [&](int) { return 1.0 + 0.001 * rng.normal(); });
    CHECK(c.reason() == StopReason::converged);
    CHECK(c.stream().count() == ScreeningSettings{}.min_samples);
  }
  SECTION("time cap") {
    ScreeningCriterion c({}, best_ms);
    run_until_done(c, [](int) { return 60.0; });  // 60 ms kernel, 0.1 s cap
    CHECK(c.reason() == StopReason::time_cap);
    CHECK(c.stream().count() == 2);
  }
}

TEST_CASE("(h) the winner is declared only when its interval separates", "[measure]") {
  SECTION("separated") {
    const std::vector<Summary> f = {
        summary_with_ci(1.20, 1.19, 1.21),  // default
        summary_with_ci(1.00, 0.99, 1.01),
        summary_with_ci(1.05, 1.04, 1.06),
        summary_with_ci(1.10, 1.08, 1.12),
    };
    const Verdict v = declare_winner(f, 0);
    CHECK(v.winner == 1);
    CHECK(v.runner_up == 2);
    CHECK(v.separated);
    CHECK(v.tied == std::vector<std::size_t>{1});
    CHECK(v.ranking == std::vector<std::size_t>{1, 2, 3, 0});
    CHECK(v.beats_default);
    CHECK(v.speedup_over_default == Approx(1.2));
  }
  SECTION("tied with the runner-up and with a noisy third") {
    const std::vector<Summary> f = {
        summary_with_ci(1.00, 0.98, 1.02),
        summary_with_ci(1.01, 1.00, 1.03),
        summary_with_ci(1.30, 0.95, 1.60),  // noisy: its interval reaches the winner's
        summary_with_ci(1.50, 1.45, 1.55),  // default, clearly slower
    };
    const Verdict v = declare_winner(f, 3);
    CHECK(v.winner == 0);
    CHECK(v.runner_up == 1);
    CHECK_FALSE(v.separated);
    CHECK(v.tied == std::vector<std::size_t>{0, 1, 2});
    CHECK(v.beats_default);
    CHECK(v.speedup_over_default == Approx(1.5));
  }
  SECTION("the default ties the winner: no claimed speed-up") {
    const std::vector<Summary> f = {summary_with_ci(1.00, 0.97, 1.03),
                                    summary_with_ci(1.02, 0.99, 1.05)};
    const Verdict v = declare_winner(f, 1);
    CHECK_FALSE(v.separated);
    CHECK_FALSE(v.beats_default);
    CHECK(v.speedup_over_default == Approx(1.02));
  }
  SECTION("from sample streams: 3% apart at 0.5% noise separates, 0.2% apart does not") {
    Rng rng(9);
    auto stream = [&](double median) {
      std::vector<double> x(200);
      for (double& v : x) v = median * std::exp(0.005 * rng.normal());
      return summarize(x);
    };
    const Summary a = stream(1.0), b = stream(1.03), c = stream(1.002);
    CHECK(intervals_separate(a, b));
    CHECK_FALSE(intervals_separate(a, c));
    CHECK(declare_winner({b, a}).winner == 1);
    CHECK(declare_winner({b, a}).separated);
    CHECK_FALSE(declare_winner({a, c}).separated);
  }
  SECTION("a single finalist is trivially separated") {
    const Verdict v = declare_winner({summary_with_ci(1, 1, 1)});
    CHECK(v.separated);
    CHECK_FALSE(v.runner_up.has_value());
  }
  CHECK_THROWS_AS(declare_winner({}), std::invalid_argument);
  CHECK_THROWS_AS(declare_winner({summary_with_ci(1, 1, 1)}, 1), std::invalid_argument);
}
