#pragma once
// A configuration selector over problem variables: a few configurations and a small decision
// tree that picks one of them for any problem shape (`cutune distill` builds it from a sweep,
// the wisdom file carries it, cutune::loader evaluates it). With one variable the tree is a
// chain of thresholds ("n <= 1448: config 0; n <= 92681: config 1; else config 2").
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cutune/model/result.hpp"

namespace cutune {

struct SelectorNode {
  /// A split: "" for a leaf.
  std::string variable;
  std::int64_t at_most = 0;   ///< a shape goes to `low` when variable <= at_most, else to `high`
  std::size_t low = 0, high = 0;  ///< node indices
  std::size_t config = 0;     ///< a leaf: index into ShapeSelector::configs
  bool leaf() const { return variable.empty(); }
};

struct ShapeSelector {
  std::string kernel, gpu_model, objective = "time";
  double bound = 0.05;            ///< worst slowdown allowed against each tuned shape's best (0.05: 5%)
  double worst_slowdown = 0.0;    ///< what it reached over those shapes (0.03: 3% slower at worst)
  std::vector<std::string> shapes;  ///< the problem keys it was distilled from
  std::vector<ResultConfig> configs;
  std::vector<SelectorNode> nodes;  ///< nodes[0] is the root
  std::string created_at;

  /// The leaf for `variables` (a problem instance's); a variable a split names that is not
  /// among them goes low. Throws std::logic_error for a malformed tree (a node index out of
  /// range, a cycle): readers check with check_tree first.
  std::size_t select(const std::map<std::string, std::int64_t>& variables) const;
  /// The decisions taken for `variables`: "n <= 1448" or "n > 1448", joined by " and ";
  /// "always" for a tree that is one leaf.
  std::string path(const std::map<std::string, std::int64_t>& variables) const;
  /// "" when every node index is in range, every leaf names a configuration, and every node is
  /// reached once from the root; else what is wrong ("nodes[3].low: 9 is not a node").
  std::string check_tree() const;
};

/// The selector as the store and the wisdom file keep it:
///   {"kernel": "reduction", "gpu_model": "NVIDIA H100/sm_90", "objective": "time", "bound": 0.05,
///    "worst_slowdown": 0.021, "shapes": ["n=1024", ...], "created_at": "...",
///    "configs": [{"block_size_x": 256, ...}, ...],
///    "tree": [{"variable": "n", "at_most": 1448, "low": 1, "high": 2}, {"config": 0}, {"config": 1}]}
nlohmann::ordered_json selector_json(const ShapeSelector& selector);
/// Reads selector_json's form; throws InputError "<where>.<field>: <what>" for a missing or
/// mistyped field or a malformed tree (check_tree). Configurations are returned as stored:
/// checking them against a space is the reader's job.
ShapeSelector selector_from_json(const nlohmann::ordered_json& j, const std::string& where);

}  // namespace cutune
