#pragma once
// The __global__ functions a CUDA source declares, found by reading its text: for the
// error that answers a KernelName the source does not have with the names it does have.
// No preprocessing, so every #if branch counts; a kernel made by a macro is not seen.
#include <string>
#include <string_view>
#include <vector>

namespace cutune::jit {

struct GlobalFunction {
  std::string name;                 ///< qualified by its namespaces: "ns::k"
  std::string template_parameters;  ///< "typename T, int N"; empty: not a template
  /// "ns::k", or "template <typename T, int N> ns::k".
  std::string display() const;
};

/// In order of first appearance, each (name, template parameters) once.
std::vector<GlobalFunction> global_functions(std::string_view source);

/// The function a name expression refers to, without namespaces, template arguments or a
/// leading '&': "ns::matmul<float, 16>" -> "matmul".
std::string unqualified_name(std::string_view name_expression);

}  // namespace cutune::jit
