#include "cutune/search/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>

#include "cutune/model/errors.hpp"
#include "cutune/search/lookahead.hpp"
#include "cutune/search/pace.hpp"

namespace cutune::search {

std::pair<double, double> compile_and_evaluate_s(const RecordedResult& r, CostUnit unit) {
  const double parts = r.compile_s + r.verify_s + r.benchmark_s;
  // At most the whole cost: a failure with a compile time alone gave cost * c / c one ulp above
  // the cost (Kernel Tuner's pnpoly at 2M points, 16 of its compile failures), and the evaluator's
  // negative share finished before the result told last (Session::tell_at refused it).
  const double compile =
      unit == CostUnit::Seconds && parts > 0.0 ? std::min(r.cost_s, r.cost_s * r.compile_s / parts) : 0.0;
  return {compile, r.cost_s - compile};
}

namespace {

/// Slots of an evaluator in the pipeline: one running, one staged (a GPU worker's kMaxInFlight).
constexpr std::size_t kEvaluatorSlots = 2;

// SimulationOptions::budget_from_pace: the strategy learns its budget from the first results.
class BudgetFromPace {
 public:
  BudgetFromPace(const RecordedSpace& recorded, Strategy& strategy, const SimulationOptions& options)
      : recorded_(recorded), strategy_(strategy) {
    if (options.budget_from_pace && options.session.max_time_s)
      paced_.emplace(*options.session.max_time_s, options.compile_workers, options.workers, recorded.entries().size());
  }

  void told(const RecordedResult& result) {
    if (!paced_) return;
    const auto [compile_s, evaluate_s] = compile_and_evaluate_s(result, recorded_.cost_unit());
    if (const auto budget = paced_->add(compile_s, evaluate_s)) strategy_.learn_budget(*budget);
  }
  /// Into the result: what the strategy learnt, if it did.
  SimulationResult finish(SimulationResult r) const {
    if (paced_) r.pace_s = paced_->pace_s(), r.learnt_budget = paced_->budget();
    return r;
  }

