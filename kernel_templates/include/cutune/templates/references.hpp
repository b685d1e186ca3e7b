#pragma once
// CPU references of the built-in templates, looked up by the name a template's JSON gives
// in cutune.Reference. Each computes, from the input arguments, the expected contents of
// every argument marked Output (overwriting their bytes).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/host_data.hpp"

namespace cutune::templates {

using ReferenceFn = void (*)(const ProblemInstance& instance, std::vector<HostArgument>& args);

/// nullptr when no reference has that name.
ReferenceFn find_reference(std::string_view name);

/// Names of the registered references.
std::vector<std::string> reference_names();

}  // namespace cutune::templates
