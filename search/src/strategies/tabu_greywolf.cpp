// tabu_greywolf: a small pack that follows its three best members (the grey-wolf leaders),
// after the idea of Kernel Tuner 1.5's adaptive_tabu_greywolf (Willemsen, van Stein, van
// Werkhoven, "Automated Algorithm Design for Auto-Tuning Optimizers", MLSys 2026), written
// for cutune's asynchronous ask/tell:
// - a pack of kPack configurations, first random ones;
// - a child is bred for a non-leader member: each parameter from one of the three leaders or
//   the member itself, uniformly; with a shaking probability that grows while the search
//   stagnates, one parameter jumps to a random value or the child moves to a random
//   neighbour (adjacent in the first half of the budget, Hamming after);
// - tabu: a child that was evaluated before moves to an unseen Hamming neighbour;
// - the child replaces its member when better, or by annealing on the relative difference
//   (temperature falling exponentially over the budget, reheated while stagnating);
// - after kStagnation evaluations without a new best the worst 30% are replaced by random
//   configurations.
// Steady state rather than generations: each child is judged against its member when its
// result arrives, so with N evaluators N children are in flight and none waits for a barrier.
// Why: on the recorded spaces whose whole scoring window is 12 to 240 evaluations (cutune's
// own recordings, results/spaces), Kernel Tuner's adaptive_tabu_greywolf scored 0.33 on scan
// and 0.36 on matmul where bandit_portfolio scored -0.40 and 0.07: a pack of 8 that
// recombines its leaders exploits after 8 evaluations, where the portfolio's local searches
// and populations of 20 are still exploring.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

constexpr std::size_t kPack = 8;
constexpr std::size_t kLeaders = 3;
constexpr double kShake = 0.2;       ///< base probability of a random move of a child
constexpr double kJump = 0.15;       ///< share of the moves that jump one parameter anywhere
constexpr double kT0 = 0.05;         ///< start temperature, relative difference (5% worse: 1/e)
constexpr double kTMin = 1e-4;
constexpr double kDecay = 5.0;       ///< T = T0 exp(-kDecay x budget spent)
constexpr double kRestartShare = 0.3;
/// Evaluations without a new best before the worst members are replaced (Kernel Tuner: 80
/// iterations of 5 children; a budget's tenth here, between 24 and 200).
std::size_t stagnation_limit(std::optional<std::uint64_t> budget) {
  return budget ? std::clamp<std::size_t>(*budget / 10, 24, 200) : 200;
}

struct Member {
  Config config;
  double fitness;
};
bool fitter(const Member& a, const Member& b) { return a.fitness < b.fitness; }

class TabuGreywolf final : public Searcher {
 public:
  TabuGreywolf(const Space& space, const StrategyOptions& options)
      : Searcher(space, options.seed), budget_(options.budget), stagnation_limit_(stagnation_limit(options.budget)) {}

 private:
  std::optional<Config> propose() override {
    if (pack_.size() + newcomers_.size() < kPack) {  // the first members, and after a restart
      auto c = random_unseen();
      if (c) newcomers_.insert(*c);
      return c;
    }
    if (pack_.size() <= kLeaders) return std::nullopt;  // wait for the first members
    return child();
  }

  std::optional<Config> propose_while_waiting() override { return pack_.size() > kLeaders ? child() : std::nullopt; }

