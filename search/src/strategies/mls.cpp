// mls: multi-start local search. Best-improvement hill climbing over the Hamming
// neighbourhood (the whole neighbourhood is evaluated, then the search moves to its best);
// at a local optimum, a new climb starts from a random configuration.
#include "../hill_climb.hpp"
#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's mls (kernel_tuner/strategies/mls.py): neighbor="Hamming", restart=False
// (best improvement), random restarts.
class MultiStartLocalSearch final : public Searcher {
 public:
  MultiStartLocalSearch(const Space& space, std::uint64_t seed)
      : Searcher(space, seed), climb_(space, HillClimb::Neighbourhood::hamming, HillClimb::Move::best) {}

 private:
  std::optional<Config> propose() override {
    if (!climb_.started()) climb_.start(sampler_.any(rng_), memory_, rng_);
    if (auto c = climb_.propose(memory_, rng_)) return c;
    if (!climb_.at_optimum()) return std::nullopt;
    restart();
    return climb_.propose(memory_, rng_);
  }
  void learn(const Config& c, double fitness) override { climb_.learn(c, fitness, rng_); }
  void restart() override {
    // A start that is not told yet, when there is one: a known start repeats a finished climb.
    auto start = random_unseen();
    climb_.start(start ? *start : sampler_.any(rng_), memory_, rng_);
  }

  HillClimb climb_;
};

}  // namespace

std::unique_ptr<Strategy> make_mls(const Space& space, const StrategyOptions& options) {
  return std::make_unique<MultiStartLocalSearch>(space, options.seed);
}

}  // namespace cutune::search
