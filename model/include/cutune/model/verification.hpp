#pragma once
// Which outputs are verified, and against what: a reference (cutune.Reference's CPU result
// or KernelSpecification.ReferenceArguments, e.g. a Kernel Tuner `answer`), the default
// configuration's output, or nothing. Chosen per output by the problem file
// (cutune.Verification) and per run (`cutune tune --verify MODE|OUTPUT=MODE`).
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/problem.hpp"

namespace cutune {

/// Starts the error of a configuration whose output differs from the default
/// configuration's (VerifyMode::Default): the tuner counts these among the stored failures.
inline constexpr std::string_view kDiffersFromDefault = "differs from the default configuration's output: ";

struct VerificationPlan {
  /// One entry per argument of the problem; VerifyMode::None for every argument not checked.
  std::vector<VerifyMode> modes;
  bool any(VerifyMode m) const;
  bool checked(std::size_t argument) const { return modes.at(argument) != VerifyMode::None; }
  /// What the outputs are checked against, for the log and the report: "reference" (a CPU
  /// reference), "ReferenceArguments", "default configuration" or "none" when every output
  /// agrees, else "NAME: WHAT" per output joined by ", ".
  std::string describe(const KernelProblem& problem) const;
  friend bool operator==(const VerificationPlan&, const VerificationPlan&) = default;
};

/// The plan: each output starts from its natural check (its reference when it has one; with
/// ReferenceArguments, an output none of them names is not checked, as Kernel Tuner skips a
/// None answer; otherwise the default configuration's output), then cutune.Verification,
/// then `overrides` in order: "MODE" sets every output, "NAME=MODE" one Vector argument
/// (making it checked). Throws InputError naming the entry for an unknown mode or argument,
/// or "reference" for an output that has none.
VerificationPlan plan_verification(const KernelProblem& problem, const std::vector<std::string>& overrides = {});

}  // namespace cutune
