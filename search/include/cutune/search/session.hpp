#pragma once
// A tuning session around a Strategy: budgets, revisits, stored results, trace.
//
// - Only unique evaluations count. A configuration proposed again is a revisit: it is
//   answered from this session's results (told back to the strategy at once), never run
//   and never counted. A revisit of one still being evaluated is told when its result
//   arrives.
// - Stored results (an earlier session's measurements) are results too: when the strategy
//   proposes one, it is told the stored result instead of running it again. Whether they
//   count against the budgets is SessionOptions::stored_count_against_budget: they do when
//   an interrupted session is resumed (with the same seed it ends where an uninterrupted
//   one would), they do not for a second session that should evaluate its own budget of
//   new configurations.
// - The evaluation budget is exact: never more unique configurations in flight or done.
//   The time budget is the sum of the evaluations' costs (seconds): once it is reached no
//   more configurations are proposed; those in flight still finish and are told. With
//   several evaluators at once (GPUs, or simulated ones) the caller tells each result with
//   the time it arrived (tell_at): the session's clock is then that wall clock, not the
//   sum of the costs, which grows up to N times faster than time with N evaluators.
// - A strategy that proposes `max_consecutive_revisits` configurations in a row without a
//   new one is ended (end reason "revisits only"): it is stuck, and every revisit is free,
//   so it would otherwise never stop. Revisits of configurations still in flight do not
//   count towards that: the strategy is waiting for their results.
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "cutune/search/strategy.hpp"

namespace cutune::search {

struct SessionOptions {
  std::optional<std::uint64_t> max_evaluations;  ///< unique evaluations; none = no limit
  std::optional<double> max_time_s;              ///< sum of the evaluations' costs
  std::uint64_t max_consecutive_revisits = 1000;
  /// true (resume): add_stored results count as evaluations and their costs as time, so
  /// the budgets cover the stored and the new together. false (a second session on the
  /// same results): the budgets count new evaluations only; stored results are still never
  /// re-run and still told to the strategy.
  bool stored_count_against_budget = true;
};

/// One unique evaluation, in the order results arrived.
struct TraceEntry {
  Config config;
  Observation observation;
  double cost_s = 0.0;     ///< what evaluating it cost
  /// When this result arrived: the cumulative cost up to and including this one, or, told
  /// by tell_at, the wall clock of the evaluators working in parallel.
  double elapsed_s = 0.0;
  bool stored = false;     ///< answered from stored results, not run in this session
};

enum class SessionEnd { Running, StrategyDone, EvaluationBudget, TimeBudget, RevisitsOnly };
const char* session_end_name(SessionEnd end);

class Session {
 public:
  /// `space`, when given, is checked: a strategy proposing a configuration it rejects is a
  /// bug in the strategy (std::logic_error naming it), never evaluated.
  Session(Strategy& strategy, SessionOptions options, const Space* space = nullptr);

  /// A result known before the session (stored by an earlier one): the strategy is told at
  /// once. With stored_count_against_budget it also counts against the budgets at once, so
  /// that resuming a session, whatever order an adaptive strategy proposes in, never
  /// evaluates more than the budget in all (a re-run of a finished session evaluates
  /// nothing). The next ask() reports it in Batch::stored; if the strategy proposes it, it
  /// is answered from the store.
  void add_stored(const Config& config, const Observation& observation, double cost_s);
  /// A configuration to evaluate before the strategy's own proposals (the template
  /// default, a user's candidates): it counts like any other, and the strategy is told.
  void add_first(const Config& config);

  struct Batch {
    std::vector<Config> evaluate;     ///< new configurations to run, then tell() each
    std::vector<std::size_t> stored;  ///< trace indices answered from stored results
  };
  /// Up to `max` new configurations to evaluate. Revisits and stored results are answered
  /// inside. An empty `evaluate` with !done() means: wait for the ones in flight.
  Batch ask(std::size_t max);
  /// The result of a configuration that ask() returned.
  void tell(const Config& config, const Observation& observation, double cost_s);
  /// The same, from evaluators working in parallel: the result arrived at `finished_at_s`
  /// on the session's clock (elapsed_s() then is that time; the time budget is wall time).
  /// std::logic_error if it is before elapsed_s() (results are told in the order they finish).
  void tell_at(const Config& config, const Observation& observation, double cost_s, double finished_at_s);

  /// No more configurations will be proposed (some may still be in flight).
  bool done() const { return end_ != SessionEnd::Running; }
  SessionEnd end_reason() const { return end_; }
  /// The time budget is spent, whatever ended the session first: what is asked and not yet
  /// started should not start.
  bool time_spent() const { return options_.max_time_s && counted_time_s() >= *options_.max_time_s; }
  std::size_t in_flight() const { return in_flight_.size(); }
  std::uint64_t evaluations() const { return trace_.size(); }
  /// The evaluations the budget counts: all of them, or only the new ones when stored
  /// results do not count (SessionOptions::stored_count_against_budget).
  std::uint64_t counted_evaluations() const;
  std::uint64_t revisits() const { return revisits_; }
  double elapsed_s() const { return elapsed_s_; }
  const std::vector<TraceEntry>& trace() const { return trace_; }

 private:
  bool budget_left() const;
  double counted_time_s() const;
  void end(SessionEnd why);
  std::size_t record(const Config& config, const Observation& observation, double cost_s,
                     bool stored, std::optional<double> finished_at_s = std::nullopt);
  void check_valid(const Config& config) const;
  void finish(const Config& config, const Observation& observation, double cost_s,
              std::optional<double> finished_at_s);
  /// Handles one proposal; returns true when it is new (to evaluate or answered from store).
  enum class Outcome { New, Stored, Revisit, Waiting };
  Outcome take(const Config& config, Batch& out, bool from_strategy);

  Strategy& strategy_;
  SessionOptions options_;
  const Space* space_;
  std::set<Config> stored_;                    ///< added by add_stored, not proposed yet
  std::vector<std::size_t> stored_unreported_;  ///< trace indices for the next Batch::stored
  std::deque<Config> first_;
  std::map<Config, std::size_t> done_;         ///< config -> trace index
  std::map<Config, std::uint64_t> in_flight_;  ///< config -> revisits waiting for it
  std::vector<TraceEntry> trace_;
  double elapsed_s_ = 0.0;
  std::uint64_t stored_count_ = 0;  ///< add_stored results in the trace
  double stored_cost_s_ = 0.0;      ///< and their costs
  std::uint64_t revisits_ = 0, streak_ = 0;
  SessionEnd end_ = SessionEnd::Running;
};

}  // namespace cutune::search
