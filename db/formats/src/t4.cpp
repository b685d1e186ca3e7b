#include "cutune/formats/t4.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>

#include "cutune/formats/python_json.hpp"
#include "cutune/formats/python_repr.hpp"
#include "cutune/model/errors.hpp"
#include "kt_json_util.hpp"
#include "text_file.hpp"

namespace cutune::db::kt {

using detail::json_quoted;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Writing

namespace {

/// A measurement value as the schemas allow it (number, string or array).
ordered_json measurement_value(const ordered_json& v) {
  if (v.is_number() || v.is_string() || v.is_array()) return v;
  if (v.is_object()) return dump_python_json(v);
  return python_str(v);  // true -> "True", null -> "None"
}

ordered_json metadata_json(const T4Metadata& md, bool timeunit_first) {
  ordered_json m = ordered_json::object();
  if (timeunit_first) m["timeunit"] = "milliseconds";
  auto put = [&](const char* k, const std::string& v) {
    if (!v.empty()) m[k] = v;
  };
  put("compute_api", md.compute_api);
  put("platform", md.platform);
  put("device", md.device);
  put("autotuner", md.autotuner);
  put("autotuner_version", md.autotuner_version);
  put("timestamp", md.timestamp);
  if (!timeunit_first) m["timeunit"] = "milliseconds";
  for (auto it = md.extra.begin(); it != md.extra.end(); ++it)
    if (!m.contains(it.key())) m[it.key()] = it.value();
  return m;
}

ordered_json opt_number(const std::optional<double>& v) {
  return v ? ordered_json(*v) : ordered_json(0);  // Kernel Tuner's `or 0`
}

ordered_json result_json(const KtEntry& e, bool v1_1, const std::vector<std::string>& objectives) {
  ordered_json r = ordered_json::object();
  if (!e.timestamp.empty()) r["timestamp"] = e.timestamp;
  r["configuration"] = e.params;
  if (v1_1) r["objectives"] = objectives;
  ordered_json t = ordered_json::object();
  if (v1_1) {
    t["compilation_time"] = opt_number(e.compile_time_ms);
    t["runtimes"] = e.times_ms;
    t["framework"] = opt_number(e.framework_time_ms);
    t["search_algorithm"] = opt_number(e.strategy_time_ms);
    t["validation"] = opt_number(e.verification_time_ms);
    t["benchmark"] = opt_number(e.benchmark_time_ms);
  } else {
    t["compilation"] = opt_number(e.compile_time_ms);
    t["compilation_time"] = opt_number(e.compile_time_ms);
    t["benchmark"] = opt_number(e.benchmark_time_ms);
    t["framework"] = opt_number(e.framework_time_ms);
    t["search_algorithm"] = opt_number(e.strategy_time_ms);
    t["validation"] = opt_number(e.verification_time_ms);
    t["runtimes"] = e.times_ms;
  }
  r["times"] = std::move(t);
  r["invalidity"] = e.status == Status::Ok ? "correct" : status_name(e.status);
  r["correctness"] = e.status == Status::Ok ? 1 : 0;
  ordered_json ms = ordered_json::array();
  if (e.status != Status::Ok)
    ms.push_back({{"name", "time"}, {"value", kt_error_name(e.status)}, {"unit", ""}});
  else if (!std::isnan(e.time_ms))
    ms.push_back({{"name", "time"}, {"value", e.time_ms}, {"unit", "ms"}});
  for (auto it = e.extra.begin(); it != e.extra.end(); ++it) {
    const bool time_like = it.key().rfind("time", 0) == 0;  // Kernel Tuner's unit rule
    ms.push_back({{"name", it.key()},
                  {"value", measurement_value(it.value())},
                  {"unit", time_like ? "ms" : ""}});
  }
  r["measurements"] = std::move(ms);
  if (!v1_1) r["objectives"] = objectives;
  return r;
}

}  // namespace

std::string format_t4(std::string_view version, const T4Metadata& metadata,
                      const std::vector<std::string>& objectives,
                      const std::vector<KtEntry>& entries) {
  const bool v1_1 = version == "1.1.0";
  if (!v1_1 && version != "1.0.0")
    throw std::invalid_argument(fmt::format("format_t4: unknown T4 version '{}'", version));
  ordered_json results = ordered_json::array();
  for (const auto& e : entries) results.push_back(result_json(e, v1_1, objectives));
  ordered_json doc = ordered_json::object();
  if (v1_1) {
    doc["schema_version"] = "1.1.0";
    doc["metadata"] = metadata_json(metadata, false);
    doc["results"] = std::move(results);
  } else {  // Kernel Tuner's order: results, schema_version, metadata
    doc["results"] = std::move(results);
    doc["schema_version"] = "1.0.0";
    doc["metadata"] = metadata_json(metadata, true);
  }
  return dump_python_json(doc);
}

void write_t4(const fs::path& path, std::string_view version, const T4Metadata& metadata,
              const std::vector<std::string>& objectives, const std::vector<KtEntry>& entries) {
  const std::string text = format_t4(version, metadata, objectives, entries);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
  out << text;
  out.flush();
  if (!out) throw InputError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
}

std::string format_t4_metadata_1_0_0(const T4Metadata& md) {
  ordered_json hw = ordered_json::array();
  if (!md.device.empty()) hw.push_back({{"class", "display"}, {"product", md.device}});
  ordered_json requirements = ordered_json::array();
  if (!md.autotuner_version.empty())
    requirements.push_back(fmt::format("{}=={}", md.autotuner, md.autotuner_version));
  ordered_json doc = {
      {"metadata",
       {{"operating_system", "Linux"},
        {"hardware", {{"hardware_description", hw}}},
        {"environment",
         {{"device_query", {{md.autotuner, metadata_json(md, false)}}},
          {"requirements", requirements}}}}},
      {"schema_version", "1.0.0"}};
  return dump_python_json_indented(doc, "  ");
}

// ---------------------------------------------------------------------------------------
// Reading

namespace {

std::string type_name(const ordered_json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "an object";
}

/// Milliseconds per unit of a T4 timeunit or measurement unit; nullopt when unknown.
std::optional<double> ms_per(std::string_view unit) {
  if (unit == "milliseconds" || unit == "miliseconds" || unit == "ms") return 1.0;
  if (unit == "seconds" || unit == "s") return 1000.0;
  if (unit == "microseconds" || unit == "us") return 1e-3;
  if (unit == "nanoseconds" || unit == "ns") return 1e-6;
  return std::nullopt;
}

std::optional<double> time_field(const ordered_json& times, const char* field,
                                 const std::string& at, double scale) {
  const auto it = times.find(field);
  if (it == times.end()) return std::nullopt;
  if (!it->is_number())
    throw InputError(fmt::format("{}.times.{}: expected a number, got {}", at, field, type_name(*it)));
  return it->get<double>() * scale;
}

KtEntry result_entry(const ordered_json& r, const std::string& at, double scale) {
  if (!r.is_object()) throw InputError(fmt::format("{}: expected an object, got {}", at, type_name(r)));
  auto need = [&](const char* f) -> const ordered_json& {
    const auto it = r.find(f);
    if (it == r.end()) throw InputError(fmt::format("{}.{}: missing", at, f));
    return *it;
  };
  KtEntry e;
  const ordered_json& config = need("configuration");
  if (!config.is_object())
    throw InputError(fmt::format("{}.configuration: expected an object, got {}", at, type_name(config)));
  e.params = config;
  std::vector<ordered_json> values;
  for (auto it = config.begin(); it != config.end(); ++it) values.push_back(it.value());
  e.key = config_key(values);

  const ordered_json& times = need("times");
  if (!times.is_object())
    throw InputError(fmt::format("{}.times: expected an object, got {}", at, type_name(times)));
  e.compile_time_ms = time_field(times, "compilation_time", at, scale);
  if (!e.compile_time_ms) e.compile_time_ms = time_field(times, "compilation", at, scale);
  e.benchmark_time_ms = time_field(times, "benchmark", at, scale);
  e.framework_time_ms = time_field(times, "framework", at, scale);
  e.strategy_time_ms = time_field(times, "search_algorithm", at, scale);
  e.verification_time_ms = time_field(times, "validation", at, scale);
  if (const auto rt = times.find("runtimes"); rt != times.end()) {
    if (!rt->is_array())
      throw InputError(fmt::format("{}.times.runtimes: expected a list, got {}", at, type_name(*rt)));
    for (std::size_t i = 0; i < rt->size(); ++i) {
      if (!(*rt)[i].is_number())
        throw InputError(fmt::format("{}.times.runtimes[{}]: expected a number, got {}", at, i,
                                     type_name((*rt)[i])));
      e.times_ms.push_back((*rt)[i].get<double>() * scale);
    }
  }
  ordered_json other_times = ordered_json::object();
  for (auto it = times.begin(); it != times.end(); ++it) {
    static constexpr std::string_view kKnown[] = {"compilation_time", "compilation", "benchmark",
                                                  "framework", "search_algorithm", "validation",
                                                  "runtimes"};
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) == std::end(kKnown))
      other_times[it.key()] = it.value();
  }

