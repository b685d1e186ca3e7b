// surrogate_vnd: a local search whose every step is screened by a cheap surrogate, after the
// idea of Kernel Tuner 1.5's hybrid_vndx (gen_hybrid_vndx.py; Willemsen, van Stein, van
// Werkhoven, "Automated Algorithm Design For Auto-Tuning Optimizers", MLSys 2026). A step
// draws a pool of candidates (neighbours of the current configuration, in the neighbourhood
// that has lately paid, a child of two of the best results, and random ones), predicts each
// with k nearest neighbours (Hamming distance) among all results, and proposes the pool's best
// prediction. The result is accepted as the current configuration if better, or with an
// annealing probability; kRestartAfter steps without acceptance restart from a random one.
//
// Where it differs from Kernel Tuner's, and why:
// - Annealing on the relative worsening (as our simulated_annealing): Kernel Tuner's starts at a
//   temperature of 1.0 in the objective's own unit, so on times of a few milliseconds nearly
//   every step is accepted.
// - The elite set holds the best results (Kernel Tuner's heap pops its best one each time it
//   overflows, keeping the worst five).
// - Unseen candidates only, so no tabu list: a configuration is never evaluated twice.
// - The prediction is of log(objective), failures at the worst valid value seen.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

constexpr std::size_t kNeighbourCandidates = 4;  ///< Kernel Tuner's cand_pool / 2
constexpr std::size_t kPoolSize = 8;             ///< Kernel Tuner's cand_pool
constexpr std::size_t kNearest = 5;              ///< Kernel Tuner's k
constexpr std::size_t kElite = 5;                ///< Kernel Tuner's elite_size
constexpr std::size_t kRestartAfter = 100;       ///< Kernel Tuner's restart_iter
constexpr double kTemperature = 0.1, kCooling = 0.995;
constexpr double kReward = 1.1, kPenalty = 0.9;  ///< a neighbourhood's weight after a step

