#pragma once
// The lookup ladder over a source's winners (loader.hpp describes the rungs and the
// distance). Pure CPU: no GPU, no compile.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/formats/wisdom.hpp"
#include "cutune/loader/loader.hpp"

namespace cutune::loader::detail {

/// Variables of a canonical problem key: "n=1,m=2" -> {n:1, m:2}; "ProblemSize=64x32" ->
/// {ProblemSize[0]:64, ProblemSize[1]:32}. nullopt when the key is not of that form.
std::optional<std::map<std::string, std::int64_t>> parse_problem_key(std::string_view key);

/// Sum over variables of |ln(a/b)|; +infinity when the keys have different variables, or
/// differ in one that is <= 0 in either (a flag or mode, not a size).
double problem_distance(std::string_view a, std::string_view b);

struct Choice {
  const db::WisdomEntry* entry = nullptr;  ///< nullptr: the template default
  Rung rung = Rung::TemplateDefault;
  double distance = 0.0;
};

/// The highest rung any winner of `kernel` and `objective` reaches for (gpu, problem_key);
/// within a rung the smallest distance, then the GPU model and problem key (deterministic).
Choice choose(const std::vector<db::WisdomEntry>& winners, const std::string& kernel,
              const std::string& problem_key, const DeviceIdentity& gpu, const std::string& objective);

}  // namespace cutune::loader::detail
