#pragma once
// NVML, loaded at run time like the driver (ARCHITECTURE.md, decision 1): the GPU's clocks,
// temperature, power and energy counter, read around measurements. NVML is
// optional: without it every reading is empty and measurements go on, saying so.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

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

/// SM clock, temperature and power of one device, read every `period` on a thread of its
/// own: a reading costs up to a millisecond, which a measurement loop of about 2 ms per
/// configuration should not wait for, and these values change over tens of
/// milliseconds anyway. Nothing runs when the device reads nothing.
class NvmlMonitor {
 public:
  struct Reading {
    std::optional<double> sm_clock_mhz, temperature_c, power_w;
  };
  NvmlMonitor(const NvmlDevice& device, std::chrono::milliseconds period);
  ~NvmlMonitor();
  NvmlMonitor(const NvmlMonitor&) = delete;
  NvmlMonitor& operator=(const NvmlMonitor&) = delete;
  /// The latest reading; the first is taken before the constructor returns.
  Reading latest() const;

 private:
  const NvmlDevice& device_;
  mutable std::mutex mutex_;
  Reading latest_;
  std::condition_variable_any wake_;
  std::jthread thread_;  ///< last: started once everything it uses exists
};

/// "580.159" from NVML, or "" when NVML is not there.
std::string nvml_driver_release();

}  // namespace cutune::cuda
