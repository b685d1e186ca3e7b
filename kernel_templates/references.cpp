#include "cutune/templates/references.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "references_internal.hpp"

namespace cutune::templates {

namespace {

struct Entry {
  std::string_view name;  ///< as a template's JSON gives it in cutune.Reference
  ReferenceFn fn;
};

// An explicit table: adding a template means adding a line here (no registration by
// static initialisation, whose order across translation units is unspecified).
constexpr std::array<Entry, 8> kReferences{{
    {"vector_add", &detail::reference_vector_add},
    {"reduction", &detail::reference_reduction},
    {"scan", &detail::reference_scan},
    {"scan_int32", &detail::reference_scan_int32},
    {"matmul", &detail::reference_matmul},
    {"transpose", &detail::reference_transpose},
    {"strided_access", &detail::reference_strided_access},
    {"reduction_int32", &detail::reference_reduction_int32},
}};

}  // namespace

ReferenceFn find_reference(std::string_view name) {
  for (const Entry& e : kReferences)
    if (e.name == name) return e.fn;
  return nullptr;
}

std::vector<std::string> reference_names() {
  std::vector<std::string> names;
  names.reserve(kReferences.size());
  for (const Entry& e : kReferences) names.emplace_back(e.name);
  return names;
}

namespace detail {

HostArgument& find_argument(std::vector<HostArgument>& args, const char* reference,
                            const char* name, std::int64_t min_count, std::size_t element_bytes) {
  for (HostArgument& arg : args) {
    if (arg.spec == nullptr || arg.spec->name != name) continue;
    const auto needed = static_cast<std::size_t>(arg.count) * element_bytes;
    if (arg.count < min_count || arg.bytes.size() < needed)
      throw std::invalid_argument(std::string("reference ") + reference + ": argument '" + name +
                                  "' holds " + std::to_string(arg.count) + " elements (" +
                                  std::to_string(arg.bytes.size()) + " bytes), needs " +
                                  std::to_string(min_count) + " of " +
                                  std::to_string(element_bytes) + " bytes");
    return arg;
  }
  throw std::invalid_argument(std::string("reference ") + reference + ": no argument named '" +
                              name + "'");
}

}  // namespace detail

}  // namespace cutune::templates
