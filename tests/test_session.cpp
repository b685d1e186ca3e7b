// The session around a strategy: exact budgets, revisits answered from results,
// stored results used instead of re-running, the revisit-only rule, and simulation.
#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "cutune/model/errors.hpp"
#include "cutune/search/lookahead.hpp"
#include "cutune/search/pace.hpp"
#include "cutune/search/recorded_space.hpp"
#include "cutune/search/session.hpp"
#include "cutune/search/simulation.hpp"
#include "cutune/search/strategy.hpp"

using namespace cutune;
using namespace cutune::search;

namespace {

Config cfg(std::uint32_t i) { return Config{{i}}; }

// Proposes a fixed script of batches (repeats included) and records what it is told.
class Scripted final : public Strategy {
 public:
  explicit Scripted(std::deque<std::vector<Config>> script) : script_(std::move(script)) {}
  std::vector<Config> ask(std::size_t max) override {
    asked_max.push_back(max);
    if (script_.empty()) return {};
    auto b = script_.front();
    script_.pop_front();
    return b;
  }
  void tell(const Config& c, const Observation& o) override { told.emplace_back(c, o); }
  std::vector<std::pair<Config, Observation>> told;
  std::vector<std::size_t> asked_max;

 private:
  std::deque<std::vector<Config>> script_;
};

// Always proposes the same configuration.
class Stuck final : public Strategy {
 public:
  std::vector<Config> ask(std::size_t) override { return {cfg(0)}; }
  void tell(const Config&, const Observation&) override { ++told; }
  int told = 0;
};

// x in 0..4, objective 5 - x (x = 4 best), cost 0.25 s for x = 0 and 4, else 0.5 s; x = 2 failed.
RecordedSpace tiny() {
  std::vector<RecordedSpace::Entry> e;
  for (std::uint32_t x = 0; x < 5; ++x)
    e.push_back({cfg(x), RecordedResult{Observation{x != 2, 5.0 - x}, (x == 0 || x == 4) ? 0.25 : 0.5}});
  return RecordedSpace("tiny", {Parameter{"x", {0, 1, 2, 3, 4}, 0}}, e);
}

}  // namespace

TEST_CASE("session: revisits are told from results, never re-run, never counted", "[session]") {
  Scripted s({{cfg(0), cfg(1)}, {cfg(1), cfg(0), cfg(2)}, {cfg(2)}});
  Session session(s, SessionOptions{});
  auto b1 = session.ask(2);
  REQUIRE(b1.evaluate == std::vector<Config>{cfg(0), cfg(1)});
  session.tell(cfg(0), {true, 3.0}, 1.0);
  session.tell(cfg(1), {true, 2.0}, 2.0);
  // ask() fills the batch: {1, 0, 2} gives cfg(2), then {2} is a revisit of cfg(2) in
  // flight, so it stops there and waits.
  auto b2 = session.ask(8);
  CHECK(b2.evaluate == std::vector<Config>{cfg(2)});
  // cfg(1) and cfg(0) were told again at once with their results.
  REQUIRE(s.told.size() == 4);
  CHECK(s.told[2].first == cfg(1));
  CHECK(s.told[2].second.objective == 2.0);
  CHECK(s.told[3].first == cfg(0));
  CHECK(session.revisits() == 3);  // cfg(2) waiting included
  session.tell(cfg(2), {false, 0.0}, 0.5);
  CHECK(s.told.size() == 6);  // its result, and the revisit that waited for it
  CHECK(session.ask(8).evaluate.empty());  // the script ends
  CHECK(session.done());
  CHECK(session.end_reason() == SessionEnd::StrategyDone);
  CHECK(session.evaluations() == 3);
  CHECK(session.revisits() == 3);
  REQUIRE(session.trace().size() == 3);
  CHECK(session.trace()[2].elapsed_s == Approx(3.5));
  CHECK_FALSE(session.trace()[2].observation.valid);
}

