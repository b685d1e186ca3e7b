// CPU reference of kernel_templates/transpose: out[c * rows + r] = in[r * cols + c] for the
// rows x cols float32 matrix `in` (row-major), `out` being cols x rows (row-major).
// A transpose moves bits without arithmetic, so the template's tolerance is exact (0, 0).
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

namespace {

std::int64_t variable(const ProblemInstance& instance, const char* name) {
  const auto it = instance.variables.find(name);
  if (it == instance.variables.end())
    throw std::invalid_argument(std::string("reference transpose: problem variable '") + name +
                                "' is missing");
  if (it->second < 0)
    throw std::invalid_argument(std::string("reference transpose: problem variable '") + name +
                                "' is negative");
  return it->second;
}

}  // namespace

void reference_transpose(const ProblemInstance& instance, std::vector<HostArgument>& args) {
  const std::int64_t rows = variable(instance, "rows");
  const std::int64_t cols = variable(instance, "cols");
  HostArgument& out_arg = find_argument(args, "transpose", "out", rows * cols, sizeof(float));
  const HostArgument& in_arg = find_argument(args, "transpose", "in", rows * cols, sizeof(float));
  // Copy the bit patterns (a float assignment could quieten a signalling NaN).
  auto* out = out_arg.data<std::uint32_t>();
  const auto* in = in_arg.data<std::uint32_t>();
  // Blocked so that both sides stay in cache for the 1 GiB default (16384 x 16384).
  constexpr std::int64_t block = 64;
  for (std::int64_t r0 = 0; r0 < rows; r0 += block)
    for (std::int64_t c0 = 0; c0 < cols; c0 += block)
      for (std::int64_t r = r0; r < rows && r < r0 + block; ++r)
        for (std::int64_t c = c0; c < cols && c < c0 + block; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace cutune::templates::detail
