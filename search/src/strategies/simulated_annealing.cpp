// simulated_annealing: a random adjacent neighbour of the current configuration is
// accepted if better, or with probability exp(-relative worsening / T); T decays
// geometrically per told step and the search reheats from a random configuration once T
// falls below kTemperatureMin. A batch holds several neighbours of the current point;
// each told result is judged against the current point at that moment.
#include <cmath>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's simulated_annealing defaults (kernel_tuner/strategies/simulated_annealing.py):
// T=1.0, T_min=0.001, alpha=0.995, maxiter=1 (one step per temperature); its acceptance
// also uses the worsening relative to the current cost, which makes T unit-free.
constexpr double kTemperature = 1.0;
constexpr double kTemperatureMin = 0.001;
constexpr double kAlpha = 0.995;

class SimulatedAnnealing final : public Searcher {
 public:
  SimulatedAnnealing(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}

 private:
  std::optional<Config> propose() override {
    if (!x_.has()) restart();
    if (std::optional<Config> start; !x_.ready(memory_, start)) return start;
    auto neighbours = adjacent_neighbours(space_, x_.x());
    if (neighbours.empty()) return sampler_.any(rng_);  // a single valid point: nothing to walk
    return neighbours[uniform_index(rng_, neighbours.size())];
  }

  void learn(const Config& c, double fitness) override {
    if (x_.learn(c, fitness) || !x_.f()) return;
    const double fx = *x_.f();
    const double worsening = (fitness - fx) / std::max(std::abs(fx), 1e-300);
    // NaN (a failure compared with a failure) is rejected; a finite value beats a failure.
    if (fitness < fx || uniform01(rng_) < std::exp(-worsening / temperature_)) x_.move(c, fitness);
    temperature_ *= kAlpha;
    if (temperature_ < kTemperatureMin) restart();
  }

  void restart() override {
    temperature_ = kTemperature;
    x_.set(sampler_.any(rng_), memory_);
  }

  CurrentPoint x_;
  double temperature_ = kTemperature;
};

}  // namespace

std::unique_ptr<Strategy> make_simulated_annealing(const Space& space, const StrategyOptions& options) {
  return std::make_unique<SimulatedAnnealing>(space, options.seed);
}

}  // namespace cutune::search
