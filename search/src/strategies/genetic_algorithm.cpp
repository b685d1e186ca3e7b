// genetic_algorithm: generational GA over index vectors. Parents by rank-weighted
// selection, uniform crossover, per-gene mutation to a random value, repair of invalid
// children, and the best kElites carried over unchanged (elitism: ours, Kernel Tuner keeps
// none). A converged population (only known children) restarts around the best.
#include <algorithm>
#include <numeric>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's genetic_algorithm defaults (kernel_tuner/strategies/genetic_algorithm.py):
// popsize=20, method="uniform" crossover, mutation_chance=10 (each gene mutates with
// probability 1/10).
constexpr std::size_t kPopulation = 20;
constexpr double kMutationRate = 1.0 / 10.0;
constexpr std::size_t kElites = 2;

class GeneticAlgorithm final : public Searcher {
 public:
  GeneticAlgorithm(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}

 private:
  std::optional<Config> propose() override {
    if (generation_.empty()) restart();
    if (auto c = generation_.take()) return c;
    if (!generation_.resolved(memory_)) return std::nullopt;
    breed();
    return generation_.take();
  }

  void learn(const Config&, double) override {}  // selection reads fitness from memory

  void restart() override {
    std::vector<Config> members;
    if (memory_.best()) members.push_back(*memory_.best());
    while (members.size() < kPopulation) members.push_back(sampler_.any(rng_));
    generation_.reset(std::move(members));
  }

  void breed() {
    // Rank the population (failures last); rank r gets selection weight P - r.
    std::vector<Config> ranked = generation_.members();
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Config& a, const Config& b) {
      return *memory_.fitness(a) < *memory_.fitness(b);
    });
    std::vector<double> weights(ranked.size());
    std::iota(weights.rbegin(), weights.rend(), 1.0);
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());

    std::vector<Config> next(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(std::min(kElites, ranked.size())));
    while (next.size() < kPopulation) {
      const Config& a = ranked[pick(rng_)];
      const Config& b = ranked[pick(rng_)];
      Config child = a;
      for (std::size_t p = 0; p < child.index.size(); ++p)
        if (uniform01(rng_) < 0.5) child.index[p] = b.index[p];
      for (std::size_t p = 0; p < child.index.size(); ++p) {
        const auto n = space_.parameters()[p].values.size();
        if (n > 1 && uniform01(rng_) < kMutationRate) child.index[p] = static_cast<std::uint32_t>(uniform_index(rng_, n));
      }
      next.push_back(repair(space_, child).value_or(a));
    }
    generation_.reset(std::move(next));
  }

  Generation generation_;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic_algorithm(const Space& space, const StrategyOptions& options) {
  return std::make_unique<GeneticAlgorithm>(space, options.seed);
}

}  // namespace cutune::search
