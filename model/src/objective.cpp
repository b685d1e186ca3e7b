#include "cutune/model/objective.hpp"

namespace cutune {

Objective Objective::from_name(std::string_view name, bool higher_is_better) {
  if (name == "time") return time();
  if (name == "energy") return energy();
  return of_metric(std::string(name), higher_is_better);
}

std::string Objective::name() const {
  switch (kind) {
    case ObjectiveKind::Time: return "time";
    case ObjectiveKind::Energy: return "energy";
    case ObjectiveKind::Metric: return metric;
  }
  return "time";
}

}  // namespace cutune
