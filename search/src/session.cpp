#include "cutune/search/session.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cutune::search {

const char* session_end_name(SessionEnd end) {
  switch (end) {
    case SessionEnd::Running: return "running";
    case SessionEnd::StrategyDone: return "strategy done";
    case SessionEnd::EvaluationBudget: return "evaluation budget";
    case SessionEnd::TimeBudget: return "time budget";
    case SessionEnd::RevisitsOnly: return "revisits only";
  }
  return "?";
}

Session::Session(Strategy& strategy, SessionOptions options, const Space* space)
    : strategy_(strategy), options_(options), space_(space) {
  if (!budget_left()) end(options_.max_evaluations ? SessionEnd::EvaluationBudget : SessionEnd::TimeBudget);
}

void Session::add_stored(const Config& config, const Observation& observation, double cost_s) {
  if (done_.count(config)) return;
  check_valid(config);
  stored_unreported_.push_back(record(config, observation, cost_s, /*stored=*/true));
  ++stored_count_;
  stored_cost_s_ += cost_s;
  stored_.insert(config);
  strategy_.tell(config, observation);
}

void Session::add_first(const Config& config) { first_.push_back(config); }

std::uint64_t Session::counted_evaluations() const {
  return options_.stored_count_against_budget ? trace_.size() : trace_.size() - stored_count_;
}

double Session::counted_time_s() const {
  return options_.stored_count_against_budget ? elapsed_s_ : elapsed_s_ - stored_cost_s_;
}

bool Session::budget_left() const {
  if (options_.max_evaluations && counted_evaluations() + in_flight_.size() >= *options_.max_evaluations)
    return false;
  if (options_.max_time_s && counted_time_s() >= *options_.max_time_s) return false;
  return true;
}

void Session::end(SessionEnd why) {
  if (end_ == SessionEnd::Running) end_ = why;
}

void Session::check_valid(const Config& config) const {
  if (space_ && !space_->is_valid(config))
    throw std::logic_error(fmt::format("the strategy proposed configuration {} which is not valid ({})",
                                       space_->key(config), space_->violated_restriction(config)));
}

std::size_t Session::record(const Config& config, const Observation& observation, double cost_s,
                            bool stored, std::optional<double> finished_at_s) {
  if (finished_at_s) elapsed_s_ = *finished_at_s;
  else elapsed_s_ += cost_s;
  trace_.push_back(TraceEntry{config, observation, cost_s, elapsed_s_, stored});
  done_[config] = trace_.size() - 1;
  return trace_.size() - 1;
}

Session::Outcome Session::take(const Config& config, Batch& out, bool from_strategy) {
  if (auto it = done_.find(config); it != done_.end()) {
    // A stored result proposed for the first time is progress, not a revisit: resuming a
    // large space must not look like a strategy stuck on what it has seen.
    if (stored_.erase(config)) return from_strategy ? Outcome::Stored : Outcome::Revisit;
    if (from_strategy) {
      ++revisits_;
      strategy_.tell(config, trace_[it->second].observation);
    }
    return Outcome::Revisit;
  }
  if (auto it = in_flight_.find(config); it != in_flight_.end()) {
    if (from_strategy) {
      ++revisits_;
      ++it->second;  // told when its result arrives
    }
    return Outcome::Waiting;
  }
  check_valid(config);
  in_flight_.emplace(config, 0);
  out.evaluate.push_back(config);
  return Outcome::New;
}

Session::Batch Session::ask(std::size_t max) {
  Batch out;
  out.stored = std::move(stored_unreported_);
  stored_unreported_.clear();
  // Each pass either takes something new, answers revisits (the streak grows), or stops.
  while (!done() && out.evaluate.size() < max) {
    if (!budget_left()) {
      end(options_.max_time_s && counted_time_s() >= *options_.max_time_s ? SessionEnd::TimeBudget
                                                                     : SessionEnd::EvaluationBudget);
      break;
    }
    if (!first_.empty()) {
      Config c = first_.front();
      first_.pop_front();
      take(c, out, /*from_strategy=*/false);
      continue;
    }
    std::size_t room = max - out.evaluate.size();
    if (options_.max_evaluations)
      room = std::min<std::uint64_t>(room, *options_.max_evaluations - counted_evaluations() - in_flight_.size());
    const std::vector<Config> proposals = strategy_.ask(room);
    if (proposals.empty()) {
      end(SessionEnd::StrategyDone);
      break;
    }
    bool waiting = false, progress = false;
    for (const Config& c : proposals) {
      if (!budget_left()) break;  // more than asked for, or a stored result spent the budget
      switch (take(c, out, /*from_strategy=*/true)) {
        case Outcome::New:
        case Outcome::Stored: streak_ = 0; progress = true; break;
        case Outcome::Revisit: ++streak_; break;
        case Outcome::Waiting: waiting = true; break;
      }
    }
    if (streak_ >= options_.max_consecutive_revisits) end(SessionEnd::RevisitsOnly);
    // Nothing new but revisits of configurations in flight: let their results arrive first.
    if (waiting && !progress) break;
  }
  return out;
}

void Session::tell(const Config& config, const Observation& observation, double cost_s) {
  finish(config, observation, cost_s, std::nullopt);
}

void Session::tell_at(const Config& config, const Observation& observation, double cost_s,
                      double finished_at_s) {
  if (!(finished_at_s >= elapsed_s_))
    throw std::logic_error("Session::tell_at: a result that finished before the one told last");
  finish(config, observation, cost_s, finished_at_s);
}

void Session::finish(const Config& config, const Observation& observation, double cost_s,
                     std::optional<double> finished_at_s) {
  auto it = in_flight_.find(config);
  if (it == in_flight_.end())
    throw std::logic_error("Session::tell: a configuration that ask() did not return, or told twice");
  const std::uint64_t waiting = it->second;
  in_flight_.erase(it);
  record(config, observation, cost_s, false, finished_at_s);
  strategy_.tell(config, observation);
  for (std::uint64_t i = 0; i < waiting; ++i) strategy_.tell(config, observation);
  if (options_.max_time_s && counted_time_s() >= *options_.max_time_s) end(SessionEnd::TimeBudget);
  if (options_.max_evaluations && counted_evaluations() >= *options_.max_evaluations)
    end(SessionEnd::EvaluationBudget);
}

}  // namespace cutune::search
