#include "cutune/search/scoring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "cutune/model/errors.hpp"

namespace cutune::search {
namespace {

// Python's round() and numpy's: half to even (the default rounding mode).
double round_half_even(double x) { return std::nearbyint(x); }

// Best valid objective so far at each of `times` (ascending) for one run; before anything
// valid is found, `worst`.
std::vector<double> best_so_far(const std::vector<TraceEntry>& run, const std::vector<double>& times,
                                double worst) {
  std::vector<double> out(times.size());
  double best = worst;
  std::size_t next = 0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    while (next < run.size() && run[next].elapsed_s <= times[k]) {
      const auto& o = run[next].observation;
      if (o.valid && o.objective < best) best = o.objective;
      ++next;
    }
    out[k] = best;
  }
  return out;
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2), values.end());
  const double upper = values[n / 2];
  if (n % 2) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lower + upper) / 2.0;
}

SpaceScoring::SpaceScoring(const RecordedSpace& space, ScoringOptions options)
    : name_(space.name()), method_(options.curve), workers_(options.workers), n_all_(space.entries().size()),
      unit_(space.cost_unit()) {
  if (workers_ == 0) throw InputError("scoring: at least one evaluator (worker) is needed");
  std::vector<double> costs;
  for (const auto& e : space.entries()) {
    costs.push_back(e.result.cost_s);
    if (e.result.observation.valid) v_.push_back(e.result.observation.objective);
  }
  std::sort(v_.begin(), v_.end());
  if (v_.size() < 2 || v_.front() == v_.back())
    throw InputError(fmt::format("{}: {} valid configurations{}: nothing to score", name_, v_.size(),
                                 v_.size() < 2 ? "" : ", all equal"));
  median_ = median_of(v_);
  median_cost_s_ = median_of(costs);
  mean_cost_s_ = std::accumulate(costs.begin(), costs.end(), 0.0) / static_cast<double>(costs.size());
  // RecordedSpace gives every entry a cost above 0 (1 in a space without recorded costs).
  if (!(median_cost_s_ > 0) || !(mean_cost_s_ > 0))
    throw std::logic_error(fmt::format("{}: a recorded space with costs of 0", name_));

  std::uint64_t f_start = fevals_to(options.p_start), f_end = fevals_to(options.p_end);
  if (f_end < f_start + 2) {
    if (f_start == 0) f_end = f_start + 2;
    else {
      f_end += 1;
      f_start -= 1;
    }
  }
  // Divided by 1.0 for one evaluator: exact, the methodology's window unchanged.
  const double n_workers = static_cast<double>(workers_);
  const double t0 = static_cast<double>(f_start) * median_cost_s_ / n_workers;
  const double t1 = static_cast<double>(f_end) * median_cost_s_ / n_workers;
  const std::size_t n = std::max<std::size_t>(options.points, 2);
  times_.resize(n);
  for (std::size_t k = 0; k < n; ++k)  // numpy.linspace
    times_[k] = t0 + (t1 - t0) * static_cast<double>(k) / static_cast<double>(n - 1);
  times_.back() = t1;
  baseline_fa_.reserve(times_.size());
  for (double t : times_) baseline_fa_.push_back(baseline_failure_aware(t));
}

std::uint64_t SpaceScoring::fevals_to(double p) const {
  const std::size_t n = v_.size();
  const double target = optimum() + (median_ - optimum()) * (1.0 - p);
  // w = v worst first: w[i] = v[n - 1 - i]; the first i with w[i] <= target.
  std::size_t i = 0;
  while (i < n && v_[n - 1 - i] > target) ++i;
  if (i == n) i = n - 1;  // (cannot happen: f* <= target)
  if (p != 1.0 && v_[n - 1 - i] == optimum() && i > 0) --i;
  return static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(i) / static_cast<double>(n + 1 - i)));
}

std::uint64_t SpaceScoring::expected_evaluations() const {
  return static_cast<std::uint64_t>(std::ceil(window_end_s() * static_cast<double>(workers_) / mean_cost_s_));
}

