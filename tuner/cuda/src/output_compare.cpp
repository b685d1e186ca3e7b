#include "cutune/cuda/output_compare.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cutune/model/element_check.hpp"
#include "output_compare_image.hpp"  // generated: kOutputCompareImage, the fatbinary

namespace cutune::cuda {
namespace {

/// Must match output_compare.cu's Partial.
struct Partial {
  double worst_error;
  unsigned long long worst_index;
  unsigned long long failures;
  double max_error;
};
static_assert(sizeof(Partial) == 32);

/// Blocks of the first pass (256 threads each, grid-stride): enough to fill any GPU; the
/// finishing kernel (one block) then reduces at most this many partials.
constexpr unsigned kMaxBlocks = 2048;
constexpr unsigned kThreads = 256;

std::vector<char> image() {
  const auto* p = reinterpret_cast<const char*>(kOutputCompareImage);
  return std::vector<char>(p, p + sizeof kOutputCompareImage);
}

const char* kernel_of(ElementType t) {
  switch (t) {
    case ElementType::Int8: return "cutune_compare_int8";
    case ElementType::UInt8: return "cutune_compare_uint8";
    case ElementType::Int16: return "cutune_compare_int16";
    case ElementType::UInt16: return "cutune_compare_uint16";
    case ElementType::Int32: return "cutune_compare_int32";
    case ElementType::UInt32: return "cutune_compare_uint32";
    case ElementType::Int64: return "cutune_compare_int64";
    case ElementType::UInt64: return "cutune_compare_uint64";
    case ElementType::Float32: return "cutune_compare_float32";
    case ElementType::Float64: return "cutune_compare_float64";
    case ElementType::Float16: return "cutune_compare_float16";
    case ElementType::BFloat16: return "cutune_compare_bfloat16";
    case ElementType::Complex64: return "cutune_compare_complex64";
    case ElementType::Complex128: return "cutune_compare_complex128";
  }
  return "cutune_compare_float32";
}

}  // namespace

OutputComparator::OutputComparator()
    : module_(image()), partials_(kMaxBlocks * sizeof(Partial)), result_(sizeof(Partial)) {
  finish_ = module_.function("cutune_compare_finish");
}

VerifyResult OutputComparator::compare(const ArgumentSpec& spec, CUdeviceptr expected, CUdeviceptr got,
                                       std::int64_t count, const Tolerance& tolerance, bool poisoned) {
  VerifyResult r;
  if (count <= 0) return r;
  CUfunction f = module_.function(kernel_of(spec.type));
  unsigned long long n = static_cast<unsigned long long>(count);
  double atol = tolerance.absolute, rtol = tolerance.relative;
  unsigned long long poison = poisoned ? 1 : 0;  // the kernels know their type's pattern
  CUdeviceptr partials = partials_.get(), result = result_.get();
  unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>(kMaxBlocks, (n + kThreads * 4 - 1) / (kThreads * 4)));
  blocks = std::max(blocks, 1u);
  void* params[] = {&expected, &got, &n, &atol, &rtol, &poison, &partials};
  CUTUNE_CU(CU_FN(cuLaunchKernel)(f, blocks, 1, 1, kThreads, 1, 1, 0, nullptr, params, nullptr));
  void* finish_params[] = {&partials, &blocks, &result};
  CUTUNE_CU(CU_FN(cuLaunchKernel)(finish_, 1, 1, 1, kThreads, 1, 1, 0, nullptr, finish_params, nullptr));
  Partial p{};
  CUTUNE_CU(CU_FN(cuMemcpyDtoH)(&p, result, sizeof p));  // synchronous: also surfaces a launch failure
  r.max_error = p.max_error;
  r.failures = p.failures;
  if (p.failures == 0) return r;
  r.ok = false;
  r.worst_index = p.worst_index;
  // Only the worst element comes back, for the message.
  const std::size_t size = element_size(spec.type);
  std::array<unsigned char, 16> e{}, g{};  // the largest element: complex128
  CUTUNE_CU(CU_FN(cuMemcpyDtoH)(e.data(), expected + p.worst_index * size, size));
  CUTUNE_CU(CU_FN(cuMemcpyDtoH)(g.data(), got + p.worst_index * size, size));
  const bool poison_seen = poisoned && holds_poison(spec.type, g.data());
  r.message = mismatch_message(spec, p.worst_index, e.data(), g.data(), poison_seen, p.failures, count);
  return r;
}

VerificationBuffer upload_for_verification(const HostArgument& argument) {
  VerificationBuffer out;
  const HostArgument* data = &argument;
  HostArgument poisoned;
  if (argument.spec->access == AccessType::WriteOnly) {
    poisoned = argument;
    poison(poisoned);
    data = &poisoned;
    out.poisoned = true;
  }
  out.buffer = DeviceBuffer(data->bytes.size());
  out.buffer.upload(data->bytes.data(), data->bytes.size());
  return out;
}

VerifyResult verify_run(std::optional<OutputComparator>& comparator, const std::function<void()>& run,
                        const std::vector<OutputCheck>& checks) {
  run();
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
  VerifyResult out;
  if (!checks.empty() && !comparator) comparator.emplace();
  for (const OutputCheck& c : checks) {
    VerifyResult v = comparator->compare(*c.spec, c.expected, c.got, c.count, c.tolerance, c.poisoned);
    out.max_error = std::max(out.max_error, v.max_error);
    if (!v.ok) {
      v.message = std::string(c.prefix) + v.message;
      v.max_error = out.max_error;
      return v;
    }
  }
  return out;
}

}  // namespace cutune::cuda