class SurrogateVnd final : public Searcher {
 public:
  SurrogateVnd(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : Searcher(space, seed),
        initial_(budget && *budget <= kModelLedBudget ? initial_sample_size(budget) : 0) {}

 private:
  std::optional<Config> propose() override {
    if (memory_.told_count() < initial_) return initial_sample_member(initial_);
    if (!x_.has()) {
      if (const Config* best = memory_.best()) x_.set(*best, memory_);
      else restart();
    }
    if (std::optional<Config> start; !x_.ready(memory_, start)) return start;

    const std::size_t nm = pick_neighbourhood();
    std::set<Config> pool;
    std::vector<Config> near = nm == 0 ? adjacent_neighbours(space_, x_.x()) : hamming_neighbours(space_, x_.x());
    std::erase_if(near, [&](const Config& c) { return memory_.seen(c); });
    for (std::size_t i = 0; i < kNeighbourCandidates && !near.empty(); ++i) {
      const std::size_t at = uniform_index(rng_, near.size());
      pool.insert(near[at]);
      near[at] = near.back();
      near.pop_back();
    }
    if (auto child = crossover(); child && !memory_.seen(*child)) pool.insert(std::move(*child));
    for (std::size_t tries = 0; pool.size() < kPoolSize && tries < 4 * kPoolSize; ++tries)
      if (Config c = sampler_.any(rng_); !memory_.seen(c)) pool.insert(std::move(c));
    if (pool.empty()) return std::nullopt;

    const Config* best = nullptr;
    double best_prediction = INFINITY;
    for (const Config& c : pool)
      if (const double p = predict(c); !best || p < best_prediction) best_prediction = p, best = &c;
    proposed_by_.emplace(*best, nm);
    return *best;
  }

  // While results are pending the pool is drawn again from the same current point: its
  // candidates exclude what is in flight, so the batch spreads over the neighbourhood.
  std::optional<Config> propose_while_waiting() override {
    return memory_.told_count() >= initial_ && x_.has() && x_.f() ? propose() : std::nullopt;
  }

  void learn(const Config& c, double fitness) override {
    catch_up();
    if (x_.learn(c, fitness) || !x_.f()) return;
    const auto by = proposed_by_.find(c);
    if (by == proposed_by_.end()) return;  // not a step from the current point
    const std::size_t nm = by->second;
    proposed_by_.erase(by);
    const double fx = *x_.f();
    const double t = kTemperature * std::pow(kCooling, static_cast<double>(steps_++));
    if (accept_relative(fx, fitness, t, rng_)) {
      x_.move(c, fitness);
      weight_[nm] *= kReward;
      idle_ = 0;
    } else {
      weight_[nm] *= kPenalty;
      ++idle_;
    }
    const double total = weight_[0] + weight_[1];
    weight_[0] /= total, weight_[1] /= total;
    if (idle_ >= kRestartAfter) restart();
  }

  void restart() override {
    x_.set(sampler_.any(rng_), memory_);
    idle_ = 0;
    steps_ = 0;
  }

  std::size_t pick_neighbourhood() { return uniform01(rng_) * (weight_[0] + weight_[1]) < weight_[0] ? 0 : 1; }

  // A uniform crossover of two of the best results, repaired to a valid configuration.
  std::optional<Config> crossover() {
    if (elite_.size() < 2) return std::nullopt;
    const std::size_t a = uniform_index(rng_, elite_.size());
    std::size_t b = uniform_index(rng_, elite_.size() - 1);
    if (b >= a) ++b;
    return repair(space_, uniform_crossover(elite_[a].second, elite_[b].second, rng_));
  }

  // The surrogate's values of the results told since the last call (memory_.order() grows by
  // one per new result; a revisit adds none): log(objective) while every valid value is
  // positive, NaN for a failure (predict() reads the worst valid value there). Cached: predict()
  // reads every result for each of 8 candidates per step, up to thousands of results.
  void catch_up() {
    const auto& order = memory_.order();
    for (std::size_t i = values_.size(); i < order.size(); ++i) {
      const double f = *memory_.fitness(order[i]);
      if (std::isfinite(f)) {
        if (positive_ && f <= 0.0) {  // log no longer applies: every value again, raw
          positive_ = false;
          for (std::size_t j = 0; j < i; ++j) values_[j] = std::isnan(values_[j]) ? values_[j] : *memory_.fitness(order[j]);
        }
        worst_ = std::max(worst_, f);
        elite_.emplace_back(f, order[i]);
        std::sort(elite_.begin(), elite_.end());
        if (elite_.size() > kElite) elite_.pop_back();
      }
      values_.push_back(std::isfinite(f) ? (positive_ ? std::log(f) : f) : NAN);
    }
  }

  // The mean of the kNearest results closest in Hamming distance.
  double predict(const Config& c) const {
    if (values_.empty() || !std::isfinite(worst_)) return 0.0;
    const double failed = positive_ ? std::log(worst_) : worst_;
    const auto& order = memory_.order();
    std::vector<std::pair<std::size_t, double>> d;
    d.reserve(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) {
      std::size_t diff = 0;
      for (std::size_t p = 0; p < c.index.size(); ++p) diff += c.index[p] != order[i].index[p];
      d.emplace_back(diff, std::isnan(values_[i]) ? failed : values_[i]);
    }
    const std::size_t k = std::min(kNearest, d.size());
    std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    double sum = 0.0;
    for (std::size_t i = 0; i < k; ++i) sum += d[i].second;
    return sum / static_cast<double>(k);
  }

  std::size_t initial_;
  CurrentPoint x_;
  double weight_[2] = {1.0, 1.0};
  std::size_t idle_ = 0, steps_ = 0;
  std::map<Config, std::size_t> proposed_by_;
  std::vector<std::pair<double, Config>> elite_;
  std::vector<double> values_;  ///< per memory_.order() entry, as catch_up() says
  double worst_ = -INFINITY;
  bool positive_ = true;
};

}  // namespace

std::unique_ptr<Strategy> make_surrogate_vnd(const Space& space, const StrategyOptions& options) {
  return std::make_unique<SurrogateVnd>(space, options.seed, options.budget);
}

}  // namespace cutune::search
