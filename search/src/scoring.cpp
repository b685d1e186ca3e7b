#include "cutune/search/scoring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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

SpaceScoring::SpaceScoring(const RecordedSpace& space, ScoringOptions options) : name_(space.name()) {
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
  if (!(median_cost_s_ > 0) || !(mean_cost_s_ > 0))
    throw InputError(fmt::format("{}: the recorded costs (compile + benchmark + verification time) are zero",
                                 name_));

  std::uint64_t f_start = fevals_to(options.p_start), f_end = fevals_to(options.p_end);
  if (f_end < f_start + 2) {
    if (f_start == 0) f_end = f_start + 2;
    else {
      f_end += 1;
      f_start -= 1;
    }
  }
  const double t0 = static_cast<double>(f_start) * median_cost_s_;
  const double t1 = static_cast<double>(f_end) * median_cost_s_;
  const std::size_t n = std::max<std::size_t>(options.points, 2);
  times_.resize(n);
  for (std::size_t k = 0; k < n; ++k)  // numpy.linspace
    times_[k] = t0 + (t1 - t0) * static_cast<double>(k) / static_cast<double>(n - 1);
  times_.back() = t1;
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
  return static_cast<std::uint64_t>(std::ceil(window_end_s() / mean_cost_s_));
}

double SpaceScoring::baseline(double t) const {
  const double n = static_cast<double>(v_.size());
  const double m = std::max(1.0, round_half_even(t / mean_cost_s_));
  const double index = std::min(n - 1, round_half_even(m * (n + 1) / (m + 1)));
  return v_[v_.size() - 1 - static_cast<std::size_t>(index)];  // w[index]
}

std::vector<double> SpaceScoring::strategy_curve(const std::vector<std::vector<TraceEntry>>& runs) const {
  if (runs.empty()) throw InputError(fmt::format("{}: no runs to score", name_));
  std::vector<std::vector<double>> per_run;
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

double SpaceScoring::score(const std::vector<std::vector<TraceEntry>>& runs) const {
  const auto p = performance(strategy_curve(runs));
  return std::accumulate(p.begin(), p.end(), 0.0) / static_cast<double>(p.size());
}

}  // namespace cutune::search