double SpaceScoring::baseline(double t) const {
  const double n = static_cast<double>(v_.size());
  const double m = std::max(1.0, round_half_even(static_cast<double>(workers_) * t / mean_cost_s_));
  const double index = std::min(n - 1, round_half_even(m * (n + 1) / (m + 1)));
  return v_[v_.size() - 1 - static_cast<std::size_t>(index)];  // w[index]
}

double SpaceScoring::baseline_failure_aware(double t) const {
  // The derivation is in the header. Doubles throughout: N_all may be large, and P0 only
  // shrinks (it stops at the first factor that makes it 0 or negligible).
  const double n = static_cast<double>(v_.size()), n_all = static_cast<double>(n_all_), f = n_all - n;
  const double m =
      std::min(n_all, std::max(1.0, round_half_even(static_cast<double>(workers_) * t / mean_cost_s_)));
  double p0 = m > f ? 0.0 : 1.0;
  for (double i = 0; i < m && p0 > 1e-300; ++i) p0 *= (f - i) / (n_all - i);
  const double expected = n - (n_all - m) / (m + 1) + p0 * (f - m) / (m + 1);
  const double index = std::clamp(round_half_even(expected), 0.0, n - 1);
  return v_[v_.size() - 1 - static_cast<std::size_t>(index)];  // w[index]
}

std::vector<double> SpaceScoring::strategy_curve(const std::vector<std::vector<TraceEntry>>& runs) const {
  if (runs.empty()) throw InputError(fmt::format("{}: no runs to score", name_));
  return method_ == CurveMethod::Median ? median_curve(runs) : isotonic_curve(runs);
}

std::vector<double> SpaceScoring::isotonic_curve(const std::vector<std::vector<TraceEntry>>& runs) const {
  // Pooled points (time, rank of the best so far in v), each run's last valid time.
  std::vector<std::pair<double, double>> points;
  std::vector<double> last_time;
  std::size_t all_points = 0;
  for (const auto& run : runs) {
    double best = INFINITY, last = NAN;
    for (const auto& e : run) {
      ++all_points;
      if (e.observation.valid && e.observation.objective < best) best = e.observation.objective;
      if (!std::isfinite(best)) continue;
      last = e.elapsed_s;
      // numpy.searchsorted(v, best, side="left")
      const double rank = static_cast<double>(std::lower_bound(v_.begin(), v_.end(), best) - v_.begin());
      points.emplace_back(e.elapsed_s, rank);
    }
    if (!std::isnan(last)) last_time.push_back(last);
  }
  const double margin = 0.1 + 0.25 * static_cast<double>(runs.size()) / static_cast<double>(std::max<std::size_t>(all_points, 1));
  const double lo = times_.front() * (1 - margin), hi = times_.back() * (1 + margin);
  // No run found a valid configuration (Kernel Tuner's brute force in the reverse listing of a
  // space whose first configurations all fail: 13 evaluations, none ran): its best so far is
  // the worst valid value throughout, as the median curve holds before a run's first valid
  // result. (The reference gives up here, which refused the whole table.)
  if (points.empty()) return std::vector<double>(times_.size(), v_.back());
  // (The reference gives up when no point is near the window, e.g. runs that all end before
  // it; here the curve then rests on all points: it is held constant outside them.)
  auto near = points;
  std::erase_if(near, [&](const auto& p) { return p.first < lo || p.first > hi; });
  if (!near.empty()) points = std::move(near);
  std::sort(points.begin(), points.end());
  // Ties in time averaged (weighted), then pool adjacent violators of "non-increasing".
  struct Block { double x_first, x_last, sum, weight; };
  std::vector<double> xs, ys, ws;
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    double sum = 0;
    while (j < points.size() && points[j].first == points[i].first) sum += points[j++].second;
    xs.push_back(points[i].first);
    ys.push_back(sum / static_cast<double>(j - i));
    ws.push_back(static_cast<double>(j - i));
    i = j;
  }
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    blocks.push_back({xs[i], xs[i], ys[i] * ws[i], ws[i]});
    while (blocks.size() > 1) {
      Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.sum / a.weight >= b.sum / b.weight) break;  // non-increasing: fine
      a = Block{a.x_first, b.x_last, a.sum + b.sum, a.weight + b.weight};
      blocks.pop_back();
    }
  }
  std::vector<double> fx, fy;  // fitted value at every distinct time (blocks are in order)
  std::size_t next = 0;
  for (const auto& b : blocks)
    for (; next < xs.size() && xs[next] <= b.x_last; ++next) {
      fx.push_back(xs[next]);
      fy.push_back(b.sum / b.weight);
    }
  // The reference holds the curve after the first end time above the runs' median end.
  std::sort(last_time.begin(), last_time.end());
  double stop = times_.back();
  if (!last_time.empty()) {
    const double median_end = median_of(last_time);
    auto it = std::upper_bound(last_time.begin(), last_time.end(), median_end);
    if (it != last_time.end()) stop = std::min(stop, *it);
  }
  std::vector<double> curve(times_.size());
  const double max_rank = static_cast<double>(v_.size() - 1);
  std::size_t stop_index = times_.size();
  for (std::size_t k = 0; k < times_.size(); ++k) {
    const double t = times_[k];
    double y;
    if (t <= fx.front()) y = fy.front();
    else if (t >= fx.back()) y = fy.back();
    else {
      const std::size_t j = static_cast<std::size_t>(std::upper_bound(fx.begin(), fx.end(), t) - fx.begin());
      y = fy[j - 1] + (fy[j] - fy[j - 1]) * (t - fx[j - 1]) / (fx[j] - fx[j - 1]);
    }
    curve[k] = v_[static_cast<std::size_t>(std::clamp(round_half_even(y), 0.0, max_rank))];
    if (stop_index == times_.size() && t > stop) stop_index = k;
  }
  for (std::size_t k = stop_index; k < curve.size(); ++k) curve[k] = curve[stop_index];
  return curve;
}

