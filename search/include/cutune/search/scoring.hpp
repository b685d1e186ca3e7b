#pragma once
// Scoring of search strategies by the methodology of Willemsen, van Nieuwpoort and van
// Werkhoven, "A methodology for comparing optimization algorithms for auto-tuning" (FGCS
// 2024; reference implementation AutoTuningAssociation/autotuning_methodology), as follows.
// Per recorded space:
//   v = valid objective values best first, N = |v|, f* = v[0], m = median(v), w = v worst
//   first; c = each configuration's cost (compile + benchmark + verification, failures
//   included); F(p) = ceil(i / (N + 1 - i)), i the first index of w whose value reaches
//   f* + (m - f*)(1 - p); T(p) = F(p) x median(c).
//   Window: 1000 points from T(0.5) to T(0.96).
//   Random-search baseline, calculated: tau = mean(c), M(t) = max(1, round(t / tau)),
//   B(t) = w[min(N - 1, round(M (N + 1) / (M + 1)))].
//   S(t), two estimators (ScoringOptions::curve):
//   - isotonic (the default): as the reference, a monotone (isotonic, pool-adjacent-violators) regression
//     of the pooled repeats' best-so-far ranks in v against time, fitted to the points within
//     the window plus a margin (0.1 + 0.25 x repeats / points; all points if none is that
//     close, where the reference gives up), interpolated linearly,
//     rounded to a rank, and held constant after the repeats' median end (the reference's
//     "real stopping point"). The reference bags 1/sqrt(repeats)-sized bootstrap samples
//     over that fit; this is the plain fit (tests/crosscheck_scoring.py compares them);
//   - median: the median over repeats of each repeat's best-so-far at time t (the issue
//     allows it; higher than the isotonic curve for skewed repeats: the typical run, not the
//     average one).
//   P(t) = (S(t) - B(t)) / (f* - B(t)); the score is the mean of P over the window, and
//   over several spaces the mean over spaces.
// N evaluators working at once (ScoringOptions::workers, cutune's own extension): the time
// axis stays simulated wall time, so N evaluators make up to N times the evaluations in the
// same time. The baseline is then random search with N evaluators, M(t) = max(1, round(N t /
// tau)), and the window is T(p) / N: the wall time in which it makes the evaluations that
// one evaluator makes by T(p). Random search thus scores about 0 at every N, and a strategy's
// score at N beside its score at 1 says what proposing with N - 1 results pending costs it.
// N = 1 is the methodology unchanged.
// Spaces without recorded costs (RecordedSpace::cost_unit() Evaluations: objective values
// only) are scored in evaluations: every evaluation costs 1, so median(c) = tau = 1, T(p) =
// F(p) evaluations, M(t) = t and a simulated run's time budget is an evaluation count. Every
// "_s" below is then in evaluations (unit()).
//
// A failure-aware random baseline beside the methodology's (cutune's own extension; the
// methodology's score stays the primary one). B(t) above is random search over the N valid
// configurations only: on a space where a quarter of the configurations fail, sampled
// random search, which also draws failures, scores well below 0. B_fa(t) is the expected best
// of random search drawing uniformly without replacement from all N_all recorded
// configurations, N of them valid and F = N_all - N failures (each failure spends its
// recorded cost, counted in tau = mean(c) over all N_all, and yields nothing):
//   M = min(N_all, max(1, round(t / tau)))   (x workers, as above)
//   X = the worst-first position (1..N) of the best valid configuration drawn, 0 when none
//       was: P(X >= j) = 1 - C(N_all - (N - j + 1), M) / C(N_all, M) (the N - j + 1 valid
//       configurations at positions j..N all missed), so
//   E[X] = sum_j P(X >= j) = N - [C(N_all, M + 1) - C(F, M + 1)] / C(N_all, M)   (hockey stick)
//        = N - (N_all - M) / (M + 1) + P0 (F - M) / (M + 1),
//   P0 = C(F, M) / C(N_all, M) = prod_{i<M} (F - i) / (N_all - i), the chance that no valid
//   configuration was drawn (0 once M > F).
//   B_fa(t) = w[min(N - 1, round(E[X]))]: the methodology's indexing (with F = 0, P0 = 0 and
//   E[X] = M (N + 1) / (M + 1), its B(t) exactly); X = 0 lands on w[0], the worst valid
//   value, which is what a repeat that has found nothing valid counts as above.
// P_fa(t) = (S(t) - B_fa(t)) / (f* - B_fa(t)) over the same window; score_failure_aware is
// its mean.
// Details taken from the reference where the methodology is silent: round() is Python's (half to
// even); when w[i] is already the optimum for p < 1, i steps back one (so F(p) stays below
// the cost of finding the optimum itself); a window of fewer than 2 evaluations is widened
// (end + 2 when it starts at 0, else start - 1 and end + 1). Our own choices: a repeat that
// has found nothing valid yet counts as the worst valid value w[0]; where B(t) = f*
// (random search has found the optimum), P = 1 if S = f*, else 0.
#include <cstdint>
#include <string>
#include <vector>

