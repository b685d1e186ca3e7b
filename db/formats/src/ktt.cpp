#include "cutune/formats/ktt.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <set>

#include "cutune/formats/python_json.hpp"
#include "cutune/model/errors.hpp"
#include "text_file.hpp"

namespace cutune::db::ktt {

using nlohmann::ordered_json;

namespace {

const char* type_name(const ordered_json& j) {
  switch (j.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return "a bool";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "a list";
    case ordered_json::value_t::object: return "an object";
    default: return "a number";
  }
}

const ordered_json& field(const ordered_json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(fmt::format("{}.{}: missing", where, key));
  return *it;
}

std::string string_field(const ordered_json& obj, const char* key, const std::string& where) {
  const ordered_json& v = field(obj, key, where);
  if (!v.is_string()) throw InputError(fmt::format("{}.{}: expected a string, got {}", where, key, type_name(v)));
  return v.get<std::string>();
}

// KTT stores durations as integer nanoseconds and writes them converted to TimeUnit; a
// duration it never set is its InvalidDuration (the largest uint64), which reads as absent.
std::optional<double> duration_ms(const ordered_json& obj, const char* key, double to_ms, const std::string& where,
                                  bool required) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) throw InputError(fmt::format("{}.{}: missing", where, key));
    return std::nullopt;
  }
  if (!it->is_number())
    throw InputError(fmt::format("{}.{}: expected a number, got {}", where, key, type_name(*it)));
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0)
    throw InputError(fmt::format("{}.{}: expected a duration of 0 or more, got {}", where, key, it->dump()));
  const double ms = v * to_ms;
  if (ms >= 1e12) return std::nullopt;  // InvalidDuration (about 5.8e5 years in ms): never measured
  return ms;
}

std::optional<Status> status_of(const std::string& s) {
  if (s == "Ok") return Status::Ok;
  if (s == "CompilationFailed") return Status::Compile;
  if (s == "ValidationFailed") return Status::Correctness;
  // A launch the device refuses (too many threads, registers, shared memory) is what Kernel
  // Tuner records as a runtime failure too.
  if (s == "ComputationFailed" || s == "DeviceLimitsExceeded") return Status::Runtime;
  return std::nullopt;
}

ordered_json parameter_value(const ordered_json& pair, const std::string& where) {
  const ordered_json& value = field(pair, "Value", where);
  std::string type;
  if (const auto t = pair.find("ValueType"); t != pair.end()) {
    if (!t->is_string()) throw InputError(fmt::format("{}.ValueType: expected a string, got {}", where, type_name(*t)));
    type = t->get<std::string>();
  } else if (const auto d = pair.find("IsDouble"); d != pair.end()) {  // KTT before ValueType
    if (!d->is_boolean()) throw InputError(fmt::format("{}.IsDouble: expected a bool, got {}", where, type_name(*d)));
    type = d->get<bool>() ? "Double" : "UnsignedInt";
  } else {
    throw InputError(fmt::format("{}.ValueType: missing", where));
  }
  auto wrong = [&](const char* expected) {
    return InputError(fmt::format("{}.Value: expected {} (ValueType {}), got {}", where, expected, type, value.dump()));
  };
  if (type == "Int" || type == "UnsignedInt") {
    if (!value.is_number_integer()) throw wrong("an integer");
    return value;
  }
  if (type == "Double" || type == "Float") {
    if (!value.is_number()) throw wrong("a number");
    return ordered_json(value.get<double>());
  }
  if (type == "Bool") {
    if (!value.is_boolean()) throw wrong("a bool");
    return value;
  }
  if (type == "String") {
    if (!value.is_string()) throw wrong("a string");
    return value;
  }
  throw InputError(fmt::format("{}.ValueType: unknown value \"{}\"", where, type));
}

}  // namespace

bool is_ktt_results(const ordered_json& doc) {
  return doc.is_object() && doc.contains("Metadata") && doc.contains("Results");
}

