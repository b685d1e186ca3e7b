#pragma once
// Building blocks for tests of the CPU references: argument specs and host arguments made
// by hand, so a reference can be checked on small cases without loading a template.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/host_data.hpp"

namespace cutune::testing {

using cutune::ArgumentSpec;
using cutune::ElementType;
using cutune::HostArgument;

inline ArgumentSpec vector_spec(std::string name, ElementType type, bool output = false) {
  ArgumentSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.is_vector = true;
  spec.output = output;
  return spec;
}

inline ArgumentSpec scalar_spec(std::string name, ElementType type) {
  ArgumentSpec spec = vector_spec(std::move(name), type);
  spec.is_vector = false;
  return spec;
}

template <class T>
inline HostArgument host_argument(const ArgumentSpec& spec, const std::vector<T>& values) {
  HostArgument arg;
  arg.spec = &spec;
  arg.count = static_cast<std::int64_t>(values.size());
  arg.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(arg.bytes.data(), values.data(), arg.bytes.size());
  return arg;
}

template <class T>
inline std::vector<T> values_of(const HostArgument& arg) {
  std::vector<T> v(static_cast<std::size_t>(arg.count));
  if (!v.empty()) std::memcpy(v.data(), arg.bytes.data(), v.size() * sizeof(T));
  return v;
}

/// A problem instance with one variable n (ProblemSize [n]).
inline cutune::ProblemInstance instance_with_n(std::int64_t n) {
  cutune::ProblemInstance instance;
  instance.variables["n"] = n;
  instance.problem_size = {n};
  return instance;
}

}  // namespace cutune::testing
