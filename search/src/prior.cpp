#include "cutune/search/prior.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/ranges.h>

namespace cutune::search {

std::string bare_function_name(std::string_view name) {
  // Template arguments first (they may hold "::"), then the namespace.
  if (const auto lt = name.find('<'); lt != std::string_view::npos) name = name.substr(0, lt);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (const auto colons = name.rfind("::"); colons != std::string_view::npos) name = name.substr(colons + 2);
  return std::string(name);
}

bool KernelNames::shares_a_name_with(const KernelNames& other) const {
  const std::string mine[] = {name, bare_function_name(name), bare_function_name(function)};
  const std::string theirs[] = {other.name, bare_function_name(other.name), bare_function_name(other.function)};
  for (const auto& a : mine)
    for (const auto& b : theirs)
      if (!a.empty() && a == b) return true;
  return false;
}

std::string KernelNames::describe() const {
  std::string out = name.empty() ? std::string("?") : name;
  if (!function.empty() && bare_function_name(function) != name) out += " (function " + function + ")";
  return out;
}

bool ProblemSize::same_as(const ProblemSize& other) const {
  if (extent.empty() || extent != other.extent) return false;
  return variables.empty() || other.variables.empty() || variables == other.variables;
}

std::string ProblemSize::describe() const {
  if (extent.empty()) return "unknown";
  return variables.empty() ? extent : fmt::format("{} ({})", extent, variables);
}

std::string PriorOrigin::describe() const {
  std::string out = kernel.describe();
  out += " on " + (device.empty() ? std::string("an unknown GPU") : device);
  if (!problem.empty()) out += ", problem " + problem;
  return out;
}

namespace {

// Index of `v` in `values`, or -1.
std::int64_t find_in(const ValueList& values, const Value& v) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == v) return static_cast<std::int64_t>(i);
  return -1;
}

// For each target parameter, the prior parameter of the same name (prior_mismatch checked
// that there is one).
std::vector<std::size_t> parameter_map(const Prior& prior, const Space& target) {
  std::vector<std::size_t> out;
  for (const auto& p : target.parameters())
    for (std::size_t j = 0; j < prior.parameters.size(); ++j)
      if (prior.parameters[j].name == p.name) out.push_back(j);
  return out;
}

}  // namespace

std::string prior_mismatch(const Prior& prior, const KernelNames& kernel, const Space& target) {
  if (!prior.origin.kernel.shares_a_name_with(kernel))
    return fmt::format("kernel '{}', not '{}'", prior.origin.kernel.describe(), kernel.describe());
  const auto& params = target.parameters();
  if (prior.parameters.size() != params.size())
    return fmt::format("{} parameters, the target has {}", prior.parameters.size(), params.size());
  for (const auto& p : prior.parameters)
    if (!target.has_parameter(p.name)) return fmt::format("parameter '{}' is not the target's", p.name);
  const auto map = parameter_map(prior, target);
  if (map.size() != params.size()) return "its parameter names repeat";
  for (std::size_t m = 0; m < prior.measurements.size(); ++m) {
    const auto& values = prior.measurements[m].values;
    if (values.size() != prior.parameters.size())
      return fmt::format("measurement {} has {} values for {} parameters", m, values.size(), prior.parameters.size());
    for (std::size_t i = 0; i < params.size(); ++i)
      if (find_in(params[i].values, values[map[i]]) < 0)
        return fmt::format("it measured {}={}, which is not among the target's values", params[i].name,
                           values[map[i]].str());
  }
  return "";
}

