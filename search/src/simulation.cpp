#include "cutune/search/simulation.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "cutune/model/errors.hpp"

namespace cutune::search {

SimulationResult simulate(const RecordedSpace& recorded, Strategy& strategy,
                          const SimulationOptions& options,
                          const std::vector<std::pair<Config, RecordedResult>>& stored) {
  Session session(strategy, options.session, &recorded.space());
  for (const auto& [config, result] : stored) session.add_stored(config, result.observation, result.cost_s);
  while (!session.done()) {
    const Session::Batch batch = session.ask(options.batch);
    for (const Config& c : batch.evaluate) {
      const RecordedResult* r = recorded.find(c);
      if (!r)  // the session checked validity, and valid means recorded
        throw std::logic_error(fmt::format("{}: configuration {} is not recorded", recorded.name(),
                                           recorded.space().key(c)));
      session.tell(c, r->observation, r->cost_s);
    }
    // Nothing in flight can be waited for here: a batch with nothing new is the end.
    if (batch.evaluate.empty() && batch.stored.empty() && !session.done() && session.in_flight() == 0)
      throw std::logic_error("simulate: the session neither proposed nor ended");
  }
  return SimulationResult{session.trace(), session.revisits(), session.end_reason()};
}

std::vector<TraceEntry> replay_trace(const RecordedSpace& recorded, const std::vector<Config>& evaluated,
                                     const std::string& what) {
  std::vector<TraceEntry> trace;
  std::set<Config> seen;
  double elapsed = 0.0;
  for (const Config& c : evaluated) {
    const RecordedResult* r = recorded.find(c);
    if (!r) {
      const bool in_range = recorded.space().violated_restriction(c) == "<not a member>";
      throw InputError(fmt::format("{}: configuration {} is not in the recorded space {}", what,
                                   in_range ? recorded.space().key(c) : "(values out of range)", recorded.name()));
    }
    if (!seen.insert(c).second) continue;
    elapsed += r->cost_s;
    trace.push_back(TraceEntry{c, r->observation, r->cost_s, elapsed, false});
  }
  return trace;
}

}  // namespace cutune::search