TEST_CASE("session: the evaluation budget is exact, in flight included", "[session]") {
  Scripted s({{cfg(0), cfg(1), cfg(2)}, {cfg(3), cfg(4)}});
  Session session(s, SessionOptions{4, std::nullopt});
  auto b1 = session.ask(3);
  CHECK(s.asked_max.front() == 3);
  CHECK(b1.evaluate.size() == 3);
  auto b2 = session.ask(8);  // 3 in flight: room for 1
  CHECK(s.asked_max.back() == 1);
  CHECK(b2.evaluate == std::vector<Config>{cfg(3)});  // cfg(4) is dropped: over budget
  CHECK(session.done());
  CHECK(session.end_reason() == SessionEnd::EvaluationBudget);
  for (std::uint32_t i = 0; i < 4; ++i) session.tell(cfg(i), {true, 1.0}, 1.0);
  CHECK(session.evaluations() == 4);
  CHECK_THROWS_AS(session.tell(cfg(4), {true, 1.0}, 1.0), std::logic_error);
}

TEST_CASE("session: the time budget is the sum of the costs", "[session]") {
  Scripted s({{cfg(0)}, {cfg(1)}, {cfg(2)}, {cfg(3)}});
  Session session(s, SessionOptions{std::nullopt, 2.5});
  for (std::uint32_t i = 0; !session.done(); ++i) {
    auto b = session.ask(1);
    for (const auto& c : b.evaluate) session.tell(c, {true, 1.0}, 1.0);
  }
  CHECK(session.evaluations() == 3);  // 1 + 1 < 2.5, the third reaches 3.0 and ends it
  CHECK(session.end_reason() == SessionEnd::TimeBudget);
  CHECK(session.elapsed_s() == Approx(3.0));
}

TEST_CASE("session: a strategy that only revisits is ended", "[session]") {
  Stuck s;
  SessionOptions o;
  o.max_consecutive_revisits = 50;
  Session session(s, o);
  auto b = session.ask(8);  // cfg(0), then a revisit of it in flight: wait
  REQUIRE(b.evaluate.size() == 1);
  CHECK_FALSE(session.done());
  session.tell(cfg(0), {true, 1.0}, 1.0);
  CHECK(session.ask(8).evaluate.empty());
  CHECK(session.done());
  CHECK(session.end_reason() == SessionEnd::RevisitsOnly);
  CHECK(session.revisits() == 51);  // the one that waited, then 50 in a row
  CHECK(s.told == 52);
  CHECK(session.evaluations() == 1);
}

TEST_CASE("session: a revisit of a configuration in flight waits for its result", "[session]") {
  Scripted s({{cfg(0)}, {cfg(0)}, {cfg(1)}});
  Session session(s, SessionOptions{});
  CHECK(session.ask(1).evaluate == std::vector<Config>{cfg(0)});
  auto b = session.ask(1);  // only a revisit of cfg(0), still in flight: wait
  CHECK(b.evaluate.empty());
  CHECK_FALSE(session.done());
  CHECK(s.told.empty());
  session.tell(cfg(0), {true, 7.0}, 1.0);
  CHECK(s.told.size() == 2);  // the result, and the waiting revisit
  CHECK(session.ask(1).evaluate == std::vector<Config>{cfg(1)});
}

TEST_CASE("session: stored results are told instead of re-run, and count", "[session]") {
  Scripted s({{cfg(0), cfg(1), cfg(2)}});
  Session session(s, SessionOptions{3, std::nullopt});
  session.add_stored(cfg(1), {true, 4.0}, 2.0);
  session.add_first(cfg(3));  // e.g. the template default
  auto b = session.ask(8);
  CHECK(b.evaluate == std::vector<Config>{cfg(3), cfg(0)});  // cfg(1) from the store; cfg(2) over budget
  REQUIRE(b.stored.size() == 1);
  CHECK(session.trace()[b.stored[0]].stored);
  CHECK(session.trace()[b.stored[0]].config == cfg(1));
  REQUIRE(s.told.size() == 1);
  CHECK(s.told[0].second.objective == 4.0);
  CHECK(session.elapsed_s() == Approx(2.0));
  CHECK(session.done());
}

