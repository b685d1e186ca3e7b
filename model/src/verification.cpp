#include "cutune/model/verification.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cutune/model/errors.hpp"

namespace cutune {

std::optional<VerifyMode> parse_verify_mode(const std::string& text) {
  if (text == "reference") return VerifyMode::Reference;
  if (text == "default") return VerifyMode::Default;
  if (text == "none") return VerifyMode::None;
  return std::nullopt;
}

const char* verify_mode_name(VerifyMode mode) {
  switch (mode) {
    case VerifyMode::Reference: return "reference";
    case VerifyMode::Default: return "default";
    case VerifyMode::None: return "none";
  }
  return "none";
}

bool VerificationPlan::any(VerifyMode m) const {
  return std::find(modes.begin(), modes.end(), m) != modes.end();
}

namespace {

bool has_reference(const KernelProblem& problem, std::size_t argument) {
  if (!problem.reference().empty()) return true;
  const auto& refs = problem.reference_arguments();
  return std::any_of(refs.begin(), refs.end(), [&](const ReferenceArgument& r) { return r.target == argument; });
}

}  // namespace

std::string VerificationPlan::describe(const KernelProblem& problem) const {
  auto what = [&](VerifyMode m) -> std::string {
    if (m == VerifyMode::Reference) return problem.reference().empty() ? "ReferenceArguments" : "reference";
    if (m == VerifyMode::Default) return "default configuration";
    return "none";
  };
  std::vector<std::pair<std::string, std::string>> outputs;  // (name, what)
  for (std::size_t i = 0; i < modes.size(); ++i)
    if (problem.arguments()[i].output || modes[i] != VerifyMode::None)
      outputs.emplace_back(problem.arguments()[i].name, what(modes[i]));
  if (outputs.empty()) return "none";
  if (std::all_of(outputs.begin(), outputs.end(), [&](const auto& o) { return o.second == outputs.front().second; }))
    return outputs.front().second;
  std::string out;
  for (const auto& [name, w] : outputs) out += (out.empty() ? "" : ", ") + name + ": " + w;
  return out;
}

VerificationPlan plan_verification(const KernelProblem& problem, const std::vector<std::string>& overrides) {
  const auto& args = problem.arguments();
  VerificationPlan plan;
  plan.modes.assign(args.size(), VerifyMode::None);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].output) continue;
    if (has_reference(problem, i)) plan.modes[i] = VerifyMode::Reference;
    else if (problem.reference_arguments().empty()) plan.modes[i] = VerifyMode::Default;
  }
  for (const auto& [i, m] : problem.verification()) plan.modes[i] = m;
  for (const std::string& entry : overrides) {
    const auto eq = entry.find('=');
    const std::string name = eq == std::string::npos ? "" : entry.substr(0, eq);
    const std::string text = eq == std::string::npos ? entry : entry.substr(eq + 1);
    const auto mode = parse_verify_mode(text);
    if (!mode)
      throw InputError(fmt::format("--verify {}: unknown mode '{}' (reference, default or none)", entry, text));
    std::vector<std::size_t> targets;
    if (eq == std::string::npos) {
      for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i].output) targets.push_back(i);
    } else {
      const auto it = std::find_if(args.begin(), args.end(), [&](const ArgumentSpec& a) { return a.name == name; });
      if (it == args.end() || !it->is_vector)
        throw InputError(fmt::format("--verify {}: {} has no Vector argument named '{}'",
                                     entry, problem.json_file().string(), name));
      targets.push_back(static_cast<std::size_t>(it - args.begin()));
    }
    for (std::size_t i : targets) {
      if (*mode == VerifyMode::Reference && !has_reference(problem, i))
        throw InputError(fmt::format("--verify {}: output '{}' has no reference (neither cutune.Reference nor a "
                                     "ReferenceArguments entry in {}); use default or none",
                                     entry, args[i].name, problem.json_file().string()));
      plan.modes[i] = *mode;
    }
  }
  return plan;
}

}  // namespace cutune
