#pragma once
// What `cutune space` and `cutune kernels` print of a search space: the summary for people,
// the JSON listing, and the timing of building it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cutune/model/problem.hpp"

namespace cutune::cli {

/// How long building a space took (space --timing): what a tuning waits for before its first
/// evaluation (load, then the first valid configuration), and what listing the whole valid
/// set costs.
struct SpaceTiming {
  std::string kernel;
  std::uint64_t cartesian = 0, valid = 0;
  std::string first_valid;  ///< its key; "" when the space has none
  double load_ms = 0, first_valid_ms = 0, count_ms = 0;
  long peak_rss_kib = -1;   ///< the process's peak resident memory; -1 unknown
};
nlohmann::ordered_json space_timing_json(const SpaceTiming& timing);

/// One line per parameter: its name, its values and its default.
void print_parameters(std::ostream& out, const Space& space);

/// space --json: the parameters, block size names, thread limit, default (and whether a
/// tuning evaluates it first), warnings and every valid key. Keys in name order, as
/// scripts have read it since it was written.
nlohmann::json space_listing_json(const KernelProblem& problem, bool default_first);

/// What `space` shows a person: the problem, parameters, restrictions, sizes (`valid`
/// enumerated in `enumerate_ms`), the default, and the first `show` valid configurations
/// with their launch geometry.
struct SpaceOverview {
  std::uint64_t valid = 0;
  double enumerate_ms = 0;
  bool default_first = true;  ///< a tuning evaluates the default before its strategy
  int show = 0;
};
void print_space_overview(std::ostream& out, const KernelProblem& problem, const ProblemInstance& instance,
                          const SpaceOverview& overview);

}  // namespace cutune::cli
