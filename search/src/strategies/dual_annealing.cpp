// dual_annealing: generalized simulated annealing (Tsallis visiting distribution, heavy
// tailed, over continuous index coordinates that wrap around each parameter's range) with
// a local search from every new best configuration, after scipy.optimize.dual_annealing,
// which Kernel Tuner's dual_annealing strategy calls. The local search here is a
// first-improvement climb over the adjacent neighbourhood (scipy runs a continuous
// minimiser there). Energies are log(objective), so acceptance does not depend on units.
#include <cmath>
#include <numbers>

#include "../hill_climb.hpp"
#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// scipy.optimize.dual_annealing defaults: initial_temp=5230, restart_temp_ratio=2e-5,
// visit=2.62, accept=-5.0. An iteration is 2 * dim visits (all coordinates, then each one).
constexpr double kInitialTemp = 5230.0;
constexpr double kRestartTempRatio = 2e-5;
constexpr double kVisit = 2.62;
constexpr double kAccept = -5.0;
constexpr double kTailLimit = 1e8;

// One step of the Tsallis-Stariolo visiting distribution at temperature T.
double visit_step(double temperature, std::mt19937_64& rng) {
  constexpr double qv = kVisit, pi = std::numbers::pi;
  const double f1 = std::exp(std::log(temperature) / (qv - 1.0));
  const double f2 = std::exp((4.0 - qv) * std::log(qv - 1.0));
  const double f3 = std::exp((2.0 - qv) * std::log(2.0) / (qv - 1.0));
  const double f4 = std::sqrt(pi) * f1 * f2 / (f3 * (3.0 - qv));
  const double f5 = 1.0 / (qv - 1.0) - 0.5;
  const double f6 = pi * (1.0 - f5) / std::sin(pi * (1.0 - f5)) / std::exp(std::lgamma(2.0 - f5));
  const double sigma = std::exp(-(qv - 1.0) * std::log(f6 / f4) / (3.0 - qv));
  std::normal_distribution<double> normal;
  const double x = sigma * normal(rng);
  const double y = normal(rng);
  double v = x / std::exp((qv - 1.0) * std::log(std::abs(y)) / (3.0 - qv));
  if (!std::isfinite(v) || std::abs(v) > kTailLimit) v = std::copysign(kTailLimit * uniform01(rng), v);
  return v;
}

double energy(double fitness) { return fitness > 0.0 ? std::log(fitness) : fitness; }

class DualAnnealing final : public Searcher {
 public:
  DualAnnealing(const Space& space, std::uint64_t seed)
      : Searcher(space, seed), climb_(space, HillClimb::Neighbourhood::adjacent, HillClimb::Move::first) {}

 private:
  double temperature() const {
    const double t1 = std::exp((kVisit - 1.0) * std::log(2.0)) - 1.0;
    const double t2 = std::exp((kVisit - 1.0) * std::log(static_cast<double>(iteration_) + 2.0)) - 1.0;
    return kInitialTemp * t1 / t2;
  }

  void place(const Config& c) {
    x_.set(c, memory_);
    position_.clear();
    for (auto i : c.index) position_.push_back(static_cast<double>(i) + 0.5);  // cell centre
  }

  std::optional<Config> propose() override {
    if (!x_.has()) restart();
    if (std::optional<Config> start; !x_.ready(memory_, start)) return start;
    if (local_) {
      if (auto c = climb_.propose(memory_, rng_)) return c;
      if (!climb_.at_optimum()) return std::nullopt;
      local_ = false;
      place(climb_.current());
    }
    return visit();
  }

  Config visit() {
    const auto& params = space_.parameters();
    const std::size_t dim = params.size();
    std::vector<double> u = position_;
    for (std::size_t p = 0; p < dim; ++p) {
      if (step_ >= dim && p != step_ - dim) continue;  // second half: one coordinate at a time
      const double range = static_cast<double>(params[p].values.size());
      u[p] = std::fmod(u[p] + visit_step(temperature(), rng_), range);
      if (u[p] < 0.0) u[p] += range;
    }
    if (++step_ == 2 * dim) {
      step_ = 0;
      ++iteration_;
      if (temperature() < kInitialTemp * kRestartTempRatio) restart();
    }
    Config t;
    for (std::size_t p = 0; p < dim; ++p)
      t.index.push_back(static_cast<std::uint32_t>(std::min(u[p], static_cast<double>(params[p].values.size() - 1))));
    return repair(space_, t).value_or(x_.x());
  }

  void learn(const Config& c, double fitness) override {
    const bool new_best = fitness < best_;
    if (new_best) best_ = fitness;
    if (!x_.has() || x_.learn(c, fitness)) return;
    if (local_) {
      climb_.learn(c, fitness, rng_);
      return;
    }
    if (!x_.f()) return;
    if (accept(*x_.f(), fitness)) place(c);
    if (new_best) {  // polish the new best before annealing on
      local_ = true;
      climb_.start(c, memory_, rng_);
    }
  }

  // Generalized Metropolis criterion (Tsallis), at the acceptance temperature T / (i + 1).
  bool accept(double current, double candidate) {
    if (candidate < current) return true;
    const double delta = energy(candidate) - energy(current);
    if (!std::isfinite(delta)) return false;
    const double t_accept = temperature() / static_cast<double>(iteration_ + 1);
    const double p = 1.0 - (1.0 - kAccept) * delta / t_accept;
    if (p <= 0.0) return false;
    return uniform01(rng_) <= std::exp(std::log(p) / (1.0 - kAccept));
  }

  void restart() override {
    place(sampler_.any(rng_));
    iteration_ = 0;
    step_ = 0;
    local_ = false;
  }

  HillClimb climb_;
  CurrentPoint x_;
  std::vector<double> position_;
  bool local_ = false;
  std::size_t iteration_ = 0, step_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Strategy> make_dual_annealing(const Space& space, const StrategyOptions& options) {
  return std::make_unique<DualAnnealing>(space, options.seed);
}

}  // namespace cutune::search