  std::optional<Config> child() {
    std::sort(pack_.begin(), pack_.end(), fitter);
    const std::size_t followers = pack_.size() - kLeaders;
    const std::size_t slot = kLeaders + (next_slot_++ % followers);
    const Config& self = pack_[slot].config;
    Config c = self;
    for (std::size_t p = 0; p < c.index.size(); ++p) {
      const std::size_t from = uniform_index(rng_, kLeaders + 1);
      c.index[p] = (from < kLeaders ? pack_[from].config : self).index[p];
    }
    const double frac = spent();
    const double shake = std::min(0.5, kShake * (1.0 + static_cast<double>(stagnant_) / static_cast<double>(stagnation_limit_)));
    if (uniform01(rng_) < shake) {
      if (uniform01(rng_) < kJump) {
        const std::size_t p = uniform_index(rng_, c.index.size());
        c.index[p] = static_cast<std::uint32_t>(uniform_index(rng_, space_.parameters()[p].values.size()));
      } else if (auto fixed = repair(space_, c)) {
        auto near = frac < 0.5 ? adjacent_neighbours(space_, *fixed) : hamming_neighbours(space_, *fixed);
        if (!near.empty()) c = near[uniform_index(rng_, near.size())];
      }
    }
    auto fixed = repair(space_, c);
    if (!fixed) return std::nullopt;
    if (memory_.seen(*fixed)) {  // tabu: step to an unseen Hamming neighbour instead
      auto near = hamming_neighbours(space_, *fixed);
      std::erase_if(near, [&](const Config& n) { return memory_.seen(n); });
      if (near.empty()) return std::nullopt;  // the Searcher counts it stale and restarts
      fixed = near[uniform_index(rng_, near.size())];
    }
    parent_of_.emplace(*fixed, pack_[slot].config);
    return fixed;
  }

  void learn(const Config& c, double f) override {
    ++told_;
    if (f < best_) {
      best_ = f;
      stagnant_ = 0;
    } else if (++stagnant_ >= stagnation_limit_) {
      replace_worst();
    }
    if (newcomers_.erase(c)) {
      join(c, f);
      return;
    }
    auto it = parent_of_.find(c);
    if (it == parent_of_.end()) {  // a result this pack did not ask for (default, another arm): may join
      if (std::isfinite(f)) join(c, f);
      return;
    }
    const Config parent = it->second;
    parent_of_.erase(it);
    auto member = std::find_if(pack_.begin(), pack_.end(), [&](const Member& m) { return m.config == parent; });
    if (member == pack_.end() || !std::isfinite(f)) return;  // the parent left the pack meanwhile
    // A member that failed (a random newcomer can) is replaced by any child that runs: its
    // relative difference would be -inf / inf, NaN, which no comparison accepts.
    if (!std::isfinite(member->fitness)) {
      *member = {c, f};
      return;
    }
    const double rel = (f - member->fitness) / std::max(std::abs(member->fitness), 1e-30);
    if (rel <= 0 || uniform01(rng_) < std::exp(-rel / temperature())) *member = {c, f};
  }

  // A configuration joins a pack that is not full, or replaces its worst member when better.
  void join(const Config& c, double f) {
    if (std::any_of(pack_.begin(), pack_.end(), [&](const Member& m) { return m.config == c; })) return;
    if (pack_.size() < kPack) {
      pack_.push_back({c, f});
      return;
    }
    auto worst = std::max_element(pack_.begin(), pack_.end(), fitter);
    if (f < worst->fitness) *worst = {c, f};
  }

  void replace_worst() {
    stagnant_ = 0;
    std::sort(pack_.begin(), pack_.end(), fitter);
    const auto n = static_cast<std::size_t>(std::ceil(kPack * kRestartShare));
    pack_.resize(pack_.size() > n ? pack_.size() - n : 0);
  }

  double spent() const {
    const double total = budget_ ? static_cast<double>(*budget_) : 1000.0;
    return std::min(1.0, static_cast<double>(told_) / total);
  }

  double temperature() const {
    double t = std::max(kTMin, kT0 * std::exp(-kDecay * spent()));
    if (2 * stagnant_ >= stagnation_limit_) t += 0.2 * kT0;  // reheated in the second half of a stagnation
    return t;
  }

  void restart() override { replace_worst(); }

  const std::optional<std::uint64_t> budget_;
  const std::size_t stagnation_limit_;
  std::vector<Member> pack_;
  std::map<Config, Config> parent_of_;  ///< child in flight -> the member it was bred for
  std::set<Config> newcomers_;          ///< random configurations in flight, to join the pack
  std::size_t next_slot_ = 0, stagnant_ = 0, told_ = 0;
  double best_ = INFINITY;
};

}  // namespace

std::unique_ptr<Strategy> make_tabu_greywolf(const Space& space, const StrategyOptions& options) {
  return std::make_unique<TabuGreywolf>(space, options);
}

}  // namespace cutune::search
