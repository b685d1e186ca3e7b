#pragma once
// NVML, loaded at run time like the driver (ARCHITECTURE.md, decision 1): the GPU's clocks,
// temperature, power and energy counter, read around measurements (issue 4). NVML is
// optional: without it every reading is empty and measurements go on, saying so.
#include <cstdint>
#include <optional>
#include <string>

namespace cutune::cuda {

/// One GPU as NVML sees it, found by the driver's UUID ("GPU-..."). Readings are
/// std::nullopt when NVML is absent, does not know the device, or refuses the query.
class NvmlDevice {
 public:
  /// `uuid` as DeviceIdentity::uuid; an empty or unknown uuid gives a device that reads nothing.
  explicit NvmlDevice(const std::string& uuid);

  bool available() const { return handle_ != nullptr; }
  std::optional<double> sm_clock_mhz() const;
  std::optional<double> temperature_c() const;
  std::optional<double> power_w() const;
  /// Energy since the driver loaded, in millijoules (Volta and newer).
  std::optional<std::uint64_t> total_energy_mj() const;
  /// Active clock event ("throttle") reasons as NVML's bit mask; 0 = none, 1 = idle.
  std::optional<std::uint64_t> clock_event_reasons() const;
  /// Why available() is false ("" when it is true).
  const std::string& why_unavailable() const { return why_; }

 private:
  void* handle_ = nullptr;  ///< nvmlDevice_t
  std::string why_;
};

/// "580.159" from NVML, or "" when NVML is not there.
std::string nvml_driver_release();

}  // namespace cutune::cuda
