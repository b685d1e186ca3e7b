// diff_evo: differential evolution, "best1bin", over continuous index coordinates. For each
// target i: mutant = best + F (x_r1 - x_r2), binomial crossover with the target (rate CR,
// one coordinate always from the mutant), coordinates outside their range redrawn at
// random, rounded and repaired; the trial replaces its target when it is at least as good.
// Generations are synchronous: the next one is built once every trial is told.
//
// That is a barrier: once the 20 trials are handed out, some are still running (N - 1 with
// N evaluators; with one, the rest of the session's batch of 8), and an ask meanwhile got
// a random configuration (results/strategies/strategies_parallel.md: 0.463 at N = 1, 0.417 at N = 8).
// It now gets an extra trial for the next target in turn, made the same way from the best
// member told so far; an extra trial told by the next selection replaces its target when
// at least as good.
#include <algorithm>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's diff_evo calls scipy.optimize.differential_evolution with popsize=20 and
// method "best1bin"; scipy's defaults: mutation F dithered in [0.5, 1) per generation,
// recombination CR=0.7, out-of-bounds coordinates replaced by random ones.
constexpr std::size_t kPopulation = 20;
constexpr double kMutationLow = 0.5, kMutationHigh = 1.0;
constexpr double kRecombination = 0.7;

class DifferentialEvolution final : public Searcher {
 public:
  DifferentialEvolution(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}

 private:
  std::optional<Config> propose() override {
    if (generation_.empty()) restart();
    if (auto c = generation_.take()) return c;
    if (!generation_.resolved(memory_)) return std::nullopt;
    select();
    make_trials();
    return generation_.take();
  }

  std::optional<Config> propose_while_waiting() override {
    const std::size_t n = population_.size();
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < n; ++i) {
      const auto f = memory_.fitness(population_[i]);
      if (f && (!best || *f < *memory_.fitness(population_[*best]))) best = i;
    }
    if (!best) return std::nullopt;
    for (std::size_t attempt = 0; attempt < n; ++attempt) {
      const std::size_t i = next_extra_++ % n;
      const double f = std::uniform_real_distribution<double>(kMutationLow, kMutationHigh)(rng_);
      Config trial = trial_for(i, *best, f);
      if (memory_.seen(trial)) continue;
      extra_trials_.emplace_back(trial, i);
      return trial;
    }
    return std::nullopt;
  }

  void learn(const Config&, double) override {}  // selection reads fitness from memory

  void restart() override {
    population_.clear();
    extra_trials_.clear();
    if (memory_.best()) population_.push_back(*memory_.best());
    while (population_.size() < kPopulation) population_.push_back(sampler_.any(rng_));
    generation_.reset(population_);  // the first generation evaluates the population itself
    trials_ = false;
  }

  // Trials that are at least as good replace their targets: the generation's, then the
  // extra ones told by now.
  void select() {
    auto f = [&](const Config& c) { return *memory_.fitness(c); };
    if (trials_) {
      const auto& trials = generation_.members();
      for (std::size_t i = 0; i < population_.size(); ++i)
        if (f(trials[i]) <= f(population_[i])) population_[i] = trials[i];
    }
    std::erase_if(extra_trials_, [&](const std::pair<Config, std::size_t>& extra) {
      const auto fe = memory_.fitness(extra.first);
      if (!fe) return false;
      if (*fe <= f(population_[extra.second])) population_[extra.second] = extra.first;
      return true;
    });
  }

  void make_trials() {
    const std::size_t n = population_.size();
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (*memory_.fitness(population_[i]) < *memory_.fitness(population_[best])) best = i;
    const double f = std::uniform_real_distribution<double>(kMutationLow, kMutationHigh)(rng_);
    std::vector<Config> trials;
    for (std::size_t i = 0; i < n; ++i) trials.push_back(trial_for(i, best, f));
    generation_.reset(std::move(trials));
    trials_ = true;
  }

  // best1bin for target i: best + f (x_r1 - x_r2), crossed with the target.
  Config trial_for(std::size_t i, std::size_t best, double f) {
    const auto& params = space_.parameters();
    const std::size_t dim = params.size(), n = population_.size();
    std::size_t r1, r2;
    do r1 = uniform_index(rng_, n); while (r1 == i && n > 1);
    do r2 = uniform_index(rng_, n); while ((r2 == i || r2 == r1) && n > 2);
    std::vector<double> trial = position_of(population_[i]);
    const std::size_t forced = uniform_index(rng_, dim);
    for (std::size_t p = 0; p < dim; ++p) {
      if (p != forced && uniform01(rng_) >= kRecombination) continue;
      double v = population_[best].index[p] + f * (double(population_[r1].index[p]) - double(population_[r2].index[p]));
      const double hi = static_cast<double>(params[p].values.size() - 1);
      if (v < -0.5 || v > hi + 0.5) v = static_cast<double>(uniform_index(rng_, params[p].values.size()));
      trial[p] = v;
    }
    return round_to_config(space_, trial);
  }

  std::vector<Config> population_;
  Generation generation_;
  bool trials_ = false;  ///< whether generation_ holds trials (else the population itself)
  std::vector<std::pair<Config, std::size_t>> extra_trials_;  ///< proposed while waiting, by target
  std::size_t next_extra_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_diff_evo(const Space& space, const StrategyOptions& options) {
  return std::make_unique<DifferentialEvolution>(space, options.seed);
}

}  // namespace cutune::search
