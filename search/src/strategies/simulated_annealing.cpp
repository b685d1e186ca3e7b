// simulated_annealing, after Kernel Tuner 1.5.0's (kernel_tuner/strategies/simulated_annealing.py):
// a random neighbour of the current configuration (each parameter with probability
// kJumpRate jumps to a random Hamming neighbour, then one adjacent step) is accepted if
// better, or with probability exp(-relative worsening / T). The temperature is a function
// of the unique evaluations, not of the steps: T falls from kTemperature to kTemperatureMin
// over the evaluation budget (over kScheduleLength evaluations without one), so revisits do
// not cool the search and the whole budget is annealed; then the search reheats from a
// random configuration. A batch holds several neighbours of the current point; each told
// result is judged against the current point at that moment.
//
// Why not the older defaults (T 1.0, alpha 0.995 per step, adjacent steps only) that this
// file had: a relative temperature of 1.0 accepts a configuration twice as slow with
// probability 1/e, so the first several hundred steps were a random walk over adjacent
// configurations, which scored below random sampling (results/strategies/strategies.json: -0.09).
#include <algorithm>
#include <cmath>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

constexpr double kTemperature = 0.1;
constexpr double kTemperatureMin = 1e-4;
constexpr double kAlpha = 0.9975;
constexpr double kJumpRate = 0.2;
/// Steps of kAlpha from kTemperature down to kTemperatureMin (Kernel Tuner's max_iter, 3681).
const double kScheduleLength = std::ceil(std::log(kTemperatureMin / kTemperature) / std::log(kAlpha));

class SimulatedAnnealing final : public Searcher {
 public:
  SimulatedAnnealing(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : Searcher(space, seed), schedule_(budget ? static_cast<double>(std::max<std::uint64_t>(*budget, 1))
                                                : kScheduleLength) {}

 private:
  std::optional<Config> propose() override {
    if (!x_.has()) restart();
    if (std::optional<Config> start; !x_.ready(memory_, start)) return start;
    Config c = x_.x();
    for (std::size_t i = 0; i < space_.parameters().size(); ++i)
      if (uniform01(rng_) < kJumpRate) c = random_of(hamming_neighbours(space_, c), c);
    return random_of(adjacent_neighbours(space_, c), c);
  }

  void learn(const Config& c, double fitness) override {
    if (x_.learn(c, fitness) || !x_.f()) return;
    if (accept_relative(*x_.f(), fitness, temperature(), rng_)) x_.move(c, fitness);
    if (temperature() <= kTemperatureMin) {  // annealed: reheat from a random configuration
      cycle_start_ = memory_.told_count();
      restart();
    }
  }

  // Also called by the Searcher when every proposal has been seen: a new random start,
  // the schedule goes on.
  void restart() override { x_.set(sampler_.any(rng_), memory_); }

  double temperature() const {
    const double progress = static_cast<double>(memory_.told_count() - cycle_start_) / schedule_;
    return kTemperature * std::pow(kAlpha, kScheduleLength * progress);
  }

  Config random_of(const std::vector<Config>& options, const Config& otherwise) {
    return options.empty() ? otherwise : options[uniform_index(rng_, options.size())];
  }

  CurrentPoint x_;
  double schedule_;
  std::size_t cycle_start_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_simulated_annealing(const Space& space, const StrategyOptions& options) {
  return std::make_unique<SimulatedAnnealing>(space, options.seed, options.budget);
}

}  // namespace cutune::search
