#include <fmt/format.h>

#include <stdexcept>

#include "tuned_kernel_impl.hpp"

namespace cutune::loader {

TunedKernel::TunedKernel(std::shared_ptr<const CompiledKernel> compiled, Selection selection,
                         std::shared_ptr<Impl> impl, std::size_t argument_count)
    : argument_count_(argument_count) {
  plans_.push_back(std::make_shared<Plan>(Plan{std::move(compiled), std::move(selection), std::move(impl)}));
  plan_.store(plans_.back().get(), std::memory_order_release);
}

TunedKernel::~TunedKernel() = default;

void TunedKernel::switch_to(std::shared_ptr<Plan> next) {
  std::lock_guard lock(plans_mutex_);
  plans_.push_back(std::move(next));
  plan_.store(plans_.back().get(), std::memory_order_release);
}

void TunedKernel::set_on_miss(std::string text) {
  auto next = std::make_shared<Plan>(current());
  next->selection.on_miss = std::move(text);
  switch_to(std::move(next));
}

void TunedKernel::launch(std::span<void* const> args, CUstream stream) const {
  const Plan& plan = current();  // one load: the launches below all belong to the same plan
  if (args.size() != argument_count_)
    throw std::invalid_argument(fmt::format("cutune::loader: {} takes {} arguments, {} given",
                                            plan.selection.kernel, argument_count_, args.size()));
  const Impl& impl = *plan.impl;
  // Kernel parameters of a launch that takes a subset of the arguments (multi-kernel
  // sequences): on the stack, so launching allocates nothing.
  constexpr std::size_t kMaxSubset = 64;
  std::array<void*, kMaxSubset> subset{};
  for (const Impl::Launch& l : impl.launches) {
    void** params = const_cast<void**>(args.data());
    if (!l.all_arguments) {
      if (l.arguments.size() > kMaxSubset)
        throw std::invalid_argument(fmt::format("cutune::loader: more than {} kernel parameters", kMaxSubset));
      for (std::size_t i = 0; i < l.arguments.size(); ++i) subset[i] = args[l.arguments[i]];
      params = subset.data();
    }
    CUTUNE_CU(impl.launch_kernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                                 l.shared_bytes, stream, params, nullptr));
  }
}

}  // namespace cutune::loader