TEST_CASE("session: stored results spend the budget up front, whatever the strategy proposes", "[session]") {
  // Resuming with an adaptive strategy: it proposes other configurations than the first run
  // did (its tells arrived in another order), yet a finished session evaluates nothing more.
  Scripted s({{cfg(0), cfg(1)}});
  Session session(s, SessionOptions{2, std::nullopt});
  session.add_stored(cfg(2), {true, 3.0}, 1.0);
  session.add_stored(cfg(3), {true, 5.0}, 1.0);
  CHECK(s.told.size() == 2);  // the strategy knows them before it proposes anything
  auto b = session.ask(8);
  CHECK(b.evaluate.empty());
  CHECK(b.stored.size() == 2);
  CHECK(session.done());
  CHECK(session.end_reason() == SessionEnd::EvaluationBudget);
  CHECK(session.evaluations() == 2);
}

TEST_CASE("session: stored results that do not count leave the whole budget to new ones", "[session]") {
  // A second session on stored results: the stored ones are told and answered from the store
  // but the budget is of new evaluations, as are the time budget's costs.
  Scripted s({{cfg(2), cfg(0), cfg(3), cfg(1), cfg(4)}});
  SessionOptions o{2, 10.0};
  o.stored_count_against_budget = false;
  Session session(s, o);
  session.add_stored(cfg(2), {true, 3.0}, 20.0);  // over the time budget on its own
  session.add_stored(cfg(3), {true, 5.0}, 1.0);
  auto b = session.ask(8);
  CHECK(b.evaluate == std::vector<Config>{cfg(0), cfg(1)});  // cfg(2), cfg(3) from the store; cfg(4) over budget
  CHECK(b.stored.size() == 2);
  CHECK(session.counted_evaluations() == 0);
  for (const Config& c : b.evaluate) session.tell(c, {true, 1.0}, 1.0);
  CHECK(session.done());
  CHECK(session.end_reason() == SessionEnd::EvaluationBudget);
  CHECK(session.evaluations() == 4);
  CHECK(session.counted_evaluations() == 2);
}

TEST_CASE("session: an invalid proposal is a strategy bug", "[session]") {
  RecordedSpace space = tiny();
  Scripted s({{Config{{7}}}});
  Session session(s, SessionOptions{}, &space.space());
  CHECK_THROWS_AS(session.ask(8), std::logic_error);
}

TEST_CASE("recorded space: validity means recorded, duplicates are rejected", "[session]") {
  std::vector<RecordedSpace::Entry> e{{cfg(0), {}}, {cfg(3), {}}};
  RecordedSpace r("two", {Parameter{"x", {0, 1, 2, 3}, 0}}, e);
  CHECK(r.space().count_valid() == 2);
  CHECK(r.space().is_valid(cfg(3)));
  CHECK_FALSE(r.space().is_valid(cfg(1)));
  CHECK(r.find(cfg(1)) == nullptr);
  e.push_back({cfg(0), {}});
  CHECK_THROWS_AS(RecordedSpace("dup", {Parameter{"x", {0, 1, 2, 3}, 0}}, e), InputError);
}

TEST_CASE("simulation: brute force replays the recording in simulated time", "[session]") {
  RecordedSpace space = tiny();
  auto strategy = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  SimulationOptions o;
  o.batch = 2;
  auto r = simulate(space, *strategy, o);
  REQUIRE(r.trace.size() == 5);
  CHECK(r.end == SessionEnd::StrategyDone);
  CHECK(r.trace.back().elapsed_s == Approx(2.0));  // 0.25 + 3 x 0.5 + 0.25
  CHECK(r.trace[4].observation.objective == 1.0);
  CHECK_FALSE(r.trace[2].observation.valid);

  // With a time budget of 1 s: x0 (0.25), x1 (0.75), then the batch x2, x3: x2 ends at 1.25,
  // past the budget, and x3, asked but not started (one evaluator), is dropped.
  auto again = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  o.session.max_time_s = 1.0;
  auto limited = simulate(space, *again, o);
  CHECK(limited.end == SessionEnd::TimeBudget);
  CHECK(limited.trace.size() == 3);
  CHECK(limited.trace.back().elapsed_s == Approx(1.25));
  // Two evaluators: x2 and x3 start together at 0.75 (x3 on the second), so both finish.
  auto two = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  o.workers = 2;
  CHECK(simulate(space, *two, o).trace.size() >= 4);
}

