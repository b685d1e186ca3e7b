// Strategies with a prior (prior.hpp): every strategy proposes the prior's seeds first
// (with_prior), and bandit_portfolio gets one more arm, prior_local: a local search whose
// moves the prior orders. The seeds carry the prior's winners; prior_local carries its
// shape (which neighbour of a good configuration is likely better), and the bandit gives it
// pulls only while its proposals pay off, so a prior unlike the target costs little.
#include <algorithm>
#include <cmath>
#include <map>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

class PriorSeeded final : public Strategy {
 public:
  PriorSeeded(std::unique_ptr<Strategy> inner, std::vector<Config> seeds)
      : inner_(std::move(inner)), seeds_(std::move(seeds)) {}

  std::vector<Config> ask(std::size_t max) override {
    std::vector<Config> out;
    while (out.size() < max && next_ < seeds_.size()) out.push_back(seeds_[next_++]);
    if (out.size() < max) {
      // A proposal equal to a seed of this batch would only wait for the seed's result.
      for (auto& c : inner_->ask(max - out.size()))
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    }
    return out;
  }
  void tell(const Config& config, const Observation& observation) override { inner_->tell(config, observation); }
  bool learns() const override { return inner_->learns(); }
  bool learn_budget(std::uint64_t evaluations) override { return inner_->learn_budget(evaluations); }

 private:
  std::unique_ptr<Strategy> inner_;
  std::vector<Config> seeds_;
  std::size_t next_ = 0;
};

// Around the best configurations told so far, the unseen Hamming neighbour the prior ranks
// best; with none (nothing valid told yet, or every neighbour seen), the next configuration
// of the prior's ranking.
class PriorLocal final : public Searcher {
 public:
  PriorLocal(const Space& space, std::uint64_t seed, std::shared_ptr<const SpacePrior> prior)
      : Searcher(space, seed), prior_(std::move(prior)) {}
  bool learn_budget(std::uint64_t) override { return true; }  // it plans with no budget

 private:
  static constexpr std::size_t kCentres = 3;  ///< the best told configurations searched around

  std::optional<Config> propose() override {
    const Config* pick = nullptr;
    double pick_score = 0.0;
    for (std::size_t i = 0; i < std::min(kCentres, best_.size()); ++i) {
      for (const Config& n : neighbours(best_[i].second)) {
        if (memory_.seen(n)) continue;
        const double s = predicted(n);
        if (!pick || s < pick_score || (s == pick_score && n < *pick)) {
          pick = &n;
          pick_score = s;
        }
      }
    }
    if (pick) return *pick;
    const auto& ranking = prior_->ranking();
    while (next_ranked_ < ranking.size() && memory_.seen(ranking[next_ranked_])) ++next_ranked_;
    if (next_ranked_ < ranking.size()) return ranking[next_ranked_];
    return random_unseen();
  }

  void learn(const Config& c, double fitness) override {
    if (!std::isfinite(fitness)) return;
    const std::pair<double, Config> entry{fitness, c};
    if (std::find(best_.begin(), best_.end(), entry) != best_.end()) return;  // a revisit
    best_.insert(std::upper_bound(best_.begin(), best_.end(), entry), entry);
    if (best_.size() > kCentres) best_.pop_back();
  }

  void restart() override {}

  const std::vector<Config>& neighbours(const Config& c) {
    auto it = neighbours_.find(c);
    if (it == neighbours_.end()) it = neighbours_.emplace(c, hamming_neighbours(space_, c)).first;
    return it->second;
  }
  double predicted(const Config& c) {
    auto it = predicted_.find(c);
    if (it == predicted_.end()) it = predicted_.emplace(c, prior_->predict(c)).first;
    return it->second;
  }

  std::shared_ptr<const SpacePrior> prior_;
  std::vector<std::pair<double, Config>> best_;  ///< the best valid told, best first
  std::map<Config, std::vector<Config>> neighbours_;
  std::map<Config, double> predicted_;
  std::size_t next_ranked_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> with_prior(std::unique_ptr<Strategy> strategy, const StrategyOptions& options) {
  if (!options.prior || options.prior->empty()) return strategy;
  return std::make_unique<PriorSeeded>(std::move(strategy), options.prior->seeds(kPriorSeeds));
}

std::unique_ptr<Strategy> make_prior_local(const Space& space, const StrategyOptions& options) {
  return std::make_unique<PriorLocal>(space, options.seed, options.prior);
}

}  // namespace cutune::search
