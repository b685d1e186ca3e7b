#pragma once
// Distilling a sweep (`cutune distill`): from a cross matrix (the best few configurations of
// every tuned shape, each measured at every shape), the smallest set of configurations whose
// worst slowdown against each shape's own best stays within a bound, and a decision tree over
// the problem variables that picks among them. Pure CPU: the matrix is data.
//
// The set is chosen greedily (set cover: each step keeps the configuration that brings the
// most shapes not yet within the bound, ties broken by the smaller geometric-mean slowdown
// over every shape, then by column order). Greedy set cover is within a factor ln(shapes) of
// the smallest set; on sweeps of tens of shapes and a dozen candidates it is what an exhaustive
// search finds in the cases the tests try, but it is not guaranteed minimal.
//
// The tree splits a group of shapes only while no single kept configuration is within the
// bound at all of them; a split takes the variable and threshold whose two sides need the
// smallest worst slowdown (then the smallest sum of the two), thresholds at the geometric mean
// of neighbouring values, so an untuned shape between two tuned ones goes to the nearer in ratio.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/shape_selector.hpp"

namespace cutune::search {

/// Rows: tuned shapes (their variables); columns: candidate configurations; a cell is the
/// configuration's median at the shape in ms, none when it failed or was not measured.
struct CrossMatrix {
  std::vector<std::map<std::string, std::int64_t>> shapes;
  std::vector<std::vector<std::optional<double>>> ms;  ///< [shape][config]
  std::size_t configs() const { return ms.empty() ? 0 : ms.front().size(); }
};

struct Distillation {
  std::vector<std::size_t> kept;       ///< columns chosen, in the order the cover took them
  /// The tree over the shapes' variables; its leaves index `kept` (not the columns).
  std::vector<SelectorNode> nodes;
  std::vector<double> best_ms;         ///< per shape: the best cell of its row (0 when none)
  std::vector<double> slowdown;        ///< per shape: the tree's choice over best_ms, minus 1
  double worst_slowdown = 0.0;         ///< the largest of `slowdown` over covered shapes
  std::vector<std::size_t> uncovered;  ///< shapes without any measured cell (left out)
};

/// Throws std::invalid_argument for a negative bound or rows of different lengths.
Distillation distill(const CrossMatrix& matrix, double bound);

}  // namespace cutune::search