TEST_CASE("simulation: the loop's default configuration first, told to the strategy", "[session]") {
  RecordedSpace space = tiny();  // the default x = 0
  // A recording that names no default (every Kernel Tuner cache): nothing before the strategy.
  CHECK(loop_first(space).empty());
  space.set_default_named(true);
  REQUIRE(loop_first(space) == std::vector<Config>{cfg(0)});
  Scripted strategy({{cfg(3), cfg(0)}, {cfg(4)}});
  SimulationOptions o;
  o.batch = 2;
  o.first = loop_first(space);
  o.session.max_evaluations = 3;
  const auto r = simulate(space, strategy, o);
  // The default, then the strategy's x3 (its x0 a revisit, answered without a cost), then x4.
  REQUIRE(r.trace.size() == 3);
  CHECK(r.trace[0].config == cfg(0));
  CHECK(r.trace[0].elapsed_s == Approx(0.25));
  CHECK(r.trace[1].config == cfg(3));
  CHECK(r.trace[2].config == cfg(4));
  REQUIRE_FALSE(strategy.told.empty());
  CHECK(strategy.told[0].first == cfg(0));

  // A recording without the default's configuration: its first recorded one instead, as a T1
  // file whose defaults break a restriction gets the first valid configuration.
  std::vector<RecordedSpace::Entry> e;
  for (std::uint32_t x = 2; x < 5; ++x) e.push_back({cfg(x), RecordedResult{Observation{true, 5.0 - x}, 1.0}});
  RecordedSpace without("without_default", {Parameter{"x", {0, 1, 2, 3, 4}, 0}}, e);
  without.set_default_named(true);
  CHECK(loop_first(without) == std::vector<Config>{cfg(2)});
}

TEST_CASE("simulation: a cost that is all compile time leaves the evaluator nothing, never less", "[session]") {
  // A compile failure of Kernel Tuner's pnpoly (2M points, H100): 92.918166 ms of compile and
  // nothing else, whose share cost * c / c came one ulp above the cost.
  RecordedResult r;
  r.compile_s = 92.918166 / 1e3;
  r.cost_s = (92.918166 + 0.0 + 0.0) / 1e3;
  const auto [compile, evaluate] = compile_and_evaluate_s(r, CostUnit::Seconds);
  CHECK(compile == r.cost_s);
  CHECK(evaluate == 0.0);
  // Such failures among others, in the loop's pipeline: every result is told in time order.
  std::vector<RecordedSpace::Entry> e;
  ValueList values;
  for (std::uint32_t x = 0; x < 40; ++x) {
    values.emplace_back(static_cast<int>(x));
    RecordedResult v;
    v.observation = Observation{x % 3 != 0, 1.0 + x};
    v.compile_s = (x % 3 == 0 ? 92.918166 : 50.0 + x) / 1e3;
    v.benchmark_s = x % 3 == 0 ? 0.0 : 0.01;
    v.cost_s = v.compile_s + v.benchmark_s;
    e.push_back({cfg(x), v});
  }
  const RecordedSpace space("compile_failures", {Parameter{"x", values, 0}}, e);
  auto strategy = make_strategy(space.space(), StrategyOptions{"random", 50, 40});
  SimulationOptions o;
  o.compile_workers = 12;
  const auto run = simulate(space, *strategy, o);
  CHECK(run.trace.size() == 40);
}

TEST_CASE("simulation: random search is deterministic for a seed and honours the budget", "[session]") {
  RecordedSpace space = tiny();
  auto run = [&](std::uint64_t seed) {
    auto s = make_strategy(space.space(), StrategyOptions{"random", seed, 3});
    SimulationOptions o;
    o.session.max_evaluations = 3;
    return simulate(space, *s, o).trace;
  };
  auto a = run(5), b = run(5);
  REQUIRE(a.size() == 3);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].config == b[i].config);
}

TEST_CASE("simulation: another tool's run replays with the same costs", "[session]") {
  RecordedSpace space = tiny();
  auto t = replay_trace(space, {cfg(4), cfg(4), cfg(1)}, "kt run 0");
  REQUIRE(t.size() == 2);  // the repeat is a revisit
  CHECK(t[1].elapsed_s == Approx(0.75));
  CHECK_THROWS_WITH(replay_trace(space, {Config{{9}}}, "kt run 3"),
                    Catch::Matchers::Contains("kt run 3"));
}

