#include "cutune/search/transfer_scoring.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cutune::search {

std::vector<std::shared_ptr<const SpacePrior>> leave_one_out_priors(const std::vector<RecordedSpace>& spaces,
                                                                   const std::vector<PriorOrigin>& origins,
                                                                   const std::vector<Prior>& pool) {
  if (origins.size() != spaces.size()) throw std::logic_error("leave_one_out_priors: one origin per space");
  std::vector<std::shared_ptr<const SpacePrior>> out;
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    std::vector<Prior> offered;
    for (const Prior& p : pool)
      if (p.origin.kernel.shares_a_name_with(origins[i].kernel) &&
          (p.origin.device != origins[i].device || p.origin.problem != origins[i].problem ||
           p.origin.size.variables != origins[i].size.variables))
        offered.push_back(p);
    out.push_back(std::make_shared<const SpacePrior>(spaces[i].space(), origins[i].kernel, offered, origins[i].size));
  }
  return out;
}

ScoreTable compare_with_prior(const std::vector<RecordedSpace>& spaces,
                              const std::vector<std::shared_ptr<const SpacePrior>>& priors, ComparisonOptions options) {
  if (priors.size() != spaces.size()) throw std::logic_error("compare_with_prior: one prior per space");
  for (const auto& p : priors)
    if (!p || p->empty()) throw std::logic_error("compare_with_prior: a space without a prior");
  options.priors.clear();
  ScoreTable table = compare_strategies(spaces, options);
  options.priors = priors;
  ScoreTable with = compare_strategies(spaces, options);
  for (auto& row : with.rows) {
    row.strategy += "+prior";
    table.rows.push_back(std::move(row));
  }
  std::stable_sort(table.rows.begin(), table.rows.end(), [](const ScoreRow& a, const ScoreRow& b) {
    const double x = std::isnan(a.overall) ? -INFINITY : a.overall, y = std::isnan(b.overall) ? -INFINITY : b.overall;
    return x > y;
  });
  return table;
}

}  // namespace cutune::search
