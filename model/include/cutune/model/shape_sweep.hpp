#pragma once
// A sweep of problem shapes (`cutune tune KERNEL --sweep TEXT`): one tuning per shape, so that
// an application that calls the kernel at many sizes has a measured winner across them.
//
//   n=2**10..2**28        a range: LO, then doubling up to HI (2**10, 2**11, ..., 2**28)
//   n=1000..64000:*4      a range with a factor: 1000, 4000, 16000, 64000
//   n=1024..8192:+1024    a range with an increment: 1024, 2048, ..., 8192
//   n=1000,2000,4000      a list
//   n=2**10..2**20;m=64,128   a grid: every combination, the first variable varying slowest
//
// Values are integer expressions as --problem takes them (2**20, 3*1024). Variables the sweep
// does not name keep their default.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cutune/model/problem.hpp"

namespace cutune {

/// One shape of a sweep: the values of the variables the sweep names.
using SweepShape = std::map<std::string, std::int64_t>;

/// Shapes above this many are refused unless the caller allows them (`--yes`): a typo such as
/// "n=1..2**28:+1" would otherwise start 268 million tunings.
inline constexpr std::uint64_t kLargeSweep = 10000;

/// The shapes of `text` for a problem with `variables`, in the grid's order. Throws InputError
/// (one line naming --sweep and the item) for an empty text or item, an unknown or repeated
/// variable, a value that is not an integer, a value outside the variable's [min, max], a range
/// whose low end is above its high end, a step that does not grow (factor <= 1, increment <=
/// 0), and more than kLargeSweep shapes unless `allow_large` (the count is computed before any
/// shape is made).
std::vector<SweepShape> parse_sweep(const std::string& text, const std::vector<ProblemVariable>& variables,
                                    bool allow_large = false);

/// "n=1024,m=64": the shape as a --problem text (and, with every variable named, its key).
std::string sweep_shape_text(const SweepShape& shape);

}  // namespace cutune