namespace {

// 6 x 6 x 5 = 180 recorded configurations: a bowl with its optimum inside, one in seven
// failing, costs from 0.5 to 2.3 s so that evaluators finish out of order.
RecordedSpace recorded_bowl() {
  std::vector<Parameter> ps;
  for (const char* name : {"a", "b", "c"}) {
    ValueList values;
    for (int i = 0; i < (name[0] == 'c' ? 5 : 6); ++i) values.emplace_back(i);
    ps.push_back(Parameter{name, values, values.front()});
  }
  std::vector<RecordedSpace::Entry> e;
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      for (std::uint32_t c = 0; c < 5; ++c) {
        const double f = 1.0 + (a - 2.0) * (a - 2.0) + 2.0 * (b - 4.0) * (b - 4.0) + (c - 1.0) * (c - 1.0);
        const bool valid = (a * 5 + b * 3 + c) % 7 != 3 || f == 1.0;
        e.push_back({Config{{a, b, c}}, RecordedResult{Observation{valid, f}, 0.5 + 0.1 * ((a * 7 + b * 3 + c * 5) % 19)}});
      }
  return RecordedSpace("bowl", ps, e);
}

// The simulation loop as it was before it had evaluators: ask a batch, evaluate it in
// order, each result adding its cost to the clock; once the time budget is spent, the rest
// of the batch is not started.
SimulationResult sequential(const RecordedSpace& recorded, Strategy& strategy, const SimulationOptions& options) {
  Session session(strategy, options.session, &recorded.space());
  while (!session.done()) {
    const Session::Batch batch = session.ask(options.batch);
    for (const Config& c : batch.evaluate) {
      if (session.time_spent()) break;
      const RecordedResult* r = recorded.find(c);
      session.tell(c, r->observation, r->cost_s);
    }
    if (batch.evaluate.empty() && batch.stored.empty() && !session.done() && session.in_flight() == 0)
      FAIL("the session neither proposed nor ended");
  }
  return SimulationResult{session.trace(), session.revisits(), session.end_reason(), 0.0, {}, {}};
}

}  // namespace

TEST_CASE("simulation: one evaluator is the sequential loop, trace for trace", "[session]") {
  const RecordedSpace space = recorded_bowl();
  const std::string name = GENERATE(from_range(strategy_names()));
  INFO(name);
  for (std::size_t batch : {1, 8}) {
    SimulationOptions o;
    o.batch = batch;
    o.session.max_time_s = 60.0;
    auto a = make_strategy(space.space(), StrategyOptions{name, 7, 50});
    auto b = make_strategy(space.space(), StrategyOptions{name, 7, 50});
    const SimulationResult events = simulate(space, *a, o);
    const SimulationResult loop = sequential(space, *b, o);
    REQUIRE(events.trace.size() == loop.trace.size());
    CHECK(events.trace.size() > 20);
    for (std::size_t i = 0; i < loop.trace.size(); ++i) {
      CHECK(events.trace[i].config == loop.trace[i].config);
      CHECK(events.trace[i].elapsed_s == loop.trace[i].elapsed_s);  // exactly: the same sums
    }
    CHECK(events.end == loop.end);
    CHECK(events.revisits == loop.revisits);
    CHECK(events.idle_s == 0.0);
  }
}

TEST_CASE("simulation: N evaluators run at once in simulated wall time", "[session]") {
  RecordedSpace space = tiny();  // costs 0.25, 0.5, 0.5, 0.5, 0.25
  auto strategy = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  SimulationOptions o;
  o.workers = 2;
  auto r = simulate(space, *strategy, o);
  // A: x0 0..0.25, x2 0.25..0.75, x4 0.75..1.0; B: x1 0..0.5, x3 0.5..1.0 (ties: started first).
  REQUIRE(r.trace.size() == 5);
  const double finish[] = {0.25, 0.5, 0.75, 1.0, 1.0};
  for (std::uint32_t i = 0; i < 5; ++i) {
    CHECK(r.trace[i].config == cfg(i));
    CHECK(r.trace[i].elapsed_s == finish[i]);
    CHECK(r.trace[i].cost_s == space.find(cfg(i))->cost_s);  // the evaluation's own cost
  }
  CHECK(r.idle_s == 0.0);

  // The time budget is wall time: at 0.5 s x0 and x1 are told, x2 (started at 0.25) still
  // finishes; with one proposal asked at a time, nothing else starts.
  auto again = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  o.batch = 1;
  o.session.max_time_s = 0.5;
  auto limited = simulate(space, *again, o);
  CHECK(limited.end == SessionEnd::TimeBudget);
  REQUIRE(limited.trace.size() == 3);
  CHECK(limited.trace.back().elapsed_s == 0.75);

  o.workers = 0;
  CHECK_THROWS_AS(simulate(space, *again, o), InputError);
}

