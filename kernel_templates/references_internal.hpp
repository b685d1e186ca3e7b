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

/// The argument named `name`; throws std::invalid_argument naming the reference when the
/// argument is missing, holds fewer than `min_count` elements, or fewer bytes than its
/// count of `element_bytes`-byte elements.
HostArgument& find_argument(std::vector<HostArgument>& args, const char* reference,
                            const char* name, std::int64_t min_count, std::size_t element_bytes);

}  // namespace cutune::templates::detail
