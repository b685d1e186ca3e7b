// brute_force: every valid configuration in enumeration order, lazily, up to the budget.
#include "strategies.hpp"

namespace cutune::search {
namespace {

class BruteForce final : public Strategy {
 public:
  BruteForce(const Space& space, std::optional<std::uint64_t> budget) : space_(space), budget_(budget) {}

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
  bool learns() const override { return false; }

 private:
  const Space& space_;
  std::optional<std::uint64_t> budget_;
  Config cursor_;
  std::uint64_t proposed_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_brute_force(const Space& space, const StrategyOptions& options) {
  return std::make_unique<BruteForce>(space, options.budget);
}

}  // namespace cutune::search
