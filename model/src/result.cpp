#include "cutune/model/result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cutune/model/errors.hpp"

namespace cutune {

namespace {

/// A value as the JSON text a row or file holds it in: what an error message quotes, so that a
/// string "128" reads apart from the number 128.
nlohmann::ordered_json json_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None: return nullptr;
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::Int: return v.as_int();
    case Value::Kind::Float: return v.as_float();
    case Value::Kind::String: return v.as_string();
    case Value::Kind::List: {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const Value& e : v.as_list()) a.push_back(json_of(e));
      return a;
    }
  }
  return nullptr;
}

std::string json_text(const Value& v) {
  return json_of(v).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Value value_of(const nlohmann::ordered_json& j) {
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (j.is_array()) {
    ValueList l;
    for (const auto& e : j) l.push_back(value_of(e));
    return Value(std::move(l));
  }
  if (j.is_null()) return Value();
  return Value(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

/// The same value of the same type (Value's == is Python's: 1 == 1.0 == True).
bool same_value(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_float()) return a.as_float() == b.as_float() || (std::isnan(a.as_float()) && std::isnan(b.as_float()));
  if (!a.is_list()) return a == b;
  const ValueList &x = a.as_list(), &y = b.as_list();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!same_value(x[i], y[i])) return false;
  return true;
}

}  // namespace

ParameterValues stored_values(const Configuration& c) {
  ParameterValues out = c.assignments();
  for (auto& [name, v] : out)
    if (!v.is_bool() && !v.is_int() && !v.is_float() && !v.is_string()) v = Value(v.str());
  return out;
}

ParameterValues parameter_values(const nlohmann::ordered_json& object) {
  ParameterValues out;
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) out.emplace_back(it.key(), value_of(it.value()));
  return out;
}

Configuration checked_configuration(const Space& space, const ParameterValues& values) {
  for (const auto& [name, value] : values)
    if (!space.has_parameter(name)) throw InputError(fmt::format("parameter '{}' is not declared", name));
  Config config;
  for (const Parameter& p : space.parameters()) {
    const auto it = std::find_if(values.begin(), values.end(), [&](const auto& nv) { return nv.first == p.name; });
    if (it == values.end()) throw InputError(fmt::format("parameter {} is missing", p.name));
    const Value& v = it->second;
    std::optional<std::uint32_t> index;
    // Typed: a bool only matches a declared bool, a string only a string, a number only a
    // number (so "128" or true never stand for 128).
    if (v.is_number() || v.is_string())
      for (std::size_t i = 0; i < p.values.size() && !index; ++i) {
        const Value& d = p.values[i];
        if (d.is_bool() != v.is_bool() || d.is_string() != v.is_string() || d.is_list()) continue;
        if (d == v) index = static_cast<std::uint32_t>(i);
      }
    if (!index) {
      std::string declared;
      for (const auto& d : p.values) declared += (declared.empty() ? "" : ", ") + d.str();
      throw InputError(
          fmt::format("parameter {}: value {} is not declared (declared: {})", p.name, json_text(v), declared));
    }
    config.index.push_back(*index);
  }
  if (std::string r = space.violated_restriction(config); !r.empty())
    throw InputError(fmt::format("configuration {} violates the restriction \"{}\"", space.key(config), r));
  return {space, std::move(config)};
}

ResultConfig::ResultConfig(const Configuration& c) : key_(c.key()), values_(stored_values(c)), configuration_(c) {}

Configuration ResultConfig::configuration_in(const Space& space) const {
  if (configuration_ && &configuration_->space() == &space) return *configuration_;
  return checked_configuration(space, values_);
}

nlohmann::ordered_json ResultConfig::to_json() const {
  if (configuration_) return configuration_->to_json();
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : values_) j[name] = json_of(v);
  return j;
}

bool operator==(const ResultConfig& a, const ResultConfig& b) {
  if (a.key_ != b.key_ || a.values_.size() != b.values_.size()) return false;
  for (std::size_t i = 0; i < a.values_.size(); ++i)
    if (a.values_[i].first != b.values_[i].first || !same_value(a.values_[i].second, b.values_[i].second))
      return false;
  return true;
}

ResultStats ResultStats::of(const MeasuredStats& stats) {
  ResultStats r;
  r.level = stats.level;
  r.summary = stats.summary;
  const SampleSet& set = stats.set;
  r.stop_reason = set.reason;
  r.measure_ms = set.wall_ms;
  r.l2 = stats.l2;
  r.timer = set.timer;
  r.timer_fallbacks = set.timer_fallbacks;
  if (!set.clocks_mhz.empty()) {
    std::vector<double> c = set.clocks_mhz;
    std::sort(c.begin(), c.end());
    const std::size_t n = c.size();
    r.sm_clock_mhz = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    r.sm_clock_min_mhz = c.front();
  }
  r.discarded_ms = set.discarded_ms;
  r.back_offs = set.back_offs;
  r.block_timeouts = set.block_timeouts;
  r.nvml_sm_clock_mhz = stats.nvml_sm_clock_mhz;
  r.temperature_c = stats.temperature_c;
  r.power_w = stats.power_w;
  r.energy_mj_per_launch = stats.energy_mj_per_launch;
  return r;
}

const char* provenance_name(Provenance p) {
  switch (p) {
    case Provenance::Measured: return "measured";
    case Provenance::Imported: return "imported";
    case Provenance::Simulated: return "simulated";
  }
  return "unknown";
}

const ResultStats* Result::stats() const {
  const MeasuredOrigin* m = measured();
  return m && m->stats ? &*m->stats : nullptr;
}

std::optional<double> Result::energy_mj_per_launch() const {
  const ResultStats* s = stats();
  return s ? s->energy_mj_per_launch : std::nullopt;
}

std::optional<std::pair<double, double>> Result::interval_ms() const {
  if (const ResultStats* s = stats()) return std::pair{s->summary.ci_low, s->summary.ci_high};
  if (const ImportedOrigin* i = imported(); i && i->ci_low_ms && i->ci_high_ms)
    return std::pair{*i->ci_low_ms, *i->ci_high_ms};
  return std::nullopt;
}

std::optional<double> Result::mean_ms() const {
  if (const ResultStats* s = stats()) return s->summary.mean;
  if (const ImportedOrigin* i = imported()) return i->mean_ms;
  return std::nullopt;
}

std::optional<double> Result::objective_value(const Objective& objective) const {
  if (status != Status::Ok) return std::nullopt;
  switch (objective.kind) {
    case ObjectiveKind::Time: return median_ms;
    case ObjectiveKind::Energy: return energy_mj_per_launch();
    case ObjectiveKind::Metric:
      for (const auto& [name, v] : metrics)
        if (name == objective.metric) return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace cutune
