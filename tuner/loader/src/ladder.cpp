#include "ladder.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <tuple>

namespace cutune::loader::detail {
namespace {

std::optional<std::int64_t> to_int(std::string_view text) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

/// "NVIDIA H200/sm_90" -> "sm_90".
std::string_view arch_of(std::string_view model_key) {
  const auto slash = model_key.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : model_key.substr(slash + 1);
}

}  // namespace

std::optional<std::map<std::string, std::int64_t>> parse_problem_key(std::string_view key) {
  std::map<std::string, std::int64_t> vars;
  constexpr std::string_view kSize = "ProblemSize=";
  if (key.starts_with(kSize)) {
    // ProblemInstance::key() of a problem without variables: "ProblemSize=64x32".
    std::string_view dims = key.substr(kSize.size());
    for (std::size_t d = 0; !dims.empty(); ++d) {
      const auto x = dims.find('x');
      auto v = to_int(dims.substr(0, x));
      if (!v) return std::nullopt;
      vars["ProblemSize[" + std::to_string(d) + "]"] = *v;
      dims = x == std::string_view::npos ? std::string_view{} : dims.substr(x + 1);
    }
    return vars;
  }
  while (!key.empty()) {
    const auto comma = key.find(',');
    const std::string_view item = key.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    auto v = to_int(item.substr(eq + 1));
    if (!v) return std::nullopt;
    vars[std::string(item.substr(0, eq))] = *v;
    key = comma == std::string_view::npos ? std::string_view{} : key.substr(comma + 1);
  }
  return vars;
}

double problem_distance(std::string_view a, std::string_view b) {
  constexpr double kFar = std::numeric_limits<double>::infinity();
  const auto va = parse_problem_key(a), vb = parse_problem_key(b);
  if (!va || !vb || va->size() != vb->size()) return kFar;
  double d = 0.0;
  for (const auto& [name, x] : *va) {
    auto it = vb->find(name);
    if (it == vb->end()) return kFar;
    const std::int64_t y = it->second;
    if (x == y) continue;
    if (x <= 0 || y <= 0) return kFar;
    d += std::abs(std::log(static_cast<double>(x) / static_cast<double>(y)));
  }
  return d;
}

Choice choose(const std::vector<db::WisdomEntry>& winners, const std::string& kernel,
              const std::string& problem_key, const DeviceIdentity& gpu, const std::string& objective) {
  Choice best;
  auto better = [&](const Choice& c) {
    if (!best.entry) return true;
    const auto& w = c.entry->winner;
    const auto& b = best.entry->winner;
    return std::tuple(static_cast<int>(c.rung), c.distance, w.gpu_model, w.problem_key) <
           std::tuple(static_cast<int>(best.rung), best.distance, b.gpu_model, b.problem_key);
  };
  const std::string model = gpu.model_key(), arch = gpu.arch();
  for (const auto& e : winners) {
    const db::Winner& w = e.winner;
    if (w.kernel != kernel || w.objective.name() != objective) continue;
    Choice c{&e, Rung::TemplateDefault, problem_distance(problem_key, w.problem_key)};
    if (!std::isfinite(c.distance)) continue;
    if (w.gpu_model == model)
      c.rung = w.problem_key == problem_key ? Rung::Exact : Rung::NearestProblem;
    else if (arch_of(w.gpu_model) == arch)
      c.rung = Rung::SameComputeCapability;
    else
      continue;
    if (better(c)) best = c;
  }
  return best;
}

}  // namespace cutune::loader::detail
