#pragma once
// Host-side argument data: generated from the argument specs (seeded, never all zeros for
// Random fills), handed to the CPU reference, and compared against the GPU's outputs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/problem.hpp"

namespace cutune {

/// An allocator that leaves new elements uninitialised: an argument's bytes are written
/// once, by its fill, in parallel; zeroing them first took a single thread 100 ms per
/// 256 MiB, on the tuning's start-up path.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct HostArgument {
  const ArgumentSpec* spec = nullptr;
  std::int64_t count = 1;         ///< elements (1 for scalars)
  /// count * element_size(spec->type); every byte written by whoever sizes it.
  std::vector<std::byte, UninitialisedAllocator<std::byte>> bytes;

  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
};

/// Fills every datum of the problem (KernelProblem::data(): each argument, each variant of
/// a Tunable one): Constant -> FillValue (a complex: as its real part); Random -> floats
/// uniform in [0, FillValue) (FillValue 0 means 1; a complex: both parts), integers uniform in
/// [0, max(1, FillValue)]; BinaryRaw -> the file's bytes (a Scalar's too).
std::vector<HostArgument> make_host_arguments(const KernelProblem& problem,
                                              const ProblemInstance& instance,
                                              std::uint64_t seed);

/// The outputs the problem's ReferenceArguments define: one entry per datum (data()), in order;
/// the targets hold the reference data (a Constant fill, or a BinaryRaw file of exactly the
/// argument's size), every other entry only its spec (count 0, no bytes: an output that no
/// reference names is not checked). Throws InputError naming
/// the JSON file, the field and the sizes when a DataSource cannot be read or has the wrong
/// size. Empty when the problem has no ReferenceArguments.
std::vector<HostArgument> reference_outputs(const KernelProblem& problem, const ProblemInstance& instance);

/// Writes the poison into an output before a verification run, so that an element the
/// kernel never writes is caught: quiet NaNs with a payload of their own for floats, in both
/// parts of a complex (element_check.hpp: kPoisonFloat16/BFloat16/Float32/Float64, told apart
/// from computed NaNs), 0xA5 bytes for integers.
void poison(HostArgument& arg);

/// Whether the element of `type` at `element` holds poison()'s pattern (never for integers,
/// whose poison is a value like any other).
bool holds_poison(ElementType type, const void* element);

struct VerifyResult {
  bool ok = true;
  /// The worst mismatch (largest error, then lowest index): argument, index, got, expected,
  /// and how many elements fail.
  std::string message;
  double max_error = 0.0;        ///< largest finite |got - expected| over all elements
  std::uint64_t failures = 0;    ///< elements that fail
  std::uint64_t worst_index = 0; ///< the element `message` shows (valid when !ok)
};

/// Compares every element with element_check.hpp's test (numpy.allclose's for floats and
/// complex numbers, in the element's own precision, NaN equal to NaN; exact equality for
/// integers). `poisoned`: `got` was poisoned before
/// the run, so an element still holding the float poison fails as never written.
VerifyResult compare(const HostArgument& expected, const HostArgument& got,
                     const Tolerance& tolerance, bool poisoned = false);

/// The message of a failing element, shared by the host and the device comparison:
/// `expected_element` and `got_element` point at one element of `spec`'s type.
std::string mismatch_message(const ArgumentSpec& spec, std::uint64_t index, const void* expected_element,
                             const void* got_element, bool poison_seen, std::uint64_t failures,
                             std::int64_t count);

}  // namespace cutune
