// Placeholder: the template author replaces these bodies.
#include <stdexcept>

#include "../references_internal.hpp"

namespace cutune::templates::detail {

void reference_scan(const ProblemInstance&, std::vector<HostArgument>&) {
  throw std::logic_error("reference_scan: not written yet");
}

void reference_scan_int32(const ProblemInstance&, std::vector<HostArgument>&) {
  throw std::logic_error("reference_scan_int32: not written yet");
}

}  // namespace cutune::templates::detail