  const ordered_json& invalidity = need("invalidity");
  if (!invalidity.is_string())
    throw InputError(fmt::format("{}.invalidity: expected a string, got {}", at, type_name(invalidity)));
  const std::string& inv = invalidity.get_ref<const std::string&>();
  if (inv == "correct") {
    e.status = Status::Ok;
  } else if (auto s = parse_status(inv); s && *s != Status::Ok) {
    e.status = *s;
  } else {
    throw InputError(fmt::format("{}.invalidity: unknown value {}", at, json_quoted(inv)));
  }
  const ordered_json& correctness = need("correctness");
  if (!correctness.is_number())
    throw InputError(fmt::format("{}.correctness: expected a number, got {}", at, type_name(correctness)));
  if (e.status == Status::Ok && correctness.get<double>() == 0.0) e.status = Status::Correctness;

  if (const auto ts = r.find("timestamp"); ts != r.end()) {
    if (!ts->is_string())
      throw InputError(fmt::format("{}.timestamp: expected a string, got {}", at, type_name(*ts)));
    e.timestamp = ts->get<std::string>();
  }
  if (const auto ms = r.find("measurements"); ms != r.end()) {
    if (!ms->is_array())
      throw InputError(fmt::format("{}.measurements: expected a list, got {}", at, type_name(*ms)));
    for (std::size_t i = 0; i < ms->size(); ++i) {
      const ordered_json& m = (*ms)[i];
      const std::string mat = fmt::format("{}.measurements[{}]", at, i);
      if (!m.is_object())
        throw InputError(fmt::format("{}: expected an object, got {}", mat, type_name(m)));
      const auto name = m.find("name");
      if (name == m.end() || !name->is_string())
        throw InputError(fmt::format("{}.name: expected a string", mat));
      const auto value = m.find("value");
      if (value == m.end()) throw InputError(fmt::format("{}.value: missing", mat));
      const std::string& n = name->get_ref<const std::string&>();
      if (n == "__error__") continue;  // Kernel Tuner 1.5 dumps its ErrorConfig here as ""
      if (n == "time") {
        if (value->is_number()) {
          double unit_scale = scale;
          if (const auto u = m.find("unit"); u != m.end() && u->is_string() && !u->get<std::string>().empty())
            unit_scale = ms_per(u->get<std::string>()).value_or(scale);
          e.time_ms = value->get<double>() * unit_scale;
        } else if (value->is_string() && status_of_kt_error(value->get<std::string>())) {
          e.error = value->get<std::string>();
        } else {
          throw InputError(fmt::format("{}.value: expected a number or an error name, got {}",
                                       mat, type_name(*value)));
        }
        continue;
      }
      e.extra[n] = *value;
    }
  }
  if (!other_times.empty()) e.extra["t4_times"] = std::move(other_times);
  if (e.status != Status::Ok) {
    e.time_ms = std::numeric_limits<double>::quiet_NaN();
    if (e.error.empty()) e.error = kt_error_name(e.status);
  } else if (std::isnan(e.time_ms) && !e.times_ms.empty()) {
    e.time_ms = kt_mean(e.times_ms);  // Kernel Tuner's definition of "time"
  }
  return e;
}

}  // namespace