namespace {
// Random proposals that remember the budgets they are told.
class BudgetListener final : public Strategy {
 public:
  explicit BudgetListener(const Space& space) : inner_(make_strategy(space, {"random", 3})) {}
  std::vector<Config> ask(std::size_t max) override { return inner_->ask(max); }
  void tell(const Config& c, const Observation& o) override { inner_->tell(c, o); }
  bool learn_budget(std::uint64_t evaluations) override {
    learnt.push_back(evaluations);
    return true;
  }
  std::vector<std::uint64_t> learnt;

 private:
  std::unique_ptr<Strategy> inner_;
};
}  // namespace

TEST_CASE("simulation: a time budget alone tells the strategy the budget of its first results' pace", "[session]") {
  const RecordedSpace space = recorded_bowl();
  for (std::size_t workers : {1, 3}) {
    INFO(workers << " evaluators");
    SimulationOptions options;
    options.workers = workers;
    options.session.max_time_s = 40.0;
    options.budget_from_pace = true;
    BudgetListener listener(space.space());
    const SimulationResult r = simulate(space, listener, options);
    REQUIRE(r.trace.size() > kPaceResults);
    // The first kPaceResults results, each costing its evaluator its whole cost.
    double cost = 0.0;
    for (std::size_t i = 0; i < kPaceResults; ++i) cost += r.trace[i].cost_s;
    const double pace = cost / static_cast<double>(workers) / static_cast<double>(kPaceResults);
    REQUIRE(r.pace_s);
    CHECK(*r.pace_s == Approx(pace));
    const std::uint64_t expected = planning_budget_at_pace(40.0, pace, space.entries().size());
    CHECK(expected == static_cast<std::uint64_t>(std::ceil(80.0 / pace)));
    CHECK(listener.learnt == std::vector<std::uint64_t>{expected});
    CHECK(r.learnt_budget == expected);

    // Told an evaluation budget, or without a time budget, it learns nothing.
    options.budget_from_pace = false;
    BudgetListener told(space.space());
    CHECK_FALSE(simulate(space, told, options).learnt_budget);
    CHECK(told.learnt.empty());
    options.budget_from_pace = true;
    options.session.max_time_s.reset();
    BudgetListener untimed(space.space());
    simulate(space, untimed, options);
    CHECK(untimed.learnt.empty());
  }
}

TEST_CASE("pace: the slower stage of the pipeline, and the budget it gives", "[session]") {
  PaceEstimate serial(0, 2);
  serial.add(1.0, 3.0);
  serial.add(2.0, 2.0);
  CHECK(serial.per_evaluation_s() == Approx(2.0));  // (3 + 5) / 2 evaluators / 2 results
  PaceEstimate pipeline(4, 1);
  CHECK(pipeline.per_evaluation_s() == 0.0);
  pipeline.add(2.0, 0.5);
  pipeline.add(6.0, 0.25);
  CHECK(pipeline.per_evaluation_s() == Approx(1.0));  // compiling: 8 s / 4 workers / 2
  PaceEstimate gpu_bound(16, 1);
  gpu_bound.add(2.0, 0.5);
  gpu_bound.add(6.0, 0.25);
  CHECK(gpu_bound.per_evaluation_s() == Approx(0.375));  // evaluating: 0.75 s / 2
  CHECK(planning_budget_at_pace(10.0, 1.0, 1000) == 20);
  CHECK(planning_budget_at_pace(10.0, 1.0, 15) == 15);    // at most the space
  CHECK(planning_budget_at_pace(0.001, 1.0, 15) == 1);    // at least one
  CHECK(planning_budget_at_pace(10.0, 0.0, 15) == 15);    // no pace: the space
}

