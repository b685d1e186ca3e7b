#include "cutune/search/pace.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cutune::search {

std::uint64_t planning_budget_at_pace(double time_budget_s, double per_evaluation_s, std::uint64_t size) {
  if (!(per_evaluation_s > 0.0)) return size;
  const double evaluations = std::ceil(2.0 * time_budget_s / per_evaluation_s);
  return std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::min(evaluations, static_cast<double>(size))), 1, std::max<std::uint64_t>(size, 1));
}

PaceEstimate::PaceEstimate(std::size_t compile_workers, std::size_t workers)
    : compile_workers_(compile_workers), workers_(workers) {
  if (workers == 0) throw std::logic_error("PaceEstimate: at least one evaluator");
}

void PaceEstimate::add(double compile_s, double evaluate_s) {
  compile_s_ += compile_s;
  evaluate_s_ += evaluate_s;
  ++results_;
}

double PaceEstimate::per_evaluation_s() const {
  if (results_ == 0) return 0.0;
  const auto n = static_cast<double>(results_), w = static_cast<double>(workers_);
  if (compile_workers_ == 0) return (compile_s_ + evaluate_s_) / w / n;
  return std::max(compile_s_ / static_cast<double>(compile_workers_), evaluate_s_ / w) / n;
}

PacedBudget::PacedBudget(double time_budget_s, std::size_t compile_workers, std::size_t workers, std::uint64_t size)
    : time_budget_s_(time_budget_s), size_(size), pace_(compile_workers, workers) {}

std::optional<std::uint64_t> PacedBudget::add(double compile_s, double evaluate_s) {
  if (budget_) return std::nullopt;
  pace_.add(compile_s, evaluate_s);
  if (pace_.results() < kPaceResults) return std::nullopt;
  pace_s_ = pace_.per_evaluation_s();
  budget_ = planning_budget_at_pace(time_budget_s_, *pace_s_, size_);
  return budget_;
}

}  // namespace cutune::search