std::vector<double> SpaceScoring::median_curve(const std::vector<std::vector<TraceEntry>>& runs) const {  std::vector<std::vector<double>> per_run;
  for (const auto& run : runs) per_run.push_back(best_so_far(run, times_, v_.back()));
  std::vector<double> curve(times_.size()), column(runs.size());
  for (std::size_t k = 0; k < times_.size(); ++k) {
    for (std::size_t r = 0; r < runs.size(); ++r) column[r] = per_run[r][k];
    curve[k] = median_of(column);
  }
  return curve;
}

std::vector<double> SpaceScoring::performance(const std::vector<double>& curve) const {
  std::vector<double> p(curve.size());
  for (std::size_t k = 0; k < curve.size(); ++k) {
    const double b = baseline(times_[k]);
    if (b == optimum()) p[k] = curve[k] == optimum() ? 1.0 : 0.0;
    else p[k] = (curve[k] - b) / (optimum() - b);
  }
  return p;
}

std::vector<double> SpaceScoring::performance_failure_aware(const std::vector<double>& curve) const {
  std::vector<double> p(curve.size());
  for (std::size_t k = 0; k < curve.size(); ++k) {
    const double b = baseline_fa_[k];
    if (b == optimum()) p[k] = curve[k] == optimum() ? 1.0 : 0.0;
    else p[k] = (curve[k] - b) / (optimum() - b);
  }
  return p;
}

double SpaceScoring::score(const std::vector<std::vector<TraceEntry>>& runs) const {
  return scores(runs).methodology;
}

Scores SpaceScoring::scores(const std::vector<std::vector<TraceEntry>>& runs) const {
  const auto curve = strategy_curve(runs);
  const auto mean = [](const std::vector<double>& p) {
    return std::accumulate(p.begin(), p.end(), 0.0) / static_cast<double>(p.size());
  };
  return Scores{mean(performance(curve)), mean(performance_failure_aware(curve))};
}

}  // namespace cutune::search
