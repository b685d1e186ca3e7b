// Kernel Tuner's NVMLObserver observables from cutune's own readings: the names and units a
// script's rows get (nvml_energy in J per launch where cutune keeps mJ), in the order asked,
// and nothing for a reading that was not taken (never a 0 that reads as a measurement).
#include <catch2/catch.hpp>

#include "cutune/model/kt_observables.hpp"

using namespace cutune;

TEST_CASE("NVML readings under Kernel Tuner's names and units, in the order asked", "[model][observers]") {
  ResultStats s;
  s.power_w = 250.0;
  s.energy_mj_per_launch = 0.5;
  s.nvml_sm_clock_mhz = 1980.0;
  s.temperature_c = 55.0;
  const ObservedValues v = kt_nvml_observed(s, {"temperature", "nvml_energy", "nvml_power", "core_freq"});
  CHECK(v == ObservedValues{{"temperature", 55.0}, {"nvml_energy", 0.0005}, {"nvml_power", 250.0},
                            {"core_freq", 1980.0}});
}

TEST_CASE("a reading not taken is left out", "[model][observers]") {
  ResultStats s;
  s.power_w = 100.0;  // no energy measured (--energy off), no clock or temperature (no NVML)
  CHECK(kt_nvml_observed(s, kt_nvml_observables()) == ObservedValues{{"nvml_power", 100.0}});
  CHECK(kt_nvml_observed(ResultStats{}, kt_nvml_observables()).empty());
}

TEST_CASE("the observables cutune measures, by Kernel Tuner's names", "[model][observers]") {
  CHECK(kt_nvml_observables() == std::vector<std::string>{"nvml_power", "nvml_energy", "core_freq", "temperature"});
  CHECK(is_kt_nvml_observable("core_freq"));
  CHECK_FALSE(is_kt_nvml_observable("mem_freq"));
  CHECK_FALSE(is_kt_nvml_observable("gr_voltage"));
}
