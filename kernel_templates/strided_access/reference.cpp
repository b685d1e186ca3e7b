// CPU reference of kernel_templates/strided_access: out[i] = in[i] * in[i] in float32.
// Every configuration of the STRIDE / OFFSET / GROUP_SIZE experiment processes each
// element exactly once (the seed's index map is a bijection of each block's range), and
// both of its code paths compute the correctly rounded product (mul.rn.f32 and
// fma.rn.f32 with a -0 addend round the same exact product once). One IEEE float
// multiplication rounds identically on the CPU (SSE) and the GPU (no flush-to-zero is
// compiled in), so the template's tolerance is exact (0, 0).
#include <cstdint>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

void reference_strided_access(const ProblemInstance& /*instance*/, std::vector<HostArgument>& args) {
  // The element count comes from the output buffer; the input must hold as many.
  HostArgument& out_arg = find_argument(args, "strided_access", "out", 0, sizeof(float));
  const std::int64_t n = out_arg.count;
  const HostArgument& in_arg = find_argument(args, "strided_access", "in", n, sizeof(float));
  float* out = out_arg.data<float>();
  const float* in = in_arg.data<float>();
  for (std::int64_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
}

}  // namespace cutune::templates::detail
