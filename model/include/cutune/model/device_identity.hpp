#pragma once
// The structured identity of a GPU (ARCHITECTURE.md, decision 8): never just a name.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace cutune {

struct DeviceIdentity {
  std::string name;                 ///< "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;   ///< compute capability
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int sm_clock_khz = 0;             ///< peak SM clock
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int l2_bytes = 0;
  int driver_version = 0;           ///< cuDriverGetVersion, e.g. 13000
  std::string driver_release;       ///< NVML's driver string ("580.159"), "" if unknown
  int nvrtc_version = 0;            ///< major*1000 + minor*10
  std::string uuid;                 ///< "GPU-xxxxxxxx-..." ("" on machines without a GPU)

  /// "sm_90"
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
  /// The key winners are stored under: name and architecture ("NVIDIA H200/sm_90").
  std::string model_key() const { return name + "/" + arch(); }
  /// Folder-name form of the model: "nvidia-h200".
  std::string slug() const;
  friend bool operator==(const DeviceIdentity&, const DeviceIdentity&) = default;
};

/// The identity as the JSON that `cutune devices --json`, --report files and the
/// benchmarks write (clocks in MHz, versions as "13.0").
nlohmann::ordered_json to_json(const DeviceIdentity& device);

}  // namespace cutune
