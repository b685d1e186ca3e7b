#pragma once
// What a tuning ranks by: time (the median), energy (per launch) or a metric of the problem
// (Kernel Tuner's `metrics`, cutune.Metrics), in a direction (Kernel Tuner's
// objective_higher_is_better). Strategies always minimise a cost; observation_for turns a value into it.
#include <optional>
#include <string>
#include <string_view>

#include "cutune/model/objective.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/search/strategy.hpp"

namespace cutune::search {

/// The objective value type is the model's (the store keeps winners per objective).
using cutune::Objective;
using cutune::ObjectiveKind;

/// Kernel Tuner 1.5's direction for a name it knows (util.objective_default_map: time,
/// energy, cost, loss lower; fitness, GFLOP/s, TFLOP/s, GB/s, TB/s, GFLOPS/W, TFLOPS/W,
/// GFLOP/J, TFLOP/J higher); none for any other name.
std::optional<bool> kt_default_higher_is_better(std::string_view name);

/// The objective of a tuning of `problem`. `name`: --objective ("" = not given);
/// `higher_is_better`: --objective-higher-is-better / --objective-lower-is-better (none =
/// not given). Without --objective the file's General.Objective decides, with its
/// General.Minimize as the direction. Direction, first that applies: the flag, the file's
/// Minimize for the objective it names, Kernel Tuner's default for the name, lower.
/// Throws InputError (one line, naming the option or the file's field) for a name that is
/// not time, energy or a metric, and for a higher-is-better time or energy. A General.Objective
/// that names no metric tunes on time and says so in *warning (BAT's GEMM file names
/// "GFLOPs" and defines no such metric: BAT's own runners rank by the measured time).
Objective resolve_objective(const KernelProblem& problem, const std::string& name,
                            std::optional<bool> higher_is_better, std::string* warning = nullptr);

/// What a strategy is told for a configuration whose objective value is `value` (none: a
/// failure, or no reading). Lower is better: the value. Higher is better: its reciprocal,
/// which keeps the cost positive and, for a throughput (work / time), proportional to the
/// time, so the strategies that model log(cost) (bayes_opt, dual_annealing) see the same
/// landscape as when tuning on time; Kernel Tuner's negation would turn their log models
/// off. A higher-is-better value <= 0 (or not finite) is told as a failure: no positive cost
/// ranks it below every positive value.
Observation observation_for(std::optional<double> value, const Objective& objective);

}  // namespace cutune::search
