// ConfigurationSpace: the tuning parameters (Name, Type, Values, Default), the Conditions
// that restrict them, and the default configuration Kernel Tuner does not have.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cutune/model/errors.hpp"
#include "problem_scope.hpp"
#include "t1_sections.hpp"

namespace cutune::detail {

namespace {

// A parameter's Values converted to its declared Type.
Value convert_to_type(const Loader& L, const Value& v, const std::string& type,
                      const std::string& field) {
  if (type == "int" || type == "uint") {
    if (v.is_int() || v.is_bool()) return Value(v.to_int());
    if (v.is_float() && is_int64_float(v.as_float()))
      return Value(static_cast<std::int64_t>(v.as_float()));
  } else if (type == "float") {
    if (v.is_number()) return v.is_float() ? v : Value(v.to_double());
  } else if (type == "bool") {
    if (v.is_bool()) return v;
    if (v.is_int() && (v.as_int() == 0 || v.as_int() == 1)) return Value(v.as_int() == 1);
  } else if (type == "string") {
    if (v.is_string()) return v;
  } else {
    L.fail(field, fmt::format("unknown Type '{}' (int, uint, float, bool, string)", type));
  }
  L.fail(field, fmt::format("value {} is not of Type {}", short_repr(v), type));
}

// Values: a list, or an expression that gives one; each converted to the Type.
std::vector<Value> read_values(const Loader& L, const json& values, const std::string& type,
                               const std::string& field) {
  Value list;
  if (values.is_string()) {
    try {
      list = Expression::parse(values.get<std::string>()).evaluate(MapScope{});
    } catch (const ExpressionError& e) {
      L.fail(field, e.what());
    }
  } else if (values.is_array()) {
    ValueList vl;
    for (const auto& v : values) vl.push_back(L.value_of(v, field));
    list = Value(vl);
  } else {
    L.fail(field, "must be a list or an expression string");
  }
  if (!list.is_list()) L.fail(field, fmt::format("is {}, not a list", list.str()));
  std::vector<Value> out;
  for (const auto& v : list.as_list()) out.push_back(convert_to_type(L, v, type, field));
  if (out.empty()) L.fail(field, "is empty");
  return out;
}

// Why a Default cannot be the parameter's default ("" when it can); sets it when it can.
// BAT's files carry some that are not among the Values (hotspot's MAX_TFACTOR), or are
// lists ([0]).
std::string read_default(const Loader& L, const json& d, const std::string& type, const std::string& field,
                         Parameter& par) {
  if (d.is_array() || d.is_object() || d.is_null()) return "is not a single value";
  try {
    Value v = convert_to_type(L, L.value_of(d, field + ".Default"), type, field + ".Default");
    if (std::find(par.values.begin(), par.values.end(), v) == par.values.end()) return "is not one of its Values";
    par.default_value = v;
    return "";
  } catch (const InputError&) {
    return "is not of its Type";
  }
}

Parameter read_parameter(const Loader& L, const json& tp, std::size_t i, std::vector<std::string>& bad_defaults) {
  std::string field = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
  Parameter par;
  par.name = L.string_of(L.require(tp, "Name", field), field + ".Name");
  field = fmt::format("ConfigurationSpace.TuningParameters[{}] ({})", i, par.name);
  const std::string type = tp.contains("Type") ? L.string_of(tp["Type"], field + ".Type") : "int";
  par.values = read_values(L, L.require(tp, "Values", field), type, field + ".Values");
  par.default_value = par.values.front();
  if (tp.contains("Default")) {
    const json& d = tp["Default"];
    const std::string why = read_default(L, d, type, field, par);
    if (!why.empty()) bad_defaults.push_back(fmt::format("{} Default {} {}", par.name, short_json(d), why));
  }
  return par;
}

std::vector<std::string> read_conditions(const Loader& L, const json& cs) {
  std::vector<std::string> restrictions;
  if (!cs.contains("Conditions")) return restrictions;
  const auto& conds = cs["Conditions"];
  if (!conds.is_array()) L.fail("ConfigurationSpace.Conditions", "must be a list");
  for (std::size_t i = 0; i < conds.size(); ++i) {
    std::string field = fmt::format("ConfigurationSpace.Conditions[{}]", i);
    if (conds[i].is_string())
      restrictions.push_back(conds[i].get<std::string>());
    else
      restrictions.push_back(L.string_of(L.require(conds[i], "Expression", field), field + ".Expression"));
  }
  return restrictions;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& x : parts) out += (out.empty() ? "" : separator) + x;
  return out;
}

}  // namespace

TuningParameters read_tuning_parameters(const Loader& L, const json& cs) {
  const json& tps = L.require(cs, "TuningParameters", "ConfigurationSpace");
  if (!tps.is_array()) L.fail("ConfigurationSpace.TuningParameters", "must be a list");
  TuningParameters out;
  for (std::size_t i = 0; i < tps.size(); ++i) {
    out.parameters.push_back(read_parameter(L, tps[i], i, out.bad_defaults));
    out.named_default = out.named_default || (tps[i].is_object() && tps[i].contains("Default"));
  }
  return out;
}

std::shared_ptr<Space> read_space(const Loader& L, const json& cs, std::vector<Parameter> parameters) {
  const std::vector<std::string> restrictions = read_conditions(L, cs);
  try {
    return std::make_shared<Space>(std::move(parameters), restrictions);
  } catch (const InputError& e) {
    L.fail("ConfigurationSpace", e.what());
  }
}

std::string settle_default(const Loader& L, Space& space, const std::vector<std::string>& bad_defaults, bool named) {
  space.set_default_named(false);
  Config def = space.default_config();
  std::string why;
  if (!bad_defaults.empty()) {
    why = join(bad_defaults, "; ");
  } else if (std::string r = space.violated_restriction(def); !r.empty()) {
    why = fmt::format("the Defaults {} break \"{}\"", space.key(def), r);
  }
  if (why.empty()) {
    space.set_default_named(named);
    return "";
  }
  Config first;
  if (!space.next_valid(first))
    return fmt::format("{}: ConfigurationSpace.TuningParameters: {}; no configuration is valid", L.file.string(), why);
  space.set_default(first);
  return fmt::format("{}: ConfigurationSpace.TuningParameters: {}; the default is the first valid configuration, {}",
                     L.file.string(), why, space.key(first));
}

}  // namespace cutune::detail
