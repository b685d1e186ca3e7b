#pragma once
// What a TunedKernel holds: the loaded module and its launch sequence, resolved once so
// that launch() only fills kernel parameters and calls the driver (the loader's
// launch within 1 us of a raw cuLaunchKernel).
#include <array>
#include <cstdint>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/loader/loader.hpp"

namespace cutune::loader {

struct TunedKernel::Impl {
  struct Launch {
    CUfunction function = nullptr;
    std::array<std::uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
    std::uint32_t shared_bytes = 0;
    std::vector<std::uint32_t> arguments;  ///< indices into the T1 arguments
    bool all_arguments = false;            ///< every argument, in order: pass args as they are
  };
  explicit Impl(cuda::Module m) : module(std::move(m)) {}
  cuda::Module module;
  std::vector<Launch> launches;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;  ///< the driver's, looked up once
};

}  // namespace cutune::loader
