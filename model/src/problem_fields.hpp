#pragma once
// Reading the fields of a T1 file: each reader checks the JSON type and fails with an
// InputError that names the file and the field ("problem.json: KernelSpecification.Arguments[2].Type:
// must be a string"). The problem's run-time code fails the same way for its expressions.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cutune/model/expression.hpp"
#include "cutune/model/value.hpp"

namespace cutune::detail {

using json = nlohmann::json;

struct Loader {
  std::filesystem::path file;

  /// InputError "<file>: <field>: <what>".
  [[noreturn]] void fail(const std::string& field, const std::string& what) const;

  /// obj[key]; fails naming `where` when obj is not an object or has no such key.
  const json& require(const json& obj, const char* key, const std::string& where) const;
  std::string string_of(const json& j, const std::string& field) const;
  /// A string parsed as an expression, or a number or boolean as its JSON text.
  Expression expression_of(const json& j, const std::string& field) const;
  std::int64_t int_of(const json& j, const std::string& field) const;
  double number_of(const json& j, const std::string& field) const;
  /// j itself, when it is a list.
  const json& list_of(const json& j, const std::string& field) const;
  /// A number, boolean or string as a Value.
  Value value_of(const json& j, const std::string& field) const;
};

/// A JSON value for a message, cut short.
std::string short_json(const json& j);

}  // namespace cutune::detail
