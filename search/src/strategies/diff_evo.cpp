// diff_evo: differential evolution, "best1bin", over continuous index coordinates. For each
// target i: mutant = best + F (x_r1 - x_r2), binomial crossover with the target (rate CR,
// one coordinate always from the mutant), coordinates outside their range redrawn at
// random, rounded and repaired; the trial replaces its target when it is at least as good.
// Generations are synchronous: the next one is built once every trial is told.
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

  void learn(const Config&, double) override {}  // selection reads fitness from memory

  void restart() override {
    population_.clear();
    if (memory_.best()) population_.push_back(*memory_.best());
    while (population_.size() < kPopulation) population_.push_back(sampler_.any(rng_));
    generation_.reset(population_);  // the first generation evaluates the population itself
    trials_ = false;
  }

  // Trials that are at least as good replace their targets.
  void select() {
    if (!trials_) return;
    const auto& trials = generation_.members();
    for (std::size_t i = 0; i < population_.size(); ++i)
      if (*memory_.fitness(trials[i]) <= *memory_.fitness(population_[i])) population_[i] = trials[i];
  }

  void make_trials() {
    const auto& params = space_.parameters();
    const std::size_t dim = params.size(), n = population_.size();
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (*memory_.fitness(population_[i]) < *memory_.fitness(population_[best])) best = i;
    const double f = std::uniform_real_distribution<double>(kMutationLow, kMutationHigh)(rng_);
    std::vector<Config> trials;
    for (std::size_t i = 0; i < n; ++i) {
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
      trials.push_back(round_to_config(space_, trial));
    }
    generation_.reset(std::move(trials));
    trials_ = true;
  }

  std::vector<Config> population_;
  Generation generation_;
  bool trials_ = false;  ///< whether generation_ holds trials (else the population itself)
};

}  // namespace

std::unique_ptr<Strategy> make_diff_evo(const Space& space, const StrategyOptions& options) {
  return std::make_unique<DifferentialEvolution>(space, options.seed);
}

}  // namespace cutune::search
