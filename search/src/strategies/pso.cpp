// pso: particle swarm over continuous index coordinates. v = w v + c1 r1 (pbest - x)
// + c2 r2 (gbest - x), r uniform per coordinate; positions are clamped into range (the
// velocity of a clamped coordinate is zeroed), rounded and repaired, and a particle whose
// position was repaired continues from the repaired configuration. Generations are
// synchronous: every particle moves once all positions of the swarm are told.
#include <algorithm>
#include <cmath>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's pso defaults (kernel_tuner/strategies/pso.py): popsize=20, w=0.5,
// c1=2.0, c2=1.0. Initial velocities (ours): uniform within ±1/4 of each range.
constexpr std::size_t kSwarm = 20;
constexpr double kInertia = 0.5, kCognitive = 2.0, kSocial = 1.0;
constexpr double kInitialVelocity = 0.25;

struct Particle {
  std::vector<double> x, v;
  Config at, best;
};

class ParticleSwarm final : public Searcher {
 public:
  ParticleSwarm(const Space& space, std::uint64_t seed) : Searcher(space, seed) {}

 private:
  std::optional<Config> propose() override {
    if (generation_.empty()) restart();
    if (auto c = generation_.take()) return c;
    if (!generation_.resolved(memory_)) return std::nullopt;
    move();
    return generation_.take();
  }

  void learn(const Config&, double) override {}  // bests are read from memory

  void restart() override {
    const auto& params = space_.parameters();
    swarm_.clear();
    std::vector<Config> positions;
    for (std::size_t i = 0; i < kSwarm; ++i) {
      Particle p;
      p.at = p.best = (i == 0 && memory_.best()) ? *memory_.best() : sampler_.any(rng_);
      p.x = position_of(p.at);
      for (const auto& param : params) {
        const double span = kInitialVelocity * static_cast<double>(param.values.size() - 1);
        p.v.push_back(std::uniform_real_distribution<double>(-span, span)(rng_));
      }
      positions.push_back(p.at);
      swarm_.push_back(std::move(p));
    }
    generation_.reset(std::move(positions));
  }

  void move() {
    const auto& params = space_.parameters();
    auto f = [&](const Config& c) { return *memory_.fitness(c); };
    const Config* global = &swarm_.front().best;
    for (auto& p : swarm_) {
      if (f(p.at) < f(p.best)) p.best = p.at;
      if (f(p.best) < f(*global)) global = &p.best;
    }
    const Config g = *global;
    std::vector<Config> positions;
    for (auto& p : swarm_) {
      for (std::size_t d = 0; d < params.size(); ++d) {
        const double r1 = uniform01(rng_), r2 = uniform01(rng_);
        p.v[d] = kInertia * p.v[d] + kCognitive * r1 * (p.best.index[d] - p.x[d]) + kSocial * r2 * (g.index[d] - p.x[d]);
        const double hi = static_cast<double>(params[d].values.size() - 1);
        p.x[d] += p.v[d];
        if (p.x[d] < 0.0 || p.x[d] > hi) {
          p.x[d] = std::clamp(p.x[d], 0.0, hi);
          p.v[d] = 0.0;
        }
      }
      p.at = round_to_config(space_, p.x);
      if (!space_.is_valid(round_plain(p.x))) p.x = position_of(p.at);  // repaired: continue from the valid configuration
      positions.push_back(p.at);
    }
    generation_.reset(std::move(positions));
  }

  static Config round_plain(const std::vector<double>& x) {
    Config c;
    for (double v : x) c.index.push_back(static_cast<std::uint32_t>(std::lround(v)));
    return c;
  }

  std::vector<Particle> swarm_;
  Generation generation_;
};

}  // namespace

std::unique_ptr<Strategy> make_pso(const Space& space, const StrategyOptions& options) {
  return std::make_unique<ParticleSwarm>(space, options.seed);
}

}  // namespace cutune::search
