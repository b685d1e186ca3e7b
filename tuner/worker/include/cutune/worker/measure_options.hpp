#pragma once
// How the GPU stage measures configurations: the tuner's choice, sent to the GPU worker
// with its set-up request (plain data, no CUDA).
#include <cstddef>
#include <string>
#include <vector>

#include "cutune/measure/settings.hpp"

namespace cutune::worker {

/// Defaults: see each settings struct.
struct MeasureOptions {
  /// Cold L2 (nvbench's cold measurement): each sample starts with nothing of the
  /// kernel's data in L2, by a flush or, when the data fits in L2, by rotating argument
  /// sets. False: warm, as Kernel Tuner measures (back-to-back on the same data).
  bool cold_l2 = true;
  /// With cold_l2, rotate argument sets when the data fits in L2 (else flush regardless).
  bool rotate_when_fits = true;
  measure::SamplerSettings sampler;
  measure::ScreeningSettings screening;  ///< while searching
  measure::StoppingSettings thorough;    ///< finalists, and `cutune measure`
  /// Finalists re-measured thoroughly besides the default. 0: no re-measurement.
  std::size_t finalists = 3;
  /// Energy per launch (NVML counter over back-to-back launches) for every configuration;
  /// otherwise for the finalists only.
  bool energy_every_config = false;
  /// Back-to-back launch window of one energy measurement, in seconds. 0.2: NVML's energy
  /// counter advances in steps of a few ms to tens of ms, so a window of 0.2 s keeps the
  /// quantisation below a few percent.
  double energy_window_s = 0.2;
  /// `tune --verify` entries: "reference|default|none" for every output, or "NAME=MODE"
  /// (plan_verification); they override the problem file's cutune.Verification.
  std::vector<std::string> verify;
  /// A Unix socket where a verifier outside cutune listens (external_verifier.hpp): every
  /// configuration that passes cutune's own checks is also checked there. "": none.
  std::string verifier;
  friend bool operator==(const MeasureOptions&, const MeasureOptions&) = default;
};

}  // namespace cutune::worker
