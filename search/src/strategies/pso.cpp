// pso: particle swarm over continuous index coordinates. v = w v + c1 r1 (pbest - x)
// + c2 r2 (gbest - x), r uniform per coordinate; positions are clamped into range (the
// velocity of a clamped coordinate is zeroed), rounded and repaired, and a particle whose
// position was repaired continues from the repaired configuration. Generations are
// synchronous: every particle moves once all positions of the swarm are told.
//
// A swarm step is a barrier: once its 20 positions are handed out, some are still running
// (N - 1 with N evaluators; with one, the rest of the session's batch of 8), and an ask
// meanwhile got a random configuration (results/strategies/strategies_parallel.md: 0.485 at N = 1,
// 0.395 at N = 8). It now gets a probe: a particle whose personal best is known makes a
// tentative step (the same velocity rule, fresh r1 and r2, towards the best personal best
// known), without moving; a probe better than its particle's personal best becomes it at
// the next step.
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

  std::optional<Config> propose_while_waiting() override {
    auto known = [&](const Config& c) { return memory_.fitness(c).has_value(); };
    const Config* global = nullptr;
    for (const auto& p : swarm_)
      if (known(p.best) && (!global || *memory_.fitness(p.best) < *memory_.fitness(*global))) global = &p.best;
    if (!global) return std::nullopt;
    for (std::size_t attempt = 0; attempt < 2 * swarm_.size(); ++attempt) {
      const std::size_t i = next_probe_++ % swarm_.size();
      const Particle& p = swarm_[i];
      if (!known(p.best)) continue;
      std::vector<double> x = p.x, v = p.v;
      step(x, v, p.best, *global);
      Config c = round_to_config(space_, x);
      if (memory_.seen(c)) continue;
      probes_.emplace_back(c, i);
      return c;
    }
    return std::nullopt;
  }

  void learn(const Config&, double) override {}  // bests are read from memory

  void restart() override {
    const auto& params = space_.parameters();
    swarm_.clear();
    probes_.clear();
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
    auto f = [&](const Config& c) { return *memory_.fitness(c); };
    for (auto& p : swarm_)
      if (f(p.at) < f(p.best)) p.best = p.at;
    // Probes told since the last step improve their particle's best.
    std::erase_if(probes_, [&](const std::pair<Config, std::size_t>& probe) {
      const auto fp = memory_.fitness(probe.first);
      if (!fp) return false;
      Particle& p = swarm_[probe.second];
      if (*fp < f(p.best)) p.best = probe.first;
      return true;
    });
    const Config* global = &swarm_.front().best;
    for (auto& p : swarm_)
      if (f(p.best) < f(*global)) global = &p.best;
    const Config g = *global;
    std::vector<Config> positions;
    for (auto& p : swarm_) {
      step(p.x, p.v, p.best, g);
      p.at = round_to_config(space_, p.x);
      if (!space_.is_valid(round_plain(p.x))) p.x = position_of(p.at);  // repaired: continue from the valid configuration
      positions.push_back(p.at);
    }
    generation_.reset(std::move(positions));
  }

  // One velocity update and move of position x towards the personal best and global best g.
  void step(std::vector<double>& x, std::vector<double>& v, const Config& best, const Config& g) {
    const auto& params = space_.parameters();
    for (std::size_t d = 0; d < params.size(); ++d) {
      const double r1 = uniform01(rng_), r2 = uniform01(rng_);
      v[d] = kInertia * v[d] + kCognitive * r1 * (best.index[d] - x[d]) + kSocial * r2 * (g.index[d] - x[d]);
      const double hi = static_cast<double>(params[d].values.size() - 1);
      x[d] += v[d];
      if (x[d] < 0.0 || x[d] > hi) {
        x[d] = std::clamp(x[d], 0.0, hi);
        v[d] = 0.0;
      }
    }
  }

  static Config round_plain(const std::vector<double>& x) {
    Config c;
    for (double v : x) c.index.push_back(static_cast<std::uint32_t>(std::lround(v)));
    return c;
  }

  std::vector<Particle> swarm_;
  Generation generation_;
  std::vector<std::pair<Config, std::size_t>> probes_;  ///< proposed while waiting, by particle
  std::size_t next_probe_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_pso(const Space& space, const StrategyOptions& options) {
  return std::make_unique<ParticleSwarm>(space, options.seed);
}

}  // namespace cutune::search
