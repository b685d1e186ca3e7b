#pragma once
// What a tuning ranks by, as a value: time (the median), energy (per launch) or a metric of
// the problem (Kernel Tuner's `metrics`, cutune.Metrics) by name, in a direction (Kernel
// Tuner's objective_higher_is_better). Typed inside every process; its name ("time",
// "energy", "GFLOP/s") is what the DB rows, the options and the files carry. It lives in the
// model because the store keeps winners per objective; choosing one for a problem is
// search::resolve_objective's job.
#include <string>
#include <string_view>

namespace cutune {

enum class ObjectiveKind { Time, Energy, Metric };

struct Objective {
  ObjectiveKind kind = ObjectiveKind::Time;
  std::string metric;             ///< the metric's name (kind Metric only; "" otherwise)
  bool higher_is_better = false;  ///< always false for time and energy

  static Objective time() { return {}; }
  static Objective energy() { return {ObjectiveKind::Energy, "", false}; }
  static Objective of_metric(std::string name, bool higher_is_better) {
    return {ObjectiveKind::Metric, std::move(name), higher_is_better};
  }
  /// From the name the edges carry: "time" and "energy" are those, any other name is a
  /// metric's. No check that the metric exists: the caller knows where the name came from.
  static Objective from_name(std::string_view name, bool higher_is_better = false);

  bool is_time() const { return kind == ObjectiveKind::Time; }
  bool is_energy() const { return kind == ObjectiveKind::Energy; }
  bool is_metric() const { return kind == ObjectiveKind::Metric; }
  /// "time", "energy" or the metric's name.
  std::string name() const;
  /// True when the value `a` ranks strictly before `b`.
  bool better(double a, double b) const { return higher_is_better ? a > b : a < b; }

  friend bool operator==(const Objective&, const Objective&) = default;
};

}  // namespace cutune
