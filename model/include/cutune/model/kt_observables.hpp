#pragma once
// Kernel Tuner's NVMLObserver observables that cutune measures itself, under Kernel Tuner's
// names and units, so that a script's rows (and metrics over them) read the same fields:
//   nvml_power   W, the board's power during sampling     (ResultStats::power_w)
//   nvml_energy  J per launch                              (energy_mj_per_launch / 1000)
//   core_freq    MHz, the SM clock NVML reports            (nvml_sm_clock_mhz)
//   temperature  degrees C                                  (temperature_c)
// Kernel Tuner's nvml_energy is its power times the kernel's time: the energy of one launch,
// which is what cutune's windowed energy counter measures directly.
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/result.hpp"

namespace cutune {

/// The observables above, in that order.
const std::vector<std::string>& kt_nvml_observables();
/// Whether `name` is one of them.
bool is_kt_nvml_observable(std::string_view name);
/// The readings of `stats` named in `observables` (each one of the above), in that order; one
/// that was not measured (no NVML, energy not asked for) is left out rather than given as 0.
ObservedValues kt_nvml_observed(const ResultStats& stats, const std::vector<std::string>& observables);

}  // namespace cutune
