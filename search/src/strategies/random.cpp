// random: uniform sampling without replacement from the valid configurations, up to the
// budget (rejection sampling with a fallback: Sampler in neighbourhood.hpp).
#include <set>

#include "../neighbourhood.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

class RandomSampling final : public Strategy {
 public:
  RandomSampling(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : sampler_(space), rng_(seed), budget_(budget) {}

  std::vector<Config> ask(std::size_t max) override {
    std::vector<Config> out;
    while (out.size() < max && (!budget_ || seen_.size() < *budget_)) {
      auto c = sampler_.unseen(rng_, [this](const Config& x) { return seen_.count(x) != 0; });
      if (!c) break;
      seen_.insert(*c);
      out.push_back(std::move(*c));
    }
    return out;
  }
  void tell(const Config&, const Observation&) override {}
  bool learns() const override { return false; }

 private:
  Sampler sampler_;
  std::mt19937_64 rng_;
  std::optional<std::uint64_t> budget_;
  std::set<Config> seen_;
};

}  // namespace

std::unique_ptr<Strategy> make_random(const Space& space, const StrategyOptions& options) {
  return std::make_unique<RandomSampling>(space, options.seed, options.budget);
}

}  // namespace cutune::search
