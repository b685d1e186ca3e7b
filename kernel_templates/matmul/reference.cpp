// Placeholder: the template author replaces these bodies.
#include <stdexcept>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

void reference_matmul(const ProblemInstance&, std::vector<HostArgument>&) {
  throw std::logic_error("reference_matmul: not written yet");
}

}  // namespace cutune::templates::detail
