#include "cutune/model/device_identity.hpp"

#include <cctype>

namespace cutune {

std::string DeviceIdentity::slug() const {
  // Lowercase ASCII letters and digits; every run of anything else becomes one '-', with
  // none at either end. Folder names under results/ use it ("NVIDIA H200" -> "nvidia-h200").
  std::string out;
  out.reserve(name.size());
  bool pending_dash = false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 && u < 0x80) {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      pending_dash = true;
    }
  }
  return out.empty() ? "unknown-gpu" : out;
}

nlohmann::ordered_json to_json(const DeviceIdentity& d) {
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  return nlohmann::ordered_json{{"name", d.name},
                                {"model_key", d.model_key()},
                                {"slug", d.slug()},
                                {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                                {"arch", d.arch()},
                                {"sm_count", d.sm_count},
                                {"memory_bytes", d.memory_bytes},
                                {"sm_clock_mhz", d.sm_clock_khz / 1000},
                                {"memory_clock_mhz", d.memory_clock_khz / 1000},
                                {"memory_bus_bits", d.memory_bus_bits},
                                {"l2_bytes", d.l2_bytes},
                                {"driver_cuda_version", version(d.driver_version)},
                                {"driver_release", d.driver_release},
                                {"nvrtc_version", version(d.nvrtc_version)},
                                {"uuid", d.uuid}};
}

}  // namespace cutune
