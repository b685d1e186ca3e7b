#include "cutune/search/recorded_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cutune/model/errors.hpp"

namespace cutune::search {
namespace {

bool recorded_cost(double c) { return std::isfinite(c) && c > 0; }

double middle(std::vector<double> v) {  // the median; v is not empty
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

const char* cost_unit_name(CostUnit unit) { return unit == CostUnit::Evaluations ? "evaluations" : "seconds"; }

RecordedSpace::RecordedSpace(std::string name, std::vector<Parameter> parameters,
                             std::vector<Entry> entries)
    : name_(std::move(name)), entries_(std::move(entries)) {
  space_ = std::make_shared<Space>(std::move(parameters), std::vector<std::string>{});
  auto index = std::make_shared<std::map<Config, std::size_t>>();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Config& c = entries_[i].config;
    if (c.index.size() != space_->parameters().size())
      throw InputError(fmt::format("{}: a recorded configuration has {} values, expected {}", name_,
                                   c.index.size(), space_->parameters().size()));
    if (!index->emplace(c, i).second)
      throw InputError(fmt::format("{}: configuration {} is recorded twice", name_, space_->key(c)));
  }
  index_ = index;

  // Costs (see the header): evaluations when fewer than half of the valid entries have one,
  // else the gaps filled with the median of their kind.
  std::vector<double> valid_costs, failed_costs, all_costs;
  std::size_t valid = 0;
  for (const auto& e : entries_) {
    valid += e.result.observation.valid ? 1 : 0;
    if (!recorded_cost(e.result.cost_s)) continue;
    (e.result.observation.valid ? valid_costs : failed_costs).push_back(e.result.cost_s);
    all_costs.push_back(e.result.cost_s);
  }
  if (all_costs.empty() || 2 * valid_costs.size() < valid) {
    cost_unit_ = CostUnit::Evaluations;
    for (auto& e : entries_) e.result.cost_s = 1.0;
  } else {
    const double all = middle(all_costs);
    const double for_valid = valid_costs.empty() ? all : middle(valid_costs);
    const double for_failed = failed_costs.empty() ? all : middle(failed_costs);
    for (auto& e : entries_)
      if (!recorded_cost(e.result.cost_s)) {
        e.result.cost_s = e.result.observation.valid ? for_valid : for_failed;
        ++imputed_costs_;
      }
  }
  space_->set_membership([index](const Config& c) { return index->count(c) > 0; });
}

const RecordedResult* RecordedSpace::find(const Config& config) const {
  auto it = index_->find(config);
  return it == index_->end() ? nullptr : &entries_[it->second].result;
}

Prior prior_from_recording(const RecordedSpace& recorded, PriorOrigin origin) {
  Prior prior;
  prior.origin = std::move(origin);
  const Space& space = recorded.space();
  for (const auto& p : space.parameters()) prior.parameters.push_back({p.name, p.values});
  for (const auto& e : recorded.entries()) {
    PriorMeasurement m;
    for (std::size_t i = 0; i < e.config.index.size(); ++i) m.values.push_back(space.value(e.config, i));
    if (e.result.observation.valid) m.objective = e.result.observation.objective;
    prior.measurements.push_back(std::move(m));
  }
  return prior;
}

}  // namespace cutune::search
