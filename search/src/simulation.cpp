#include "cutune/search/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <set>
#include <stdexcept>

#include "cutune/model/errors.hpp"

namespace cutune::search {

SimulationResult simulate(const RecordedSpace& recorded, Strategy& strategy,
                          const SimulationOptions& options,
                          const std::vector<std::pair<Config, RecordedResult>>& stored) {
  if (options.workers == 0) throw InputError("simulation: at least one evaluator (worker) is needed");
  Session session(strategy, options.session, &recorded.space());
  for (const auto& [config, result] : stored) session.add_stored(config, result.observation, result.cost_s);

  struct Running {
    double finish_s;
    std::uint64_t started;  ///< ties finish in the order they started
    Config config;
    const RecordedResult* result;
    bool operator>(const Running& o) const {
      return finish_s != o.finish_s ? finish_s > o.finish_s : started > o.started;
    }
  };
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  std::deque<Config> proposed;  // asked, not started: the evaluators take them in order
  const std::size_t window = std::max(options.batch, options.workers);
  double now = session.elapsed_s(), idle_s = 0.0;
  std::uint64_t started = 0;
  while (true) {
    while (running.size() < options.workers) {
      if (proposed.empty()) {
        if (session.done() || session.in_flight() >= window) break;
        const Session::Batch batch = session.ask(window - session.in_flight());
        proposed.insert(proposed.end(), batch.evaluate.begin(), batch.evaluate.end());
        if (proposed.empty()) {
          if (!batch.stored.empty()) continue;  // answered from the store: ask again
          // Nothing new while nothing runs and nothing can arrive: a stall.
          if (running.empty() && !session.done())
            throw std::logic_error("simulate: the session neither proposed nor ended");
          break;  // wait for results in flight
        }
      }
      Config c = std::move(proposed.front());
      proposed.pop_front();
      const RecordedResult* r = recorded.find(c);
      if (!r)  // the session checked validity, and valid means recorded
        throw std::logic_error(fmt::format("{}: configuration {} is not recorded", recorded.name(),
                                           recorded.space().key(c)));
      const double finish_s = now + r->cost_s;  // N = 1: the same sum as Session::tell makes
      running.push(Running{finish_s, started++, std::move(c), r});
    }
    if (running.empty()) break;
    const Running next = running.top();
    running.pop();
    if (!session.done())  // after the end, evaluators run dry by design
      idle_s += static_cast<double>(options.workers - 1 - running.size()) * (next.finish_s - now);
    now = next.finish_s;
    session.tell_at(next.config, next.result->observation, next.result->cost_s, now);
  }
  return SimulationResult{session.trace(), session.revisits(), session.end_reason(), idle_s};
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
