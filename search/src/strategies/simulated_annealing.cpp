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
    if (!x_) restart();
    if (!fx_) {
      if (auto f = memory_.fitness(*x_)) {
        fx_ = f;
      } else {
        if (x_handed_out_) return std::nullopt;  // waiting for the starting point
        x_handed_out_ = true;
        return x_;
      }
    }
    auto neighbours = adjacent_neighbours(space_, *x_);
    if (neighbours.empty()) return sampler_.any(rng_);  // a single valid point: nothing to walk
    return neighbours[uniform_index(rng_, neighbours.size())];
  }

  void learn(const Config& c, double fitness) override {
    if (!x_) return;
    if (c == *x_) {
      fx_ = fitness;
      return;
    }
    if (!fx_) return;
    const double worsening = (fitness - *fx_) / std::max(std::abs(*fx_), 1e-300);
    // NaN (a failure compared with a failure) is rejected; a finite value beats a failure.
    if (fitness < *fx_ || uniform01(rng_) < std::exp(-worsening / temperature_)) {
      x_ = c;
      fx_ = fitness;
    }
    temperature_ *= kAlpha;
    if (temperature_ < kTemperatureMin) restart();
  }

  void restart() override {
    temperature_ = kTemperature;
    x_ = sampler_.any(rng_);
    fx_ = memory_.fitness(*x_);
    x_handed_out_ = false;
  }

  std::optional<Config> x_;
  std::optional<double> fx_;
  bool x_handed_out_ = false;
  double temperature_ = kTemperature;
};

}  // namespace

std::unique_ptr<Strategy> make_simulated_annealing(const Space& space, const StrategyOptions& options) {
  return std::make_unique<SimulatedAnnealing>(space, options.seed);
}

}  // namespace cutune::search