T4Results parse_t4(std::string_view text, std::string_view name_for_errors) {
  const std::string name(name_for_errors);
  const ordered_json doc = parse_python_json(text, name);
  if (!doc.is_object())
    throw InputError(fmt::format("{}: expected a JSON object (T4 results), got {}", name, type_name(doc)));
  T4Results out;
  if (const auto sv = doc.find("schema_version"); sv != doc.end()) {
    if (!sv->is_string())
      throw InputError(fmt::format("{}: schema_version: expected a string, got {}", name, type_name(*sv)));
    out.schema_version = sv->get<std::string>();
  }
  double scale = 1.0;
  if (const auto md = doc.find("metadata"); md != doc.end()) {
    if (!md->is_object())
      throw InputError(fmt::format("{}: metadata: expected an object, got {}", name, type_name(*md)));
    T4Metadata& m = out.metadata;
    m = T4Metadata{};
    m.compute_api = m.platform = m.device = m.autotuner = m.autotuner_version = m.timestamp = "";
    for (auto it = md->begin(); it != md->end(); ++it) {
      const std::string& k = it.key();
      std::string* field = k == "compute_api"         ? &m.compute_api
                           : k == "platform"          ? &m.platform
                           : k == "device"            ? &m.device
                           : k == "autotuner"         ? &m.autotuner
                           : k == "autotuner_version" ? &m.autotuner_version
                           : k == "timestamp"         ? &m.timestamp
                           : k == "timeunit"          ? &m.timeunit
                                                      : nullptr;
      if (!field) {
        m.extra[k] = it.value();
        continue;
      }
      if (!it.value().is_string())
        throw InputError(fmt::format("{}: metadata.{}: expected a string, got {}", name, k,
                                     type_name(it.value())));
      *field = it.value().get<std::string>();
    }
    const auto s = ms_per(m.timeunit);
    if (!s)
      throw InputError(fmt::format("{}: metadata.timeunit: unknown unit {}", name, json_quoted(m.timeunit)));
    scale = *s;
  } else {
    out.metadata.autotuner = "";
    out.metadata.compute_api = "";
  }
  const auto results = doc.find("results");
  if (results == doc.end()) throw InputError(fmt::format("{}: results: missing (not T4 results)", name));
  if (!results->is_array())
    throw InputError(fmt::format("{}: results: expected a list, got {}", name, type_name(*results)));
  out.entries.reserve(results->size());
  for (std::size_t i = 0; i < results->size(); ++i) {
    const ordered_json& r = (*results)[i];
    out.entries.push_back(result_entry(r, fmt::format("{}: results[{}]", name, i), scale));
    if (i == 0) {
      const ordered_json& config = r.at("configuration");
      for (auto it = config.begin(); it != config.end(); ++it)
        out.param_names.push_back(it.key());
      if (const auto o = r.find("objectives"); o != r.end()) {
        if (!o->is_array())
          throw InputError(fmt::format("{}: results[0].objectives: expected a list of strings", name));
        for (const auto& s : *o) {
          if (!s.is_string())
            throw InputError(fmt::format("{}: results[0].objectives: expected a list of strings", name));
          out.objectives.push_back(s.get<std::string>());
        }
      }
    }
  }
  return out;
}

T4Results read_t4(const fs::path& path) {
  const std::string text = detail::read_text_file(path);
  return parse_t4(text, path.string());
}

}  // namespace cutune::db::kt
