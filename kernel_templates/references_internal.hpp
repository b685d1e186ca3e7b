#pragma once
// The CPU references of the built-in templates, one per template folder
// (<name>/reference.cpp); references.cpp registers them by name.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cutune/model/host_data.hpp"

namespace cutune::templates::detail {

/// c = a + b (float32), exactly as the GPU rounds it.
void reference_vector_add(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// out[0] = sum of in[0..n) accumulated in double, rounded once to float.
void reference_reduction(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// exclusive or inclusive prefix sum (float32 or int32, by the argument types; `inclusive` problem variable)
void reference_scan(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// int32 prefix sum
void reference_scan_int32(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// C = A * B, float32, row-major, accumulated in double
void reference_matmul(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// out[x][y] = in[y][x], float32
void reference_transpose(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// the STRIDE/OFFSET/GROUP_SIZE access experiment
void reference_strided_access(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// int32 sum (wrapping two's complement, as the GPU adds)
void reference_reduction_int32(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// The argument named `name`; throws std::invalid_argument naming the reference when the
/// argument is missing, holds fewer than `min_count` elements, or fewer bytes than its
/// count of `element_bytes`-byte elements.
HostArgument& find_argument(std::vector<HostArgument>& args, const char* reference,
                            const char* name, std::int64_t min_count, std::size_t element_bytes);

}  // namespace cutune::templates::detail
