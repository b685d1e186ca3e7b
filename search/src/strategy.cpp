#include "cutune/search/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "cutune/model/errors.hpp"

namespace cutune::search {
namespace {

// Every valid configuration in enumeration order, lazily, up to the budget.
class BruteForce final : public Strategy {
 public:
  BruteForce(const Space& space, std::optional<std::uint64_t> budget)
      : space_(space), budget_(budget) {}

  std::vector<Config> ask(std::size_t max) override {
    std::vector<Config> out;
    while (!done_ && out.size() < max && (!budget_ || proposed_ < *budget_)) {
      if (!space_.next_valid(cursor_)) {
        done_ = true;
        break;
      }
      out.push_back(cursor_);
      ++proposed_;
    }
    return out;
  }
  void tell(const Config&, const Observation&) override {}

 private:
  const Space& space_;
  std::optional<std::uint64_t> budget_;
  Config cursor_;
  std::uint64_t proposed_ = 0;
  bool done_ = false;
};

// Uniform sampling without replacement from the valid configurations: rejection sampling
// over the index space (no enumeration of the Cartesian product); when valid points are
// too rare for that to work, it falls back to a lazy shuffled walk of the valid set.
class RandomSampling final : public Strategy {
 public:
  RandomSampling(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : space_(space), rng_(seed), budget_(budget) {}

  std::vector<Config> ask(std::size_t max) override {
    std::vector<Config> out;
    while (out.size() < max && (!budget_ || seen_.size() < *budget_)) {
      auto c = draw();
      if (!c) break;
      out.push_back(*c);
    }
    return out;
  }
  void tell(const Config&, const Observation&) override {}

 private:
  std::optional<Config> draw() {
    if (!fallback_) {
      const auto& params = space_.parameters();
      for (int attempt = 0; attempt < 10000; ++attempt) {
        Config c;
        for (const auto& p : params) {
          std::uniform_int_distribution<std::uint32_t> d(0, static_cast<std::uint32_t>(p.values.size() - 1));
          c.index.push_back(d(rng_));
        }
        if (seen_.count(c) || !space_.is_valid(c)) continue;
        seen_.insert(c);
        return c;
      }
      // Valid points are rare (or nearly all seen): list the remaining valid ones once.
      fallback_ = true;
      space_.for_each_valid([&](const Config& c) {
        if (!seen_.count(c)) remaining_.push_back(c);
        return true;
      });
      std::shuffle(remaining_.begin(), remaining_.end(), rng_);
    }
    if (remaining_.empty()) return std::nullopt;
    Config c = remaining_.back();
    remaining_.pop_back();
    seen_.insert(c);
    return c;
  }

  const Space& space_;
  std::mt19937_64 rng_;
  std::optional<std::uint64_t> budget_;
  std::set<Config> seen_;
  bool fallback_ = false;
  std::vector<Config> remaining_;
};

}  // namespace

std::vector<std::string> strategy_names() { return {"brute_force", "random"}; }

std::unique_ptr<Strategy> make_strategy(const Space& space, const StrategyOptions& options) {
  if (options.name == "brute_force") return std::make_unique<BruteForce>(space, options.budget);
  if (options.name == "random")
    return std::make_unique<RandomSampling>(space, options.seed, options.budget);
  throw InputError(fmt::format("unknown strategy '{}' (known: brute_force, random)", options.name));
}

}  // namespace cutune::search
