#include <fmt/format.h>

#include <stdexcept>

#include "tuned_kernel_impl.hpp"

namespace cutune::loader {

TunedKernel::TunedKernel(std::shared_ptr<const CompiledKernel> compiled, Selection selection,
                         std::shared_ptr<Impl> impl, std::size_t argument_count)
    : compiled_(std::move(compiled)), selection_(std::move(selection)), impl_(std::move(impl)),
      argument_count_(argument_count) {}

TunedKernel::~TunedKernel() = default;

void TunedKernel::launch(std::span<void* const> args, CUstream stream) const {
  if (args.size() != argument_count_)
    throw std::invalid_argument(fmt::format("cutune::loader: {} takes {} arguments, {} given",
                                            selection_.kernel, argument_count_, args.size()));
  // Kernel parameters of a launch that takes a subset of the arguments (multi-kernel
  // sequences): on the stack, so launching allocates nothing.
  constexpr std::size_t kMaxSubset = 64;
  std::array<void*, kMaxSubset> subset{};
  for (const Impl::Launch& l : impl_->launches) {
    void** params = const_cast<void**>(args.data());
    if (!l.all_arguments) {
      if (l.arguments.size() > kMaxSubset)
        throw std::invalid_argument(fmt::format("cutune::loader: more than {} kernel parameters", kMaxSubset));
      for (std::size_t i = 0; i < l.arguments.size(); ++i) subset[i] = args[l.arguments[i]];
      params = subset.data();
    }
    CUTUNE_CU(impl_->launch_kernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                                   l.shared_bytes, stream, params, nullptr));
  }
}

}  // namespace cutune::loader
