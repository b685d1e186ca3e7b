#include "searcher.hpp"

#include <algorithm>

namespace cutune::search {

Searcher::Searcher(const Space& space, std::uint64_t seed)
    : space_(space), rng_(seed), sampler_(space) {
  Config first;
  has_valid_ = space.next_valid(first);
}

std::optional<Config> Searcher::random_unseen() {
  return sampler_.unseen(rng_, [this](const Config& c) { return memory_.seen(c); });
}

std::optional<Config> Searcher::spread_unseen() {
  const auto& params = space_.parameters();
  std::vector<std::vector<std::size_t>> held(params.size());
  for (std::size_t p = 0; p < params.size(); ++p) held[p].assign(params[p].values.size(), 0);
  const auto count = [&](const Config& c) {
    for (std::size_t p = 0; p < params.size(); ++p) ++held[p][c.index[p]];
  };
  for (const Config& c : memory_.order()) count(c);
  for (const Config& c : memory_.pending()) count(c);
  std::optional<Config> best;
  std::size_t best_overlap = 0;
  for (std::size_t i = 0; i < kSpreadCandidates; ++i) {
    Config c = sampler_.any(rng_);
    if (memory_.seen(c)) continue;
    std::size_t overlap = 0;
    for (std::size_t p = 0; p < params.size(); ++p) overlap += held[p][c.index[p]];
    if (!best || overlap < best_overlap) best_overlap = overlap, best = std::move(c);
  }
  return best ? best : random_unseen();
}

std::size_t Searcher::initial_sample_size(std::optional<std::uint64_t> budget) {
  return budget ? std::clamp<std::size_t>(*budget / 5, kMinInitialSamples, kInitialSamples) : kInitialSamples;
}

std::optional<Config> Searcher::initial_sample_member(std::size_t size) {
  if (handed_initial_ >= size) return std::nullopt;
  return handed_initial_++ % 2 == 0 ? spread_unseen() : random_unseen();
}

std::vector<Config> Searcher::ask(std::size_t max) {
  std::vector<Config> out;
  if (!has_valid_) return out;
  std::size_t stale = 0;
  while (out.size() < max) {
    std::optional<Config> c = propose();
    if (!c) {
      if (!out.empty()) break;  // waiting: what is proposed already is enough
      c = propose_while_waiting();
      if (!c || memory_.seen(*c)) c = random_unseen();
      if (!c) break;
    } else if (memory_.seen(*c)) {
      if (auto f = memory_.fitness(*c)) learn(*c, *f);
      if (++stale < kStaleLimit) continue;
      restart();
      c = random_unseen();
      if (!c) break;
    }
    stale = 0;
    memory_.mark_pending(*c);
    out.push_back(std::move(*c));
  }
  return out;
}

void Searcher::tell(const Config& config, const Observation& observation) {
  memory_.record(config, observation);
  learn(config, fitness_of(observation));
}

void Generation::reset(std::vector<Config> members) {
  members_ = std::move(members);
  next_ = 0;
}

std::optional<Config> Generation::take() {
  if (next_ >= members_.size()) return std::nullopt;
  return members_[next_++];
}

bool Generation::resolved(const Memory& memory) const {
  return next_ >= members_.size() &&
         std::all_of(members_.begin(), members_.end(), [&](const Config& c) { return memory.is_told(c); });
}

}  // namespace cutune::search
