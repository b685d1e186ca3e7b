#include "problem_fields.hpp"

#include <fmt/format.h>

#include "cutune/model/errors.hpp"

namespace cutune::detail {

void Loader::fail(const std::string& field, const std::string& what) const {
  throw InputError(fmt::format("{}: {}: {}", file.string(), field, what));
}

const json& Loader::require(const json& obj, const char* key, const std::string& where) const {
  if (!obj.is_object()) fail(where, "is not a JSON object");
  auto it = obj.find(key);
  if (it == obj.end()) fail(where, fmt::format("missing field '{}'", key));
  return *it;
}

std::string Loader::string_of(const json& j, const std::string& field) const {
  if (!j.is_string()) fail(field, "must be a string");
  return j.get<std::string>();
}

Expression Loader::expression_of(const json& j, const std::string& field) const {
  std::string text;
  if (j.is_string())
    text = j.get<std::string>();
  else if (j.is_number() || j.is_boolean())
    text = j.dump();
  else
    fail(field, "must be a number or an expression string");
  try {
    return Expression::parse(text);
  } catch (const ExpressionError& e) {
    fail(field, e.what());
  }
}

std::int64_t Loader::int_of(const json& j, const std::string& field) const {
  if (!j.is_number_integer()) fail(field, "must be an integer");
  return j.get<std::int64_t>();
}

double Loader::number_of(const json& j, const std::string& field) const {
  if (!j.is_number()) fail(field, "must be a number");
  return j.get<double>();
}

const json& Loader::list_of(const json& j, const std::string& field) const {
  if (!j.is_array()) fail(field, "must be a list");
  return j;
}

Value Loader::value_of(const json& j, const std::string& field) const {
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number_float()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  fail(field, "must be a number, boolean or string");
}

std::string short_json(const json& j) {
  std::string t = j.dump();
  return t.size() > 60 ? t.substr(0, 57) + "..." : t;
}

}  // namespace cutune::detail
