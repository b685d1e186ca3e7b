#pragma once
// What one evaluation may cost, so that hostile input fails with a MemoryError instead of
// exhausting memory or running for hours: a cap on the size of each sequence, and a work
// budget for the whole evaluation (and for the constant folding of one parse).
#include <cstdint>

#include "cutune/model/value.hpp"

namespace cutune::detail {

// Sequences are materialised, so their size is capped.
inline constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;

/// MemoryError when a sequence of n elements would exceed kMaxSequence.
void check_sequence_size(std::int64_t n);

// Work budget of one evaluation (and of the constant folding of one parse): elements made
// or visited and characters copied, compared or scanned. Nested comprehensions over big
// ranges, repeated copies of a long string, or a list that holds one big list many times
// over would otherwise run for hours or exhaust memory with every single sequence below
// kMaxSequence; Kernel Tuner's expressions need a tiny fraction of this.
inline constexpr std::int64_t kMaxWork = std::int64_t{1} << 22;

// The budget left to the evaluation running on this thread. constinit: without it, g++
// checks for (and may call) a TLS initialisation function at every access from another
// translation unit, and charge is on the hot path of space enumeration.
extern constinit thread_local std::int64_t t_work_left;

/// MemoryError; leaves the budget exhausted.
[[noreturn]] void work_exhausted();

/// Spends n units of the budget; MemoryError when it runs out.
inline void charge(std::int64_t n) {
  t_work_left -= n;
  if (t_work_left < 0) work_exhausted();
}

/// A fresh budget for the evaluation in scope; the enclosing one is restored on exit.
class WorkBudget {
 public:
  WorkBudget() : saved_(t_work_left) { t_work_left = kMaxWork; }
  ~WorkBudget() { t_work_left = saved_; }
  WorkBudget(const WorkBudget&) = delete;
  WorkBudget& operator=(const WorkBudget&) = delete;

 private:
  std::int64_t saved_;
};

/// Cost of copying a value: strings copy their characters, lists share their elements.
inline std::int64_t copy_cost(const Value& v) {
  return v.is_string() ? static_cast<std::int64_t>(v.as_string().size()) + 1 : 1;
}
std::int64_t copy_cost(const ValueList& l);

/// v, with the cost of copying it charged.
inline const Value& charged_copy(const Value& v) {
  if (v.is_string()) charge(copy_cost(v));
  return v;
}

}  // namespace cutune::detail
