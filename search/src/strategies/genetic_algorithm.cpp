// genetic_algorithm: generational GA over index vectors. Parents by rank-weighted
// selection, uniform crossover, per-gene mutation to a random value, repair of invalid
// children, and the best kElites carried over unchanged (elitism: ours, Kernel Tuner keeps
// none). A converged population (only known children) restarts around the best.
//
// The generation is a barrier: once its 20 members are handed out, some are still running
// (N - 1 with N evaluators; with one, the rest of the batch of 8 the session fills), and an
// ask meanwhile got a random configuration (results/strategies/strategies_parallel.md: 0.458 at N = 1,
// 0.316 at N = 8, with 7 of every 27 proposals random). It now gets an extra child, bred the same way from the
// members told so far (and the previous generation); extras told by the time the next
// generation is bred compete in its selection like members.
#include <algorithm>
#include <numeric>
#include <set>

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

  std::optional<Config> propose_while_waiting() override {
    // Parents: what is told of this generation, its extras and the previous generation.
    std::vector<Config> pool = told_extras();
    for (const std::vector<Config>* from : std::initializer_list<const std::vector<Config>*>{&generation_.members(), &previous_})
      for (const Config& c : *from)
        if (memory_.is_told(c)) pool.push_back(c);
    if (pool.empty()) return std::nullopt;
    const std::vector<Config> ranked = rank(std::move(pool));
    std::discrete_distribution<std::size_t> pick = selection(ranked.size());
    for (int attempt = 0; attempt < 8; ++attempt) {
      Config child = child_of(ranked, pick);
      if (!memory_.seen(child)) {
        extras_.push_back(child);
        return child;
      }
    }
    return std::nullopt;
  }

  void learn(const Config&, double) override {}  // selection reads fitness from memory

  void restart() override {
    std::vector<Config> members;
    if (memory_.best()) members.push_back(*memory_.best());
    while (members.size() < kPopulation) members.push_back(sampler_.any(rng_));
    generation_.reset(std::move(members));
  }

  // Distinct, best first (failures last).
  std::vector<Config> rank(std::vector<Config> configs) const {
    std::vector<Config> ranked;
    std::set<Config> in;
    for (auto& c : configs)
      if (in.insert(c).second) ranked.push_back(std::move(c));
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Config& a, const Config& b) {
      return *memory_.fitness(a) < *memory_.fitness(b);
    });
    return ranked;
  }

  // Rank r of n gets selection weight n - r.
  static std::discrete_distribution<std::size_t> selection(std::size_t n) {
    std::vector<double> weights(n);
    std::iota(weights.rbegin(), weights.rend(), 1.0);
    return std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
  }

  Config child_of(const std::vector<Config>& ranked, std::discrete_distribution<std::size_t>& pick) {
    const Config& a = ranked[pick(rng_)];
    const Config& b = ranked[pick(rng_)];
    Config child = uniform_crossover(a, b, rng_);
    for (std::size_t p = 0; p < child.index.size(); ++p) {
      const auto n = space_.parameters()[p].values.size();
      if (n > 1 && uniform01(rng_) < kMutationRate) child.index[p] = static_cast<std::uint32_t>(uniform_index(rng_, n));
    }
    return repair(space_, child).value_or(a);
  }

  std::vector<Config> told_extras() const {
    std::vector<Config> told;
    for (const Config& c : extras_)
      if (memory_.is_told(c)) told.push_back(c);
    return told;
  }

  void breed() {
    // The members and the extras told by now compete together.
    std::vector<Config> all = generation_.members();
    const std::vector<Config> extras = told_extras();
    all.insert(all.end(), extras.begin(), extras.end());
    std::erase_if(extras_, [&](const Config& c) { return memory_.is_told(c); });
    const std::vector<Config> ranked = rank(std::move(all));
    std::discrete_distribution<std::size_t> pick = selection(ranked.size());
    std::vector<Config> next(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(std::min(kElites, ranked.size())));
    while (next.size() < kPopulation) next.push_back(child_of(ranked, pick));
    previous_ = generation_.members();
    generation_.reset(std::move(next));
  }

  std::vector<Config> extras_;    ///< bred while waiting, not yet taken into a selection
  std::vector<Config> previous_;  ///< the generation before this one (all told)
  Generation generation_;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic_algorithm(const Space& space, const StrategyOptions& options) {
  return std::make_unique<GeneticAlgorithm>(space, options.seed);
}

}  // namespace cutune::search