 private:
  const RecordedSpace& recorded_;
  Strategy& strategy_;
  std::optional<PacedBudget> paced_;
};

// The tuning loop's pipeline (simulation.hpp): compile workers ahead of evaluators.
SimulationResult simulate_pipeline(const RecordedSpace& recorded, Strategy& strategy,
                                   const SimulationOptions& options, Session& session, BudgetFromPace& pace) {
  struct Item {
    Config config;
    const RecordedResult* result;
    double evaluate_s;
  };
  struct Compiling {
    double finish_s;
    std::uint64_t started;
    Item item;
    bool operator>(const Compiling& o) const {
      return finish_s != o.finish_s ? finish_s > o.finish_s : started > o.started;
    }
  };
  struct Evaluator {
    std::deque<Item> held;  ///< front: running since started_s
    double started_s = 0.0;
  };
  const std::size_t lookahead = pipeline_lookahead(strategy, options);
  std::deque<std::pair<Config, const RecordedResult*>> queued;  // proposed, not compiling yet
  std::priority_queue<Compiling, std::vector<Compiling>, std::greater<>> compiling;
  std::deque<Item> compiled;  // waiting for an evaluator's slot
  std::vector<Evaluator> evaluators(options.workers);
  double now = session.elapsed_s(), idle_s = 0.0;
  std::uint64_t started = 0;

  auto feed = [&] {
    for (std::size_t ahead; !session.done() && (ahead = queued.size() + compiling.size() + compiled.size()) < lookahead;) {
      const Session::Batch batch = session.ask(std::min(options.batch, lookahead - ahead));
      for (const Config& c : batch.evaluate) {
        const RecordedResult* r = recorded.find(c);
        if (!r)  // the session checked validity, and valid means recorded
          throw std::logic_error(fmt::format("{}: configuration {} is not recorded", recorded.name(),
                                             recorded.space().key(c)));
        queued.emplace_back(c, r);
      }
      if (batch.evaluate.empty() && batch.stored.empty()) break;  // wait for those in flight
    }
  };
  feed();
  while (true) {
    while (compiling.size() < options.compile_workers && !queued.empty()) {
      auto [config, r] = std::move(queued.front());
      queued.pop_front();
      const auto [compile_s, evaluate_s] = compile_and_evaluate_s(*r, recorded.cost_unit());
      compiling.push(Compiling{now + compile_s, started++, Item{std::move(config), r, evaluate_s}});
    }
    for (auto& e : evaluators) {
      while (e.held.size() < kEvaluatorSlots && !compiled.empty()) {
        if (e.held.empty()) e.started_s = now;
        e.held.push_back(std::move(compiled.front()));
        compiled.pop_front();
      }
    }
    // The next event: an evaluation or a compile finishing (a compile first at the same time).
    Evaluator* finishing = nullptr;
    double finish_s = INFINITY;
    for (auto& e : evaluators)
      if (!e.held.empty() && e.started_s + e.held.front().evaluate_s < finish_s)
        finishing = &e, finish_s = e.started_s + e.held.front().evaluate_s;
    if (!compiling.empty() && compiling.top().finish_s <= finish_s) finishing = nullptr;
    if (!finishing && compiling.empty()) {
      // Nothing compiling or held, so nothing queued or compiled either: the end, or a stall.
      if (!session.done()) throw std::logic_error("simulate: the session neither proposed nor ended");
      break;
    }
    const double t = finishing ? finish_s : compiling.top().finish_s;
    if (!session.done()) {
      std::size_t running = 0;
      for (const auto& e : evaluators) running += e.held.empty() ? 0 : 1;
      idle_s += static_cast<double>(options.workers - running) * (t - now);
    }
    now = t;
    if (!finishing) {
      Compiling c = compiling.top();
      compiling.pop();
      compiled.push_back(std::move(c.item));
      continue;
    }
    Item done = std::move(finishing->held.front());
    finishing->held.pop_front();
    finishing->started_s = now;
    session.tell_at(done.config, done.result->observation, done.result->cost_s, now);
    pace.told(*done.result);
    if (session.time_spent()) {
      // As the loop at its time budget: what is queued, compiling or compiled is dropped;
      // what the evaluators hold finishes.
      queued.clear();
      compiling = {};
      compiled.clear();
    }
    feed();
  }
  return pace.finish({session.trace(), session.revisits(), session.end_reason(), idle_s, {}, {}});
}

}  // namespace

std::vector<Config> loop_first(const RecordedSpace& recorded) {
  const Space& space = recorded.space();
  if (!space.default_named()) return {};
  Config c = space.default_config();
  if (space.is_valid(c)) return {c};
  Config first;
  if (space.next_valid(first)) return {first};
  return {};
}

std::size_t pipeline_lookahead(const Strategy& strategy, const SimulationOptions& options) {
  return options.lookahead ? options.lookahead
                           : proposals_ahead(strategy.learns(), options.compile_workers, kEvaluatorSlots * options.workers);
}

SimulationResult simulate(const RecordedSpace& recorded, Strategy& strategy,
                          const SimulationOptions& options,
                          const std::vector<std::pair<Config, RecordedResult>>& stored) {
  if (options.workers == 0) throw InputError("simulation: at least one evaluator (worker) is needed");
  Session session(strategy, options.session, &recorded.space());
  for (const auto& [config, result] : stored) session.add_stored(config, result.observation, result.cost_s);
  for (const Config& c : options.first) session.add_first(c);
  BudgetFromPace pace(recorded, strategy, options);
  if (options.compile_workers > 0) return simulate_pipeline(recorded, strategy, options, session, pace);

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
      // Spent: what was asked and not started is dropped, as the tuning loop drops what is
      // queued or compiling at its time budget. In series a batch of 8 asked at once used to
      // run to its end: 10.4 s against --time-budget 7 on the test cache.
      if (session.time_spent()) {
        proposed.clear();
        break;
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
    pace.told(*next.result);
  }
  return pace.finish({session.trace(), session.revisits(), session.end_reason(), idle_s, {}, {}});
}

std::vector<TraceEntry> replay_trace(const RecordedSpace& recorded, const std::vector<Config>& evaluated,
                                     const std::string& what) {
  std::vector<TraceEntry> trace;
  std::set<Config> seen;
  double elapsed = 0.0;
  for (const Config& c : evaluated) {
    const RecordedResult* r = recorded.find(c);
    if (!r) {
      const bool in_range = recorded.space().violated_restriction(c) == Space::kNotAMember;
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
