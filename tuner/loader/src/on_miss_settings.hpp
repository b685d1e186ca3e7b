#pragma once
// LoaderOptions::on_miss resolved once, when the loader is made: the environment read, the
// values checked, the DB and the `cutune` command found. Pure CPU.
#include <filesystem>
#include <optional>
#include <string>

#include "cutune/loader/loader.hpp"

namespace cutune::loader::detail {

struct OnMissSettings {
  double budget_s = 10.0;
  double poll_s = 2.0;
  /// How long a claim holds: the budget plus what a tuning takes beyond it (process start,
  /// compiles, the finalists), so that only a claim whose holder died is taken over.
  double claim_s = 0.0;
  std::filesystem::path db;
  std::filesystem::path tuner;  ///< empty when not found
  std::string no_tuner;         ///< why not, for selection().on_miss
  std::filesystem::path log_dir;  ///< the tuners' output: <db>.on-miss/
};

/// nullopt when tuning on first use is off. `option` unset: the environment. Throws InputError
/// (one line naming the option or variable and the value) for a budget or poll interval that is
/// not a positive number of seconds, an unknown mode, or a tuner given explicitly (option or
/// $CUTUNE_BIN) that is not an executable file.
std::optional<OnMissSettings> resolve_on_miss(const std::optional<OnMiss>& option, const std::filesystem::path& winners,
                                              bool winners_is_db);

/// A positive, finite number of seconds from `text`; throws InputError "`what`: 'text' is ...".
double parse_seconds(const std::string& what, const std::string& text);

}  // namespace cutune::loader::detail
