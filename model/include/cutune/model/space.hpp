#pragma once
// The configuration space: parameters with value lists and Kernel Tuner-style restrictions.
// Valid configurations are enumerated lazily, depth first in declared parameter order, and
// each restriction is checked as soon as the last parameter it reads has been assigned,
// so whole subtrees are pruned without ever building the Cartesian product. Restrictions
// on numbers run compiled (restriction_program.hpp), with a table of the results per
// combination of the values they read; anything the compiled form is unsure of goes to the
// tree evaluator, so the valid set, its order and the errors are Python's.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/expression.hpp"
#include "cutune/model/value.hpp"

namespace cutune {

namespace detail {
class RestrictionProgram;
}

struct Parameter {
  std::string name;
  ValueList values;     ///< in declared order; distinct
  Value default_value;  ///< one of values
};

/// A configuration: for each parameter (declared order) the index of its value.
struct Config {
  std::vector<std::uint32_t> index;
  friend bool operator==(const Config&, const Config&) = default;
  friend auto operator<=>(const Config&, const Config&) = default;
};

struct Restriction {
  Expression expression;
  std::vector<std::size_t> parameters;  ///< indices of the parameters it reads
  std::size_t check_at = 0;             ///< the deepest of them: checked once it is set
};

class Space {
 public:
  /// `constants` are extra names restrictions may read (e.g. problem variables).
  /// Throws InputError for duplicate names/values, a default outside its list, a
  /// restriction that does not parse or names something unknown.
  Space(std::vector<Parameter> parameters, const std::vector<std::string>& restrictions,
        std::map<std::string, Value> constants = {});

  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<Restriction>& restrictions() const { return restrictions_; }

  /// Kernel Tuner's thread-block limit (searchspace.py adds MaxProdConstraint over the
  /// block_size_names that are parameters): the product of `block_dimensions` (each
  /// reading tuning parameters only) must not exceed `max_threads`. Checked after the
  /// restrictions, as Kernel Tuner adds it last; replaces an earlier limit. An empty list
  /// removes it. Throws InputError when an expression names something unknown.
  void set_block_limit(const std::vector<Expression>& block_dimensions, std::int64_t max_threads);
  /// The limit as Kernel Tuner prints it ("MDIMC * NDIMC <= 1024"), "" when none.
  const std::string& block_limit() const { return block_limit_text_; }
  /// Index of a parameter; throws InputError naming it if unknown.
  std::size_t index_of(std::string_view name) const;
  bool has_parameter(std::string_view name) const;

  /// Product of the value-list sizes (saturates at UINT64_MAX).
  std::uint64_t cartesian_size() const;
  /// Visits valid configurations in lexicographic index order; `visit` returns false to
  /// stop early. Never materialises the Cartesian product.
  void for_each_valid(const std::function<bool(const Config&)>& visit) const;
  std::uint64_t count_valid() const;
  /// Advances `config` to the next valid configuration in the same order as
  /// for_each_valid; an empty `config` starts from the first. Returns false at the end.
  /// Lets a strategy enumerate lazily, one configuration per ask.
  bool next_valid(Config& config) const;

  /// Narrows the space to the configurations `member` accepts, checked after every
  /// restriction at the leaf, so is_valid, next_valid, for_each_valid and count_valid honour
  /// it. A recorded space (a Kernel Tuner cache holds only configurations that passed the
  /// restrictions) uses it to make "valid" mean "in the recording". nullptr removes it.
  void set_membership(std::function<bool(const Config&)> member) { membership_ = std::move(member); }

  /// What violated_restriction says of a configuration the membership predicate rejects.
  static constexpr std::string_view kNotAMember = "<not a member>";
  /// The text of the first restriction the configuration violates, kNotAMember when the
  /// membership predicate rejects it, or "" when valid.
  std::string violated_restriction(const Config& config) const;
  bool is_valid(const Config& config) const { return violated_restriction(config).empty(); }

  Config default_config() const;
  /// Makes `config` (which must be of this space) the default: its values become the
  /// parameters' default values.
  void set_default(const Config& config);
  /// Whether the problem names its default (a T1 file's "Default", as every built-in template
  /// and BAT file gives): a tuning evaluates a named default first, as its author's guess and
  /// the speedup's baseline. Otherwise the default is each parameter's first listed value (a
  /// Kernel Tuner script names none), no better a start than any other configuration.
  bool default_named() const { return default_named_; }
  void set_default_named(bool named) { default_named_ = named; }
  const Value& value(const Config& config, std::size_t parameter) const;
  /// Name -> value, declared order.
  std::vector<std::pair<std::string, Value>> assignments(const Config& config) const;

  /// Kernel Tuner's key: str() of each value joined by ",", e.g. "128,4,1".
  std::string key(const Config& config) const;
  /// Inverse of key(); throws InputError naming the part that is not in its list.
  Config parse_key(std::string_view key) const;
  /// From "k=v,k=v" (unnamed parameters take their default); throws InputError for an
  /// unknown parameter or a value outside the declared list.
  Config parse_assignments(std::string_view text) const;
  /// Value of `name` given as text, matched against the declared list (128 matches 128,
  /// 2.5 matches 2.5, True matches True); throws InputError if not declared.
  std::uint32_t find_value(std::size_t parameter, std::string_view text) const;

 private:
  bool check(const std::vector<std::uint32_t>& partial, std::size_t depth) const;
  /// The depth-first walk from `config` at `depth` (descend: check the value there first;
  /// else advance it first) to the next valid configuration, leaving `depth` at the last
  /// level; false (config emptied) at the end.
  bool walk(Config& config, std::size_t& depth, bool descend) const;
  /// Whether r holds for the (partial) configuration: its compiled program where that is
  /// sure, else the tree evaluator (which also raises the restriction's error).
  bool holds(const Restriction& r, const detail::RestrictionProgram* program, const std::vector<std::uint32_t>& partial,
             std::size_t assigned, const char* kind, const std::string& text) const;
  /// Compiles every restriction and the block limit (a missing program: the tree evaluator).
  void compile_programs();

  std::vector<Parameter> parameters_;
  std::vector<Restriction> restrictions_;
  std::map<std::string, Value> constants_;
  std::vector<std::vector<std::size_t>> checks_at_;  ///< restriction indices per depth
  std::function<bool(const Config&)> membership_;   ///< empty: every valid configuration
  bool default_named_ = false;
  std::optional<Restriction> block_limit_;          ///< checked at its check_at, after the others
  std::string block_limit_text_;
  /// Per restriction its compiled form, or null; immutable once built, so copies share it.
  std::vector<std::shared_ptr<const detail::RestrictionProgram>> programs_;
  std::shared_ptr<const detail::RestrictionProgram> block_program_;
  /// What check() runs at each depth, in order: the restrictions, then the block limit.
  struct Check {
    const detail::RestrictionProgram* program;  ///< owned by programs_/block_program_; may be null
    std::size_t restriction;                    ///< index into restrictions_, or kBlockLimit
  };
  static constexpr std::size_t kBlockLimit = static_cast<std::size_t>(-1);
  std::vector<std::vector<Check>> plan_;
};

}  // namespace cutune
