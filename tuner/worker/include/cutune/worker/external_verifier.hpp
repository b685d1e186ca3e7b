#pragma once
// A verifier outside cutune, listening on a Unix socket: the Python package's, which calls a
// script's verify= function as Kernel Tuner does (verify(answer, result_host, atol=atol)) on
// the outputs of each configuration's verification run. The GPU stage connects once per
// worker process and asks about every configuration that passed its own checks, before it
// is timed. The conversation, in cutune::process frames (8-byte length, then the bytes):
//   stage:    {"hello": 1, "arguments": [name, ...]}      (every argument of the problem)
//   verifier: {"arguments": [i, ...]}                     (the ones it is to be sent)
//   then per configuration:
//   stage:    {"seq": n, "config": key, "indices": [i, ...], "resources": {...},
//              "arguments": [i, ...]}, one frame per argument listed
//   verifier: {"seq": n, "ok": true|false, "error": "why, when not ok",
//              "observed": {name: number, ...}}
// "indices" is the configuration as the index of each parameter's value, in declared order
// (the rows of cutune.Configurations' table): the package selects a Tunable answer and gives
// observers the parameters from its own Python values, never from a parse of the key.
// "resources" (KernelResources' to_json; absent when unknown) is what a RegisterObserver
// reports. "observed" (optional) is what the package's observers gave: numbers, or "NaN",
// "Infinity", "-Infinity" (JSON has none), kept with the result.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/measurement.hpp"
#include "cutune/process/subprocess.hpp"

namespace cutune::worker {

class ExternalVerifier {
 public:
  /// Connects and says hello. Throws InputError when nothing listens at `socket_path` or
  /// the answer is not one (an index outside `argument_names`).
  ExternalVerifier(const std::string& socket_path, const std::vector<std::string>& argument_names);
  ~ExternalVerifier();
  ExternalVerifier(const ExternalVerifier&) = delete;  // owns the socket
  ExternalVerifier& operator=(const ExternalVerifier&) = delete;

  /// The arguments the verifier wants, by index into the problem's arguments.
  const std::vector<std::size_t>& arguments() const { return arguments_; }

  struct Verdict {
    bool ok = false;
    std::string error;
    ObservedValues observed;  ///< what the verifier's observers gave, in its order
  };
  /// One configuration as the verifier is told of it.
  struct Asked {
    std::string key;                             ///< Kernel Tuner's "128,4,1"
    std::vector<std::uint32_t> indices;          ///< Config::index: each parameter's value index
    std::optional<KernelResources> resources;    ///< what the loaded configuration costs
  };
  /// The verifier's verdict on one configuration: `contents` holds the bytes of each of
  /// arguments(), in that order. Throws std::runtime_error when the verifier is gone, answers
  /// out of turn, or observes something that is not a number.
  Verdict check(const Asked& config, const std::vector<process::Frame>& contents);

 private:
  int fd_ = -1;
  std::string path_;
  std::uint64_t seq_ = 0;
  std::vector<std::size_t> arguments_;
};

}  // namespace cutune::worker
