#include "cutune/search/objective.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "cutune/model/errors.hpp"

namespace cutune::search {

std::optional<bool> kt_default_higher_is_better(std::string_view name) {
  // kernel_tuner/util.py objective_default_map (1.5.0), exact names as it matches them.
  static constexpr std::pair<std::string_view, bool> kMap[] = {
      {"time", false},    {"energy", false},    {"fitness", true},   {"cost", false},
      {"loss", false},    {"GFLOP/s", true},    {"TFLOP/s", true},   {"GB/s", true},
      {"TB/s", true},     {"GFLOPS/W", true},   {"TFLOPS/W", true},  {"GFLOP/J", true},
      {"TFLOP/J", true}};
  for (const auto& [n, higher] : kMap)
    if (n == name) return higher;
  return std::nullopt;
}

namespace {
bool has_metric(const KernelProblem& problem, const std::string& name) {
  for (const auto& m : problem.metrics())
    if (m.name == name) return true;
  return false;
}

std::string metric_list(const KernelProblem& problem) {
  std::string out;
  for (const auto& m : problem.metrics()) out += (out.empty() ? "" : ", ") + m.name;
  return out.empty() ? "none" : out;
}
}  // namespace

Objective resolve_objective(const KernelProblem& problem, const std::string& name,
                            std::optional<bool> higher_is_better, std::string* warning) {
  // The names the option and the file give are the edge: typed from here on.
  Objective o;
  const std::string& file_objective = problem.general_objective();
  const Objective given = Objective::from_name(name);
  const Objective in_file = Objective::from_name(file_objective);
  if (!name.empty()) {
    if (given.is_metric() && !has_metric(problem, name))
      throw InputError(fmt::format("--objective {}: not time, energy or a metric of {} (metrics: {})", name,
                                   problem.json_file().string(), metric_list(problem)));
    o = given;
  } else if (!file_objective.empty() && in_file.is_metric() && !has_metric(problem, file_objective)) {
    if (warning) {
      *warning = fmt::format("{}: General.Objective \"{}\" names no metric of cutune.Metrics (metrics: {}); "
                             "tuning on time, lower is better",
                             problem.json_file().string(), file_objective, metric_list(problem));
    }
  } else if (!file_objective.empty()) {
    o = in_file;
  }
  if (!o.is_metric()) {
    if (higher_is_better.value_or(false))
      throw InputError(fmt::format("--objective-higher-is-better: {} is always lower-is-better", o.name()));
    return o;
  }
  if (higher_is_better) o.higher_is_better = *higher_is_better;
  else if (o.metric == file_objective && problem.general_minimize()) o.higher_is_better = !*problem.general_minimize();
  else o.higher_is_better = kt_default_higher_is_better(o.metric).value_or(false);
  return o;
}

Observation observation_for(std::optional<double> value, const Objective& objective) {
  if (!value || !std::isfinite(*value)) return {false, 0.0};
  if (!objective.higher_is_better) return {true, *value};
  if (*value <= 0.0) return {false, 0.0};
  return {true, 1.0 / *value};
}

}  // namespace cutune::search
