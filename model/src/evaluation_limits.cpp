#include "evaluation_limits.hpp"

#include <string>

#include "expression_errors.hpp"

namespace cutune::detail {

constinit thread_local std::int64_t t_work_left = kMaxWork;

void check_sequence_size(std::int64_t n) {
  if (n > kMaxSequence) {
    fail("MemoryError: sequence of " + std::to_string(n) + " elements exceeds cutune's limit of " +
         std::to_string(kMaxSequence));
  }
}

void work_exhausted() {
  t_work_left = -1;  // stays exhausted; guards against wrap-around on further charges
  fail("MemoryError: expression needs more than " + std::to_string(kMaxWork) +
       " element operations (cutune's limit)");
}

std::int64_t copy_cost(const ValueList& l) {
  std::int64_t cost = 0;
  for (const Value& v : l) cost += copy_cost(v);
  return cost;
}

}  // namespace cutune::detail
