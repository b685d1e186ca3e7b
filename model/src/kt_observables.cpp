#include "cutune/model/kt_observables.hpp"

#include <algorithm>
#include <optional>

namespace cutune {

const std::vector<std::string>& kt_nvml_observables() {
  static const std::vector<std::string> names{"nvml_power", "nvml_energy", "core_freq", "temperature"};
  return names;
}

bool is_kt_nvml_observable(std::string_view name) {
  const auto& names = kt_nvml_observables();
  return std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

std::optional<double> reading(const ResultStats& s, std::string_view name) {
  if (name == "nvml_power") return s.power_w;
  if (name == "nvml_energy" && s.energy_mj_per_launch) return *s.energy_mj_per_launch / 1e3;
  if (name == "core_freq") return s.nvml_sm_clock_mhz;
  if (name == "temperature") return s.temperature_c;
  return std::nullopt;
}

}  // namespace

ObservedValues kt_nvml_observed(const ResultStats& stats, const std::vector<std::string>& observables) {
  ObservedValues out;
  for (const std::string& name : observables)
    if (const auto v = reading(stats, name)) out.emplace_back(name, *v);
  return out;
}

}  // namespace cutune