TEST_CASE("session: results told out of time order are a caller bug", "[session]") {
  Scripted s({{cfg(0), cfg(1)}});
  Session session(s, SessionOptions{});
  auto b = session.ask(2);
  REQUIRE(b.evaluate.size() == 2);
  session.tell_at(cfg(0), {true, 1.0}, 2.0, 2.0);
  CHECK(session.elapsed_s() == 2.0);
  CHECK_THROWS_AS(session.tell_at(cfg(1), {true, 1.0}, 1.0, 1.5), std::logic_error);
}

TEST_CASE("simulation: every strategy keeps N evaluators busy until the end", "[session]") {
  const RecordedSpace space = recorded_bowl();
  const std::string name = GENERATE(from_range(strategy_names()));
  for (std::size_t workers : {4, 8}) {
    INFO(name << " with " << workers << " evaluators");
    SimulationOptions o;
    o.workers = workers;
    o.session.max_time_s = 20.0;
    auto strategy = make_strategy(space.space(), StrategyOptions{name, 3, std::nullopt});
    const SimulationResult r = simulate(space, *strategy, o);
    // Never an idle evaluator while the session runs, and about N times the evaluations of
    // one evaluator in the same wall time (costs average 1.4 s: 20 s buys ~14 at N = 1).
    CHECK(r.idle_s == 0.0);
    CHECK(r.end == SessionEnd::TimeBudget);
    CHECK(r.trace.size() >= 10 * workers);
    std::set<Config> unique;
    for (const auto& t : r.trace) unique.insert(t.config);
    CHECK(unique.size() == r.trace.size());
    CHECK(r.trace.back().elapsed_s >= 20.0);
  }
}

namespace {

// x in 0..3, objective 4 - x; each compiles for 1 s and benchmarks for 0.1 s (cost 1.1 s).
RecordedSpace compiled_four() {
  std::vector<RecordedSpace::Entry> e;
  for (std::uint32_t x = 0; x < 4; ++x) {
    RecordedResult r{Observation{true, 4.0 - x}, 1.1};
    r.compile_s = 1.0;
    r.benchmark_s = 0.1;
    e.push_back({cfg(x), r});
  }
  return RecordedSpace("compiled", {Parameter{"x", {0, 1, 2, 3}, 0}}, e);
}

// The bowl with each cost split into 90% compile and 10% benchmark, as cutune's recordings are.
RecordedSpace compiled_bowl() {
  const RecordedSpace bowl = recorded_bowl();
  std::vector<RecordedSpace::Entry> e = bowl.entries();
  for (auto& entry : e) {
    entry.result.compile_s = 0.9 * entry.result.cost_s;
    entry.result.benchmark_s = 0.1 * entry.result.cost_s;
  }
  std::vector<Parameter> ps(bowl.space().parameters().begin(), bowl.space().parameters().end());
  return RecordedSpace("compiled bowl", ps, e);
}

// Counts the proposals it has made and not yet been told at each ask: how far ahead of its
// results it was asked to plan.
class CountsAhead final : public Strategy {
 public:
  explicit CountsAhead(std::unique_ptr<Strategy> inner) : inner_(std::move(inner)) {}
  std::vector<Config> ask(std::size_t max) override {
    most_asked = std::max(most_asked, max);
    auto b = inner_->ask(max);
    ahead.insert(b.begin(), b.end());
    most_ahead = std::max(most_ahead, ahead.size());
    return b;
  }
  void tell(const Config& c, const Observation& o) override {
    ahead.erase(c);
    inner_->tell(c, o);
  }
  std::set<Config> ahead;
  std::size_t most_ahead = 0, most_asked = 0;

 private:
  std::unique_ptr<Strategy> inner_;
};

}  // namespace

