#pragma once
// Output verification on the device: a configuration's output is compared with the expected
// output where both already are, on the GPU, instead of downloading them (a GEMM's 16M-float
// output cost 130 ms per configuration to download and compare on the CPU). The test per
// element is element_check.hpp's, the one the host's compare() uses, so the two agree;
// only a few bytes come back, and on a mismatch the worst element itself for the message.
// Shared by the GPU worker (worker::GpuStage) and the loader's first-use check, which both
// verify through verify_run() below. It lives here, the lowest layer both link: the loader is
// installed for applications and must not pull in the worker (measurement, NVML sampling,
// the CPU references), and the model cannot hold it (no CUDA there).
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/model/host_data.hpp"

namespace cutune::cuda {

class OutputComparator {
 public:
  /// Loads the comparison kernels (embedded fatbinary); needs the context current.
  OutputComparator();
  OutputComparator(const OutputComparator&) = delete;  // owns the module and scratch buffers
  OutputComparator& operator=(const OutputComparator&) = delete;

  /// Compares `count` elements of `spec`'s type at `expected` and `got` (device addresses),
  /// as compare() does on the host. `poisoned`: `got` was poisoned before the run (an
  /// element still holding the float poison fails as never written). Synchronises.
  VerifyResult compare(const ArgumentSpec& spec, CUdeviceptr expected, CUdeviceptr got, std::int64_t count,
                       const Tolerance& tolerance, bool poisoned);

 private:
  Module module_;
  CUfunction finish_ = nullptr;
  DeviceBuffer partials_, result_;
};

/// A device copy of `argument` as a verification run starts from it: a WriteOnly output
/// holds the poison (poison(), host_data.hpp), so that an element the kernel never writes
/// shows; any other argument holds its data. Vector arguments only.
struct VerificationBuffer {
  DeviceBuffer buffer;
  bool poisoned = false;  ///< WriteOnly: the poison, not the data
};
VerificationBuffer upload_for_verification(const HostArgument& argument);

/// One output compared after a verification run.
struct OutputCheck {
  const ArgumentSpec* spec = nullptr;
  std::int64_t count = 0;
  Tolerance tolerance;
  CUdeviceptr expected = 0, got = 0;
  bool poisoned = false;    ///< `got` held the poison before the run
  std::string_view prefix;  ///< starts the message when this output fails
};

/// The verification run of a configuration, one routine for the tuner's GPU stage and the
/// loader's first-use check: `run` launches the configuration once on arguments whose
/// WriteOnly outputs hold the poison (upload_for_verification, or copies of such buffers);
/// then, after a synchronise, every output of `checks` is compared with its expected one
/// on the device, in order (numpy.allclose's test for floats, exact for integers,
/// element_check.hpp), stopping at the first that fails. The result: ok, or that output's
/// worst element as the message after its prefix; max_error over the outputs compared.
/// `comparator` is loaded on first use (no checks, no module) and kept for the next run.
/// Throws DriverError when a launch or a copy fails.
VerifyResult verify_run(std::optional<OutputComparator>& comparator, const std::function<void()>& run,
                        const std::vector<OutputCheck>& checks);

}  // namespace cutune::cuda
