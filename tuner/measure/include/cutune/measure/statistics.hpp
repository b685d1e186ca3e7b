#pragma once
// Summary statistics of timing samples. The median ranks configurations: it ignores the
// occasional slow outlier (a preempted launch) that inflates Kernel Tuner's mean.
#include <cstddef>
#include <vector>

namespace cutune::measure {

struct Summary {
  std::size_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0;
};

/// Throws std::invalid_argument on an empty sample.
Summary summarize(std::vector<double> samples);

}  // namespace cutune::measure
