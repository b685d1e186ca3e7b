#pragma once
// One configuration of a Space, as a value: what the runner and the command line pass
// around. Its canonical key (Kernel Tuner's "128,4,1") and its JSON object are made from it
// only where a configuration leaves the process (DB rows, Kernel Tuner files, reports, log
// lines), and it is parsed back only where one enters (DB reads, imports, --try / --config).
#include <compare>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/model/space.hpp"
#include "cutune/model/value.hpp"

namespace cutune {

/// A configuration of a Space: the index of each parameter's value (declared order) and
/// the space that gives them meaning. Cheap to copy (a pointer and the indices); the Space
/// must outlive it (a KernelProblem's space is shared by its copies, so it does).
/// Configurations of one space order as their indices do (Space::for_each_valid's order).
class Configuration {
 public:
  /// `config` must be of `space` (one index per parameter, each within its list).
  Configuration(const Space& space, Config config) : space_(&space), config_(std::move(config)) {}
  /// The space's default configuration.
  static Configuration default_of(const Space& space) { return {space, space.default_config()}; }
  /// From Kernel Tuner's key ("128,4,1"); throws InputError naming the part that is not
  /// in its parameter's list. Restrictions are not checked.
  static Configuration from_key(const Space& space, std::string_view key);
  /// From "k=v,k=v" (unnamed parameters take their default); throws InputError for an
  /// unknown parameter or a value outside its list. Restrictions are not checked.
  static Configuration from_assignments(const Space& space, std::string_view text);

  const Space& space() const { return *space_; }
  /// The indices: what strategies, the compile pool and the GPU worker take.
  const Config& index() const { return config_; }
  const Value& value(std::size_t parameter) const { return space_->value(config_, parameter); }
  /// Name -> value, declared order.
  std::vector<std::pair<std::string, Value>> assignments() const { return space_->assignments(config_); }
  /// The first restriction it violates ("" when valid): Space::violated_restriction.
  std::string violated_restriction() const { return space_->violated_restriction(config_); }

  /// Kernel Tuner's key: str() of each value joined by ",", e.g. "128,4,1".
  std::string key() const { return space_->key(config_); }
  /// {"block_size_x":128,"alg":"a","f":2.45,"on":true}: declared order; bools, ints and
  /// floats as JSON values, anything else as its str().
  nlohmann::ordered_json to_json() const;
  /// to_json() as text: the form the store keeps.
  std::string json() const { return to_json().dump(); }

  friend bool operator==(const Configuration& a, const Configuration& b) {
    return a.space_ == b.space_ && a.config_ == b.config_;
  }
  friend std::strong_ordering operator<=>(const Configuration& a, const Configuration& b) {
    if (auto c = a.config_ <=> b.config_; c != 0) return c;
    return std::compare_three_way{}(a.space_, b.space_);
  }

 private:
  const Space* space_;
  Config config_;
};

}  // namespace cutune
