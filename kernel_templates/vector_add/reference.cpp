// CPU reference of kernel_templates/vector_add: c[i] = a[i] + b[i] in float32.
// A single IEEE float addition rounds identically on the CPU (SSE) and the GPU, so the
// template's tolerance is exact (0, 0).
#include <cstdint>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

void reference_vector_add(const ProblemInstance& /*instance*/, std::vector<HostArgument>& args) {
  // The element count comes from the output buffer; the inputs must hold as many.
  HostArgument& c = find_argument(args, "vector_add", "c", 0, sizeof(float));
  const std::int64_t n = c.count;
  const HostArgument& a = find_argument(args, "vector_add", "a", n, sizeof(float));
  const HostArgument& b = find_argument(args, "vector_add", "b", n, sizeof(float));
  float* out = c.data<float>();
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  for (std::int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

}  // namespace cutune::templates::detail
