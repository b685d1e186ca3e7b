#pragma once
// Summary statistics of timing samples. The median ranks configurations: it ignores the
// occasional slow outlier (a preempted launch) that inflates Kernel Tuner's mean. Its
// uncertainty is a distribution-free confidence interval from order statistics, because
//  GPU timings are skewed, often bimodal, and never Gaussian.
#include <cstddef>
#include <vector>

#include "cutune/measure/settings.hpp"  // default_confidence
#include "cutune/model/measurement.hpp"  // Summary

namespace cutune::measure {

/// Throws std::invalid_argument on an empty sample. Interval at default_confidence.
Summary summarize(std::vector<double> samples);
/// Same, with the median's interval at `confidence` (in (0, 1)).
Summary summarize(std::vector<double> samples, double confidence);

/// Order-statistic ranks (1-based, inclusive) of a median confidence interval.
struct MedianRanks {
  std::size_t lower = 0, upper = 0;  ///< x_(lower) .. x_(upper) of the sorted sample
  double coverage = 0;               ///< P(x_(lower) <= true median <= x_(upper))
};

/// Ranks of the narrowest symmetric interval [x_(l), x_(n+1-l)] whose coverage of the true
/// median is at least `confidence`, for any continuous distribution: the count of samples
/// below the median is Binomial(n, 1/2), so coverage = 1 - 2 P(B <= l - 1). Exact binomial
/// sums up to n = 1000, the normal approximation (continuity-corrected) above, where the
/// two differ by less than one rank. When no interval reaches the confidence (n too
/// small) returns [1, n] with its lower coverage. Throws std::invalid_argument if n == 0
/// or confidence is not in (0, 1).
MedianRanks median_ci_ranks(std::size_t n, double confidence = default_confidence);

struct Interval {
  double low = 0, high = 0;
  double coverage = 0;
};

/// Confidence interval of the median of an ascending-sorted sample (see median_ci_ranks).
/// Throws std::invalid_argument if `sorted` is empty.
Interval median_ci(const std::vector<double>& sorted, double confidence = default_confidence);

/// Median of an ascending-sorted, non-empty sample.
double sorted_median(const std::vector<double>& sorted);

/// Quantile z of the standard normal distribution: P(Z <= z) = p, for p in (0, 1).
double normal_quantile(double p);

/// True when the median intervals do not overlap: the two medians differ at (at least)
/// the confidence both were computed with. Touching intervals count as overlapping.
bool intervals_separate(const Summary& a, const Summary& b);

}  // namespace cutune::measure