SpacePrior::SpacePrior(const Space& target, const KernelNames& kernel, const std::vector<Prior>& priors,
                       const ProblemSize& size) {
  // Per used source: the configuration's rank there. Summed, then divided by the count.
  std::map<Config, std::pair<double, std::size_t>> sums;
  std::vector<std::string> mismatch;
  for (const Prior& prior : priors) mismatch.push_back(prior_mismatch(prior, kernel, target));
  // Matching sources at the target's size, when there are any, push out those at other sizes.
  bool same_size_known = false;
  for (std::size_t i = 0; i < priors.size(); ++i)
    same_size_known = same_size_known || (mismatch[i].empty() && priors[i].origin.size.same_as(size));
  for (std::size_t i = 0; i < priors.size(); ++i) {
    const Prior& prior = priors[i];
    PriorUse use{prior.origin, false, mismatch[i], prior.measurements.size(), 0};
    if (use.reason.empty() && same_size_known && !prior.origin.size.same_as(size))
      use.reason = fmt::format("measured at problem size {}, where sources at this run's ({}) are known",
                               prior.origin.size.describe(), size.describe());
    if (!use.reason.empty()) {
      uses_.push_back(std::move(use));
      continue;
    }
    const auto map = parameter_map(prior, target);
    // Mapped onto the target's indices; a configuration measured twice keeps its best.
    std::map<Config, double> objective;  // +inf: failed
    for (const auto& m : prior.measurements) {
      Config c;
      for (std::size_t i = 0; i < map.size(); ++i)
        c.index.push_back(static_cast<std::uint32_t>(find_in(target.parameters()[i].values, m.values[map[i]])));
      const double f = m.objective && std::isfinite(*m.objective) ? *m.objective
                                                                  : std::numeric_limits<double>::infinity();
      auto [it, fresh] = objective.emplace(std::move(c), f);
      if (!fresh) it->second = std::min(it->second, f);
    }
    std::vector<std::pair<double, Config>> valid;
    for (const auto& [c, f] : objective)
      if (std::isfinite(f)) valid.emplace_back(f, c);
    if (valid.empty()) {
      use.reason = "no valid measurement";
      uses_.push_back(std::move(use));
      continue;
    }
    std::sort(valid.begin(), valid.end());
    // Rank 0..1 by position; equal objectives share the rank of the first.
    std::map<Config, double> rank;
    const double denominator = std::max<double>(1.0, static_cast<double>(valid.size() - 1));
    for (std::size_t i = 0, first = 0; i < valid.size(); ++i) {
      if (valid[i].first != valid[first].first) first = i;
      rank[valid[i].second] = static_cast<double>(first) / denominator;
    }
    std::vector<Config> source_ranking;
    for (const auto& [f, c] : valid)
      if (target.is_valid(c)) source_ranking.push_back(c);
    for (const auto& [c, f] : objective) {
      auto& s = sums[c];
      s.first += std::isfinite(f) ? rank[c] : kFailedScore;
      ++s.second;
      if (target.is_valid(c)) ++use.proposable;
    }
    use.used = true;
    uses_.push_back(std::move(use));
    source_rankings_.push_back(std::move(source_ranking));
  }
  from_other_problem_ = !size.extent.empty() &&
                        std::any_of(uses_.begin(), uses_.end(), [](const PriorUse& u) { return u.used; }) &&
                        std::all_of(uses_.begin(), uses_.end(), [&](const PriorUse& u) {
                          return !u.used || (!u.origin.size.extent.empty() && !u.origin.size.same_as(size));
                        });
  std::vector<std::pair<double, Config>> ranked;
  for (const auto& [c, s] : sums) {
    const double score = s.first / static_cast<double>(s.second);
    scores_.emplace(c, score);
    if (score < kFailedScore && target.is_valid(c)) ranked.emplace_back(score, c);
  }
  std::sort(ranked.begin(), ranked.end());
  for (auto& [s, c] : ranked) ranking_.push_back(std::move(c));
}

std::size_t SpacePrior::measurements_used() const {
  std::size_t n = 0;
  for (const auto& u : uses_)
    if (u.used) n += u.measurements;
  return n;
}

std::vector<Config> SpacePrior::seeds(std::size_t k) const {
  std::vector<Config> out;
  std::set<Config> taken;
  for (std::size_t depth = 0; out.size() < k; ++depth) {
    bool any = false;
    for (const auto& ranking : source_rankings_) {
      if (depth >= ranking.size()) continue;
      any = true;
      if (out.size() < k && taken.insert(ranking[depth]).second) out.push_back(ranking[depth]);
    }
    if (!any) break;
  }
  return out;
}

double SpacePrior::predict(const Config& c) const {
  if (scores_.empty()) return kFailedScore;
  if (auto it = scores_.find(c); it != scores_.end()) return it->second;
  std::pair<std::size_t, std::uint64_t> best{std::numeric_limits<std::size_t>::max(), 0};
  double score = kFailedScore;
  for (const auto& [x, s] : scores_) {
    std::size_t differ = 0;
    std::uint64_t distance = 0;
    for (std::size_t i = 0; i < c.index.size() && i < x.index.size(); ++i)
      if (c.index[i] != x.index[i]) {
        ++differ;
        distance += c.index[i] > x.index[i] ? c.index[i] - x.index[i] : x.index[i] - c.index[i];
      }
    if (std::pair{differ, distance} < best) {
      best = {differ, distance};
      score = s;
    }
  }
  return score;
}

std::string SpacePrior::summary() const {
  std::vector<std::string> used, unused;
  for (const auto& u : uses_) {
    if (u.used)
      used.push_back(fmt::format("{}: {} measurements, {} valid here", u.origin.describe(), u.measurements,
                                 u.proposable));
    else
      unused.push_back(fmt::format("{} ({})", u.origin.describe(), u.reason));
  }
  std::string out = used.empty() ? std::string("no prior used")
                                 : fmt::format("prior from {}", fmt::join(used, "; "));
  if (from_other_problem_) out += "; measured at other problem sizes only: the rest of its best follow its first two only if those beat the search's own first results";
  if (!unused.empty()) out += fmt::format("; not used: {}", fmt::join(unused, "; "));
  return out;
}

}  // namespace cutune::search
