// greedy_ils: greedy iterated local search. First-improvement hill climbing over the
// Hamming neighbourhood (neighbours in random order); at a local optimum, perturb the best
// configuration found so far and climb again; after kNoImprovement told results without a
// new best, restart from a random configuration.
#include "../hill_climb.hpp"
#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's greedy_ils defaults (kernel_tuner/strategies/greedy_ils.py):
// neighbor="Hamming", restart=True (first improvement), no_improvement=50, random_walk=0.3.
constexpr std::size_t kNoImprovement = 50;
constexpr double kRandomWalk = 0.3;  ///< fraction of the parameters a perturbation changes

class GreedyIls final : public Searcher {
 public:
  GreedyIls(const Space& space, std::uint64_t seed)
      : Searcher(space, seed), climb_(space, HillClimb::Neighbourhood::hamming, HillClimb::Move::first) {}

 private:
  std::optional<Config> propose() override {
    if (!climb_.started()) climb_.start(sampler_.any(rng_), memory_, rng_);
    if (auto c = climb_.propose(memory_, rng_)) return c;
    if (!climb_.at_optimum()) return std::nullopt;
    if (since_best_ >= kNoImprovement || !memory_.best()) {
      since_best_ = 0;
      climb_.start(sampler_.any(rng_), memory_, rng_);
    } else {
      climb_.start(mutate(space_, *memory_.best(), kRandomWalk, rng_), memory_, rng_);
    }
    return climb_.propose(memory_, rng_);
  }

  void learn(const Config& c, double fitness) override {
    if (fitness < best_seen_) {
      best_seen_ = fitness;
      since_best_ = 0;
    } else {
      ++since_best_;
    }
    climb_.learn(c, fitness, rng_);
  }

  void restart() override { climb_.start(sampler_.any(rng_), memory_, rng_); }

  HillClimb climb_;
  double best_seen_ = std::numeric_limits<double>::infinity();
  std::size_t since_best_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_greedy_ils(const Space& space, const StrategyOptions& options) {
  return std::make_unique<GreedyIls>(space, options.seed);
}

}  // namespace cutune::search
