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

}  // namespace cutune