TEST_CASE("simulation: the tuning loop's compile workers compile ahead, evaluators only benchmark", "[session]") {
  const RecordedSpace space = compiled_four();
  auto strategy = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  SimulationOptions o;
  o.compile_workers = 2;
  const SimulationResult r = simulate(space, *strategy, o);
  // Compiles x0, x1 over 0..1 s and x2, x3 over 1..2 s; the evaluator benchmarks each 0.1 s
  // as soon as it is compiled: 1.1, 1.2, then 2.1, 2.2. In series they would end at 4.4 s.
  REQUIRE(r.trace.size() == 4);
  const double finish[] = {1.1, 1.2, 2.1, 2.2};
  for (std::uint32_t i = 0; i < 4; ++i) {
    CHECK(r.trace[i].config == cfg(i));
    CHECK(r.trace[i].elapsed_s == Approx(finish[i]));
    CHECK(r.trace[i].cost_s == 1.1);  // the configuration's recorded cost, as in series
  }
  CHECK(r.end == SessionEnd::StrategyDone);

  // One compile worker: compiles back to back, each benchmark overlapping the next compile.
  auto again = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  o.compile_workers = 1;
  const SimulationResult one = simulate(space, *again, o);
  REQUIRE(one.trace.size() == 4);
  CHECK(one.trace.back().elapsed_s == Approx(4.1));

  // The time budget is the pipeline's wall clock: 1.15 s ends it after x0 (told at 1.1) and
  // x1 (already held by the evaluator) finish; x2 and x3 are not started.
  auto limited = make_strategy(space.space(), StrategyOptions{"brute_force", 1, std::nullopt});
  o.compile_workers = 2;
  o.lookahead = 2;
  o.session.max_time_s = 1.15;
  const SimulationResult l = simulate(space, *limited, o);
  CHECK(l.end == SessionEnd::TimeBudget);
  CHECK(l.trace.size() == 2);
}

TEST_CASE("simulation: a strategy is asked no further ahead of its results than the lookahead", "[session]") {
  const RecordedSpace space = compiled_bowl();
  for (std::size_t lookahead : {1, 3, 10}) {
    INFO("lookahead " << lookahead);
    CountsAhead strategy(make_strategy(space.space(), StrategyOptions{"bayes_opt", 2, 60}));
    SimulationOptions o;
    o.compile_workers = 4;
    o.lookahead = lookahead;
    o.session.max_evaluations = 60;
    const SimulationResult r = simulate(space, strategy, o);
    CHECK(r.trace.size() == 60);
    CHECK(strategy.most_asked <= lookahead);
    // The lookahead counts what is queued, compiling or compiled; the evaluator holds 2 more.
    CHECK(strategy.most_ahead <= lookahead + 2);
    CHECK(strategy.most_ahead >= std::min<std::size_t>(lookahead, 4));
  }
}

TEST_CASE("simulation: the loop's lookahead rule", "[session]") {
  // One per compile worker and the GPU workers' slots for a strategy that learns; a few
  // hundred for one that does not (it plans nothing from results).
  CHECK(proposals_ahead(true, 12, 2) == 14);
  CHECK(proposals_ahead(true, 1, 2) == 3);
  CHECK(proposals_ahead(true, 0, 2) == 3);
  CHECK(proposals_ahead(false, 12, 2) == kBlindLookahead);
  CHECK(proposals_ahead(false, 1, 1024) == 1024);
}

TEST_CASE("simulation: every strategy runs in the tuning loop's pipeline, deterministic for a seed", "[session]") {
  const RecordedSpace space = compiled_bowl();
  const std::string name = GENERATE(from_range(strategy_names()));
  INFO(name);
  auto run = [&] {
    SimulationOptions o;
    o.compile_workers = 3;
    o.session.max_time_s = 20.0;
    auto strategy = make_strategy(space.space(), StrategyOptions{name, 5, std::nullopt});
    return simulate(space, *strategy, o);
  };
  const SimulationResult a = run(), b = run();
  REQUIRE(a.trace.size() == b.trace.size());
  for (std::size_t i = 0; i < a.trace.size(); ++i) CHECK(a.trace[i].config == b.trace[i].config);
  std::set<Config> unique;
  for (const auto& t : a.trace) unique.insert(t.config);
  CHECK(unique.size() == a.trace.size());
  // Costs average 1.4 s, 90% of it compile: 20 s in series buys ~14 evaluations; three compile
  // workers about three times as many, unless the strategy ends first.
  if (a.end == SessionEnd::TimeBudget) CHECK(a.trace.size() >= 30);
}