KttResults parse_ktt(std::string_view text, std::string_view name_for_errors) {
  const std::string name(name_for_errors);
  const ordered_json doc = parse_python_json(text, name);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object (KTT results), got {}", name, type_name(doc)));
  if (!doc.contains("Metadata")) throw InputError(fmt::format("{}: Metadata: missing", name));
  const ordered_json& md = doc["Metadata"];
  if (!md.is_object()) throw InputError(fmt::format("{}: Metadata: expected an object, got {}", name, type_name(md)));
  KttResults out;
  const std::string mwhere = name + ": Metadata";
  const std::string unit = string_field(md, "TimeUnit", mwhere);
  const double to_ms = unit == "Nanoseconds"    ? 1e-6
                       : unit == "Microseconds" ? 1e-3
                       : unit == "Milliseconds" ? 1.0
                       : unit == "Seconds"      ? 1e3
                                                : -1.0;
  if (to_ms < 0) throw InputError(fmt::format("{}.TimeUnit: unknown value \"{}\"", mwhere, unit));
  if (md.contains("Device")) out.device = string_field(md, "Device", mwhere);
  if (md.contains("KttVersion")) out.ktt_version = string_field(md, "KttVersion", mwhere);
  if (!doc.contains("Results")) throw InputError(fmt::format("{}: Results: missing", name));
  const ordered_json& results = doc["Results"];
  if (!results.is_array()) throw InputError(fmt::format("{}: Results: expected a list, got {}", name, type_name(results)));

  std::set<std::string> seen;
  bool any_overhead = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ordered_json& r = results[i];
    const std::string where = fmt::format("{}: Results[{}]", name, i);
    if (!r.is_object()) throw InputError(fmt::format("{}: expected an object, got {}", where, type_name(r)));
    const std::string kernel = string_field(r, "KernelName", where);
    const std::string status_text = string_field(r, "Status", where);
    const auto status = status_of(status_text);
    if (!status) throw InputError(fmt::format("{}.Status: unknown value \"{}\"", where, status_text));
    const ordered_json& config = field(r, "Configuration", where);
    if (!config.is_array())
      throw InputError(fmt::format("{}.Configuration: expected a list, got {}", where, type_name(config)));
    kt::KtEntry e;
    std::vector<std::string> names;
    std::vector<ordered_json> values;
    for (std::size_t k = 0; k < config.size(); ++k) {
      const std::string at = fmt::format("{}.Configuration[{}]", where, k);
      if (!config[k].is_object()) throw InputError(fmt::format("{}: expected an object, got {}", at, type_name(config[k])));
      names.push_back(string_field(config[k], "Name", at));
      values.push_back(parameter_value(config[k], at));
      e.params[names.back()] = values.back();
    }
    if (i == 0) {
      out.kernel_name = kernel;
      out.param_names = names;
    } else if (names != out.param_names) {
      throw InputError(fmt::format("{}.Configuration: its parameters differ from Results[0]'s (one kernel's "
                                   "results per file)",
                                   where));
    }
    e.key = kt::config_key(values);
    e.status = *status;
    const auto total = duration_ms(r, "TotalDuration", to_ms, where, /*required=*/true);
    if (e.status == Status::Ok) {
      if (!total) throw InputError(fmt::format("{}.TotalDuration: an Ok result without a duration", where));
      e.time_ms = *total;
      e.times_ms = {*total};
    }
    const auto compile = duration_ms(r, "CompilationOverhead", to_ms, where, false);
    const auto total_overhead = duration_ms(r, "TotalOverhead", to_ms, where, false);
    const auto validation = duration_ms(r, "ValidationOverhead", to_ms, where, false);
    const auto data = duration_ms(r, "DataMovementOverhead", to_ms, where, false);
    const auto profiling = duration_ms(r, "ProfilingOverhead", to_ms, where, false);
    e.compile_time_ms = compile ? compile : total_overhead;
    e.verification_time_ms = validation;
    if (total || data || profiling)
      e.benchmark_time_ms = total.value_or(0.0) + data.value_or(0.0) + profiling.value_or(0.0);
    if (const auto s = duration_ms(r, "SearcherOverhead", to_ms, where, false)) e.strategy_time_ms = s;
    for (const auto& o : {compile, total_overhead, validation, data, profiling})
      any_overhead = any_overhead || (o && *o > 0);
    if (const auto ts = r.find("Timestamp"); ts != r.end() && ts->is_string()) e.timestamp = ts->get<std::string>();
    if (!seen.insert(e.key).second) continue;  // a later run of the same configuration
    out.entries.push_back(std::move(e));
  }
  if (out.entries.empty()) throw InputError(fmt::format("{}: Results: empty", name));
  // The kernel's own time is no cost of tuning it: without overheads the file has no costs
  // (scored in evaluations) rather than costs of a few microseconds.
  if (!any_overhead)
    for (auto& e : out.entries) e.compile_time_ms = e.verification_time_ms = e.benchmark_time_ms = std::nullopt;
  return out;
}

KttResults read_ktt(const std::filesystem::path& path) {
  return parse_ktt(detail::read_text_file(path), path.string());
}

}  // namespace cutune::db::ktt
