#pragma once
// The common machinery of the adaptive strategies: the ask loop, the memory of results,
// the random fallback while waiting for results, and the restart of a converged search.
#include <cstddef>
#include <optional>
#include <random>

#include "cutune/search/strategy.hpp"
#include "memory.hpp"
#include "neighbourhood.hpp"

namespace cutune::search {

/// A strategy that decides from the results told so far. Subclasses implement propose(),
/// learn() and restart(); ask() turns their proposals into batches:
/// - a proposal whose result is already told is not proposed again: learn() gets the
///   stored value at once (a revisit costs no evaluation);
/// - a proposal still in flight is skipped (its result arrives through tell);
/// - while the strategy waits for results (propose() returns nullopt) and nothing else was
///   proposed in this batch, an evaluator would idle: propose_while_waiting() fills it (an
///   informed guess: the GP's pick with the pending results as lies, a child of the
///   members told so far...), and a random configuration not seen yet when it has none;
/// - kStaleLimit proposals in a row that were all seen mean the search has converged:
///   restart() is called and a random unseen configuration is proposed.
/// ask() is empty only when every valid configuration has been proposed or told.
class Searcher : public Strategy {
 public:
  Searcher(const Space& space, std::uint64_t seed);
  std::vector<Config> ask(std::size_t max) final;
  void tell(const Config& config, const Observation& observation) final;
  /// Whether `config` was told (to forward results between strategies without repeats).
  bool knows(const Config& config) const { return memory_.is_told(config); }

 protected:
  /// The next configuration this strategy wants evaluated (valid), or nullopt while it
  /// waits for results it needs.
  virtual std::optional<Config> propose() = 0;
  /// Every told result, and the stored result of a proposal that was told before.
  virtual void learn(const Config& config, double fitness) = 0;
  /// The search keeps proposing what it has seen: perturb or restart it.
  virtual void restart() = 0;
  /// Work for an evaluator that would otherwise idle while propose() waits for results:
  /// with N evaluators N - 1 results are pending at every ask, and even with one the
  /// session fills a batch of 8 by asking again (a GA's generation of 20 went out as 8, 8,
  /// 4 and 4 random). Unseen, or nullopt for a random unseen configuration.
  virtual std::optional<Config> propose_while_waiting() { return std::nullopt; }

  std::optional<Config> random_unseen();
  /// An unseen configuration for an initial sample: of kSpreadCandidates random valid ones,
  /// the one whose parameter values the configurations seen so far (told or pending) hold
  /// least often, so that a small sample covers each parameter's values as a Latin hypercube
  /// does instead of repeating some by chance (random_unseen() when none of them is unseen).
  std::optional<Config> spread_unseen();
  static constexpr std::size_t kSpreadCandidates = 16;

  /// A model's initial sample (bayes_opt's, surrogate_vnd's): a fifth of the evaluation budget,
  /// within [kMinInitialSamples, kInitialSamples]; kInitialSamples without a budget.
  static std::size_t initial_sample_size(std::optional<std::uint64_t> budget);
  /// The next member of an initial sample of `size`: alternately balanced over each parameter's
  /// values (spread_unseen) and uniform (random_unseen; bayes_opt.cpp has the measurements);
  /// nullopt once all `size` are handed out.
  std::optional<Config> initial_sample_member(std::size_t size);
  static constexpr std::size_t kInitialSamples = 20, kMinInitialSamples = 5;

  static constexpr std::size_t kStaleLimit = 32;
  const Space& space_;
  std::mt19937_64 rng_;
  Memory memory_;
  Sampler sampler_;

 private:
  bool has_valid_;
  std::size_t handed_initial_ = 0;
};

/// A generation of a population-based strategy (GA, DE, PSO): its members are proposed in
/// order; the strategy builds the next generation once every member is told.
class Generation {
 public:
  void reset(std::vector<Config> members);
  const std::vector<Config>& members() const { return members_; }
  /// The next member not yet handed out, if any.
  std::optional<Config> take();
  bool resolved(const Memory& memory) const;
  bool empty() const { return members_.empty(); }

 private:
  std::vector<Config> members_;
  std::size_t next_ = 0;
};

}  // namespace cutune::search
