#include "neighbourhood.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace cutune::search {
namespace {

std::int64_t size_of(const Space& space, std::size_t p) {
  return static_cast<std::int64_t>(space.parameters()[p].values.size());
}

bool in_range(const Space& space, std::size_t p, std::int64_t index) {
  return index >= 0 && index < size_of(space, p);
}

// The fallback of repair(): the next valid configuration in enumeration order after `c`
// (wrapping to the first) whose `keep` parameter is unchanged, within kRepairChecks steps.
std::optional<Config> next_in_order(const Space& space, const Config& c, std::size_t keep) {
  Config t = c;
  bool wrapped = false;
  for (std::size_t steps = 0; steps < kRepairChecks; ++steps) {
    if (!space.next_valid(t)) {
      if (wrapped) return std::nullopt;
      wrapped = true;
      t = Config{};
      if (!space.next_valid(t)) return std::nullopt;
    }
    if (keep == kNoParameter || t.index[keep] == c.index[keep]) return t;
  }
  return std::nullopt;
}

}  // namespace

std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

double uniform01(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

std::optional<Config> repair(const Space& space, Config c, std::size_t keep) {
  if (space.is_valid(c)) return c;
  const std::size_t n = space.parameters().size();
  std::int64_t widest = 1;
  for (std::size_t p = 0; p < n; ++p) widest = std::max(widest, size_of(space, p));
  auto skip = [&](std::size_t p) { return p == keep || size_of(space, p) < 2; };

  // One parameter changed, nearest index first.
  for (std::int64_t d = 1; d < widest; ++d) {
    for (std::size_t p = 0; p < n; ++p) {
      if (skip(p)) continue;
      for (std::int64_t sign : {-1, 1}) {
        const std::int64_t i = c.index[p] + sign * d;
        if (!in_range(space, p, i)) continue;
        Config t = c;
        t.index[p] = static_cast<std::uint32_t>(i);
        if (space.is_valid(t)) return t;
      }
    }
  }
  // Two parameters changed, smallest summed distance first, within the check budget.
  std::size_t checks = 0;
  for (std::int64_t d = 2; d <= 2 * (widest - 1) && checks < kRepairChecks; ++d) {
    for (std::size_t p = 0; p < n && checks < kRepairChecks; ++p) {
      if (skip(p)) continue;
      for (std::size_t q = p + 1; q < n && checks < kRepairChecks; ++q) {
        if (skip(q)) continue;
        for (std::int64_t dp = 1; dp < d && checks < kRepairChecks; ++dp) {
          for (std::int64_t sp : {-1, 1}) {
            for (std::int64_t sq : {-1, 1}) {
              const std::int64_t ip = c.index[p] + sp * dp, iq = c.index[q] + sq * (d - dp);
              if (!in_range(space, p, ip) || !in_range(space, q, iq)) continue;
              Config t = c;
              t.index[p] = static_cast<std::uint32_t>(ip);
              t.index[q] = static_cast<std::uint32_t>(iq);
              ++checks;
              if (space.is_valid(t)) return t;
            }
          }
        }
      }
    }
  }
  return next_in_order(space, c, keep);
}

std::vector<Config> hamming_neighbours(const Space& space, const Config& c) {
  std::set<Config> out;
  for (std::size_t p = 0; p < space.parameters().size(); ++p) {
    for (std::int64_t i = 0; i < size_of(space, p); ++i) {
      if (i == c.index[p]) continue;
      Config t = c;
      t.index[p] = static_cast<std::uint32_t>(i);
      if (space.is_valid(t)) {
        out.insert(std::move(t));
      } else if (i == c.index[p] - 1 || i == c.index[p] + 1) {
        if (auto r = repair(space, t, p); r && *r != c) out.insert(std::move(*r));
      }
    }
  }
  return {out.begin(), out.end()};
}

std::vector<Config> adjacent_neighbours(const Space& space, const Config& c) {
  std::set<Config> out;
  for (std::size_t p = 0; p < space.parameters().size(); ++p) {
    for (std::int64_t dir : {-1, 1}) {
      const std::int64_t first = c.index[p] + dir;
      if (!in_range(space, p, first)) continue;
      bool found = false;
      for (std::int64_t i = first; in_range(space, p, i) && !found; i += dir) {
        Config t = c;
        t.index[p] = static_cast<std::uint32_t>(i);
        if (space.is_valid(t)) {
          out.insert(std::move(t));
          found = true;
        }
      }
      if (found) continue;
      Config t = c;
      t.index[p] = static_cast<std::uint32_t>(first);
      if (auto r = repair(space, t, p); r && *r != c) out.insert(std::move(*r));
    }
  }
  return {out.begin(), out.end()};
}

bool accept_relative(double current, double candidate, double temperature, std::mt19937_64& rng) {
  if (std::isinf(current)) return true;
  if (std::isinf(candidate)) return false;
  return candidate < current || uniform01(rng) < std::exp(-(candidate - current) / std::abs(current) / temperature);
}

Config uniform_crossover(const Config& a, const Config& b, std::mt19937_64& rng) {
  Config child = a;
  for (std::size_t p = 0; p < child.index.size(); ++p)
    if (uniform01(rng) < 0.5) child.index[p] = b.index[p];
  return child;
}

Config mutate(const Space& space, const Config& c, double rate, std::mt19937_64& rng) {
  const auto& params = space.parameters();
  std::vector<std::size_t> movable;
  for (std::size_t p = 0; p < params.size(); ++p)
    if (params[p].values.size() > 1) movable.push_back(p);
  if (movable.empty()) return c;
  Config t = c;
  bool changed = false;
  for (std::size_t p : movable) {
    if (uniform01(rng) < rate) {
      t.index[p] = static_cast<std::uint32_t>(uniform_index(rng, params[p].values.size()));
      changed = changed || t.index[p] != c.index[p];
    }
  }
  if (!changed) {  // at least one parameter moves: a mutation that changes nothing wastes a step
    const std::size_t p = movable[uniform_index(rng, movable.size())];
    const auto other = uniform_index(rng, params[p].values.size() - 1);
    t.index[p] = static_cast<std::uint32_t>(other >= c.index[p] ? other + 1 : other);
  }
  return repair(space, t).value_or(c);
}

Config round_to_config(const Space& space, const std::vector<double>& position) {
  Config t;
  for (std::size_t p = 0; p < position.size(); ++p) {
    const double hi = static_cast<double>(size_of(space, p) - 1);
    t.index.push_back(static_cast<std::uint32_t>(std::clamp(std::round(position[p]), 0.0, hi)));
  }
  return repair(space, t).value_or(t);
}

std::vector<double> position_of(const Config& c) { return {c.index.begin(), c.index.end()}; }

std::optional<Config> Sampler::draw_valid(std::mt19937_64& rng, int attempts) {
  const auto& params = space_.parameters();
  for (int attempt = 0; attempt < attempts; ++attempt) {
    Config c;
    for (const auto& p : params) c.index.push_back(static_cast<std::uint32_t>(uniform_index(rng, p.values.size())));
    if (space_.is_valid(c)) return c;
  }
  return std::nullopt;
}

const std::vector<Config>& Sampler::valid() {
  if (!enumerated_) {
    enumerated_ = true;
    space_.for_each_valid([&](const Config& c) {
      valid_.push_back(c);
      return true;
    });
  }
  return valid_;
}

Config Sampler::any(std::mt19937_64& rng) {
  if (!enumerated_) {
    if (auto c = draw_valid(rng, 1000)) return *c;
  }
  // Valid points are rare: draw from the list of them (listed once).
  const auto& all = valid();
  if (!all.empty()) return all[uniform_index(rng, all.size())];
  Config c;  // no valid configuration at all: callers check before asking
  c.index.assign(space_.parameters().size(), 0);
  return c;
}

std::optional<Config> Sampler::unseen(std::mt19937_64& rng, const std::function<bool(const Config&)>& seen) {
  if (!enumerated_) {
    for (int attempt = 0; attempt < 10000; ++attempt) {
      auto c = draw_valid(rng, 1);
      if (c && !seen(*c)) return c;
    }
  }
  if (!shuffled_) {
    // Valid points are rare, or nearly all seen: shuffle the remaining valid ones once.
    shuffled_ = true;
    for (const auto& c : valid())
      if (!seen(c)) remaining_.push_back(c);
    std::shuffle(remaining_.begin(), remaining_.end(), rng);
  }
  while (!remaining_.empty()) {
    Config c = std::move(remaining_.back());
    remaining_.pop_back();
    if (!seen(c)) return c;
  }
  return std::nullopt;
}

}  // namespace cutune::search
