#pragma once
// Transfer across GPUs and problem sizes, scored: each recorded space is tuned with a prior
// built from the other recordings of the same kernel (another GPU, another problem), and
// every strategy is scored with and without it by the same methodology (scoring.hpp).
// Leave-one-out: a space's own recording (the same GPU and problem) is never its prior.
#include <memory>
#include <string>
#include <vector>

#include "cutune/search/prior.hpp"
#include "cutune/search/scoring_table.hpp"

namespace cutune::search {

/// Per space, the priors from `pool` measured elsewhere: the same kernel (a name in common,
/// KernelNames), and another GPU
/// or another problem than origins[i] (a pool entry with the space's own GPU and problem is
/// the same measurement, and is left out). The parameter check is SpacePrior's: a prior of
/// the same kernel with other parameters is reported in its uses() and not used.
std::vector<std::shared_ptr<const SpacePrior>> leave_one_out_priors(const std::vector<RecordedSpace>& spaces,
                                                                   const std::vector<PriorOrigin>& origins,
                                                                   const std::vector<Prior>& pool);

/// Every strategy of `options` on `spaces` twice, seeded the same: without a prior (rows
/// named as the strategy) and with priors[i] on spaces[i] (rows "strategy+prior"). Every
/// priors[i] must be non-empty (leave out the spaces that have none). One table, best
/// overall first.
ScoreTable compare_with_prior(const std::vector<RecordedSpace>& spaces,
                              const std::vector<std::shared_ptr<const SpacePrior>>& priors, ComparisonOptions options);

}  // namespace cutune::search
