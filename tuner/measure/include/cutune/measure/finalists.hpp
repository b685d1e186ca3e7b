#pragma once
// Declaring a winner: after the search, the top k and the default configuration
// are re-measured thoroughly, interleaved and back to back (the GPU loop's job), and their
// summaries come here. A winner is declared only when its median interval separates from
// the others'; otherwise the tie is recorded as data, never hidden.
#include <cstddef>
#include <optional>
#include <vector>

#include "cutune/measure/statistics.hpp"

namespace cutune::measure {

/// How many finalists the thorough stage re-measures besides the default. 3: enough that a
/// screening ranking wrong by one or two places still finds the winner, few enough that
/// the thorough stage costs a handful of time caps.
inline constexpr std::size_t default_finalist_count = 3;

struct Verdict {
  /// Index (into the finalists given) of the lowest median; ties in the median go to the
  /// lower index.
  std::size_t winner = 0;
  /// Index of the second-lowest median; none when there is a single finalist.
  std::optional<std::size_t> runner_up;
  /// The winner's interval separates from every other finalist's, so it is declared.
  /// False means a tie: see `tied`.
  bool separated = false;
  /// The winner and every finalist whose interval overlaps the winner's, by ascending
  /// median (winner first). Size 1 exactly when `separated`.
  std::vector<std::size_t> tied;
  /// Finalists by ascending median (all of them).
  std::vector<std::size_t> ranking;

  /// Comparison with the default configuration, when one was given.
  std::optional<std::size_t> default_index;
  /// The winner is faster than the default and their intervals separate.
  bool beats_default = false;
  /// default median / winner median (1 when the winner is the default or none given).
  double speedup_over_default = 1.0;
};

/// Ranks re-measured finalists and says whether the winner is separated or tied.
/// `default_index` names the default configuration among them, if present. Throws
/// std::invalid_argument when `finalists` is empty, a summary has no samples, or
/// default_index is out of range.
Verdict declare_winner(const std::vector<Summary>& finalists,
                       std::optional<std::size_t> default_index = std::nullopt);

}  // namespace cutune::measure