#include "cutune/search/recorded_space.hpp"
#include "cutune/search/session.hpp"

namespace cutune::search {

enum class CurveMethod { Median, Isotonic };

/// A run set's score against each baseline.
struct Scores {
  double methodology = 0.0;    ///< against B(t)
  double failure_aware = 0.0;  ///< against B_fa(t)
};

struct ScoringOptions {
  CurveMethod curve = CurveMethod::Isotonic;
  double p_start = 0.5;
  double p_end = 0.96;
  std::size_t points = 1000;
  std::size_t workers = 1;  ///< N evaluators at once (see above)
};

/// The statistics of one recorded space and the scoring of runs on it.
class SpaceScoring {
 public:
  /// Throws InputError naming the space when it has fewer than 2 valid configurations or
  /// all of them are equal (the optimum is reached at once: nothing to score).
  explicit SpaceScoring(const RecordedSpace& space, ScoringOptions options = {});

  const std::string& name() const { return name_; }
  std::size_t size() const { return v_.size(); }  ///< N
  std::size_t configurations() const { return n_all_; }  ///< N_all, failures included
  /// The unit of every time and cost here (seconds, or evaluations for a space without costs).
  CostUnit unit() const { return unit_; }
  double optimum() const { return v_.front(); }   ///< f*
  double median() const { return median_; }        ///< m
  double median_cost_s() const { return median_cost_s_; }
  double mean_cost_s() const { return mean_cost_s_; }  ///< tau
  std::uint64_t fevals_to(double p) const;  ///< F(p), without the window widening
  /// T(p), on one evaluator (the window is T(p) / workers).
  double time_to(double p) const { return static_cast<double>(fevals_to(p)) * median_cost_s_; }
  std::size_t workers() const { return workers_; }
  double window_start_s() const { return times_.front(); }
  double window_end_s() const { return times_.back(); }
  const std::vector<double>& times() const { return times_; }
  /// Evaluations that random search (with workers() evaluators) makes, on average, by the
  /// end of the window.
  std::uint64_t expected_evaluations() const;

  double baseline(double t) const;  ///< B(t)
  double baseline_failure_aware(double t) const;  ///< B_fa(t)
  /// S(t) over the window from repeated runs (each a session trace).
  std::vector<double> strategy_curve(const std::vector<std::vector<TraceEntry>>& runs) const;
  /// P(t) over the window for a curve S(t) over the window.
  std::vector<double> performance(const std::vector<double>& curve) const;
  /// P_fa(t) over the window for a curve S(t) over the window.
  std::vector<double> performance_failure_aware(const std::vector<double>& curve) const;
  /// Mean of P(t) over the window.
  double score(const std::vector<std::vector<TraceEntry>>& runs) const;
  /// Means of P(t) and P_fa(t) over the window (one curve for both).
  Scores scores(const std::vector<std::vector<TraceEntry>>& runs) const;

 private:
  std::vector<double> median_curve(const std::vector<std::vector<TraceEntry>>& runs) const;
  std::vector<double> isotonic_curve(const std::vector<std::vector<TraceEntry>>& runs) const;

  std::string name_;
  CurveMethod method_ = CurveMethod::Median;
  std::size_t workers_ = 1;
  std::size_t n_all_ = 0;
  CostUnit unit_ = CostUnit::Seconds;
  std::vector<double> v_;  ///< best first
  double median_ = 0.0, median_cost_s_ = 0.0, mean_cost_s_ = 0.0;
  std::vector<double> times_;
  std::vector<double> baseline_fa_;  ///< B_fa at times_
};

/// numpy.median of the values (the mean of the two middle ones for an even count).
double median_of(std::vector<double> values);

}  // namespace cutune::search
