#include "cutune/search/recorded_space.hpp"

#include <fmt/format.h>

#include "cutune/model/errors.hpp"

namespace cutune::search {

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
