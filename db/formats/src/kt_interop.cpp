#include "cutune/formats/kt_interop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <regex>

#include "cutune/formats/ktt.hpp"
#include "cutune/formats/python_json.hpp"
#include "cutune/formats/t4.hpp"
#include "cutune/model/errors.hpp"
#include "kt_json_util.hpp"
#include "text_file.hpp"

namespace cutune::db::kt {

using ordered_json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

/// Fields of a cache entry that measurement_of_entry maps to the median and its interval, not
/// to the file fields it keeps.
bool is_interval_field(const std::string& k) {
  return k == kMedianField || k == kCiLowField || k == kCiHighField || k == kSampleCountField;
}

double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> number_in(const ordered_json& obj, const char* field) {
  if (const auto it = obj.find(field); it != obj.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

/// "2026-11-21T23:59:01.123Z" -> "2026-11-21 23:59:01.123000+00:00" (kt_timestamp's form).
std::string kt_stamp_of_iso(const std::string& iso) {
  static const std::regex re(R"((\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z)");
  std::smatch m;
  if (!std::regex_match(iso, m, re)) return "";
  std::string frac = m[3].str();
  frac.resize(6, '0');
  return fmt::format("{} {}.{}+00:00", m[1].str(), m[2].str(), frac);
}

}  // namespace

std::optional<std::string> iso_of_kt_timestamp(const std::string& stamp) {
  static const std::regex re(R"((\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(\+00:00|Z)?)");
  std::smatch m;
  if (!std::regex_match(stamp, m, re)) return std::nullopt;
  std::string ms = m[3].str();
  ms.resize(3, '0');
  return fmt::format("{}T{}.{}Z", m[1].str(), m[2].str(), ms);
}

DeviceIdentity device_from_json(const ordered_json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(fmt::format("{}: expected an object", where));
  DeviceIdentity d;
  auto text = [&](const char* field) -> std::string {
    const auto it = j.find(field);
    if (it == j.end()) return "";
    if (!it->is_string()) throw InputError(fmt::format("{}.{}: expected a string", where, field));
    return it->get<std::string>();
  };
  auto integer = [&](const char* field) -> std::int64_t {
    const auto it = j.find(field);
    if (it == j.end()) return 0;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      throw InputError(fmt::format("{}.{}: expected a non-negative integer", where, field));
    return it->get<std::int64_t>();
  };
  // "12.4" -> 12040: to_json writes versions as major.minor of major*1000 + minor*10.
  auto version = [&](const char* field) -> int {
    const std::string v = text(field);
    if (v.empty()) return 0;
    static const std::regex re(R"((\d{1,4})\.(\d{1,2}))");
    std::smatch m;
    if (!std::regex_match(v, m, re)) throw InputError(fmt::format("{}.{}: expected \"major.minor\"", where, field));
    return std::stoi(m[1].str()) * 1000 + std::stoi(m[2].str()) * 10;
  };
  d.name = text("name");
  if (d.name.empty()) throw InputError(fmt::format("{}.name: missing", where));
  if (const std::string cc = text("compute_capability"); !cc.empty()) {
    static const std::regex re(R"((\d{1,2})\.(\d))");
    std::smatch m;
    if (!std::regex_match(cc, m, re))
      throw InputError(fmt::format("{}.compute_capability: expected \"major.minor\", got \"{}\"", where, cc));
    d.cc_major = std::stoi(m[1].str());
    d.cc_minor = std::stoi(m[2].str());
  }
  auto small = [&](const char* field) {
    const std::int64_t v = integer(field);
    if (v > INT32_MAX / 1000) throw InputError(fmt::format("{}.{}: out of range", where, field));
    return static_cast<int>(v);
  };
  d.sm_count = small("sm_count");
  d.memory_bytes = static_cast<std::uint64_t>(integer("memory_bytes"));
  d.sm_clock_khz = small("sm_clock_mhz") * 1000;
  d.memory_clock_khz = small("memory_clock_mhz") * 1000;
  d.memory_bus_bits = small("memory_bus_bits");
  const std::int64_t l2 = integer("l2_bytes");
  if (l2 > INT32_MAX) throw InputError(fmt::format("{}.l2_bytes: out of range", where));
  d.l2_bytes = static_cast<int>(l2);
  d.driver_version = version("driver_cuda_version");
  d.driver_release = text("driver_release");
  d.nvrtc_version = version("nvrtc_version");
  d.uuid = text("uuid");
  return d;
}

ResultsFile read_results_file(const fs::path& path) {
  const std::string name = path.string();
  const std::string text = detail::read_text_file(path);
  // A complete JSON document with "results" is T4; anything else is read as a cache, whose
  // reader also takes the open files a crash leaves (not valid JSON).
  bool is_t4 = false, is_ktt = false;
  try {
    const ordered_json doc = parse_python_json(text, name);
    if (!doc.is_object())
      throw InputError(fmt::format("{}: expected a JSON object (a Kernel Tuner cache, T4 or KTT results)", name));
    is_ktt = ktt::is_ktt_results(doc);
    is_t4 = doc.contains("results") && !doc.contains("cache");
    if (!is_t4 && !is_ktt && !doc.contains("cache"))
      throw InputError(fmt::format("{}: neither a Kernel Tuner cache (no \"cache\"), T4 results (no \"results\") "
                                   "nor KTT results (no \"Metadata\" and \"Results\")",
                                   name));
  } catch (const InputError& e) {
    // An open cache is not JSON: let the cache reader judge (it names the field); other
    // files keep the first message.
    if (text.find("\"cache\"") == std::string::npos) throw;
  }
  ResultsFile out;
  if (is_ktt) {  // KTT names its device and kernel, not the problem size
    ktt::KttResults k = ktt::parse_ktt(text, name);
    out.format = k.ktt_version.empty() ? "KTT results" : "KTT " + k.ktt_version + " results";
    out.device_name = k.device;
    out.kernel_name = k.kernel_name;
    out.param_names = std::move(k.param_names);
    out.entries = std::move(k.entries);
    return out;
  }
  if (is_t4) {
    T4Results t4 = parse_t4(text, name);
    out.format = t4.schema_version.empty() ? "T4" : "T4 " + t4.schema_version;
    out.device_name = t4.metadata.device;
    if (const auto it = t4.metadata.extra.find(kDeviceField); it != t4.metadata.extra.end())
      out.device = device_from_json(*it, name + ": metadata." + kDeviceField);
    out.param_names = std::move(t4.param_names);
    out.entries = std::move(t4.entries);
    return out;
  }
  KtCache cache = parse_cache(text, name);
  out.format = "Kernel Tuner cache";
  out.device_name = cache.device_name;
  if (const auto it = cache.extra.find(kDeviceField); it != cache.extra.end())
    out.device = device_from_json(*it, name + ": " + kDeviceField);
  out.kernel_name = cache.kernel_name;
  out.kernel_function = kernel_function(cache);
  out.problem_size = cache.problem_size;
  out.problem_variables = problem_field(cache, name);
  out.param_names = cache.tune_params_keys;
  out.tune_params = cache.tune_params;
  out.entries = std::move(cache.entries);
  return out;
}

std::string store_json(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

ordered_json value_json(const Value& v) {
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_float();
  return v.str();
}

KtCacheHeader cache_header(const std::string& kernel_name, const Space& space,
                           const std::vector<std::int64_t>& problem_size, const DeviceIdentity& device,
                           const std::string& objective) {
  KtCacheHeader h;
  h.device_name = device.name;
  h.kernel_name = kernel_name;
  h.problem_size = problem_size;
  for (const auto& p : space.parameters()) {
    h.tune_params_keys.push_back(p.name);
    ordered_json values = ordered_json::array();
    for (const auto& v : p.values) values.push_back(value_json(v));
    h.tune_params[p.name] = std::move(values);
  }
  h.objective = ordered_json::array({objective});
  h.extra[kDeviceField] = to_json(device);
  return h;
}

void set_default_field(KtCacheHeader& header, const Space& space) {
  const Config def = space.default_config();
  ordered_json defaults = ordered_json::object();
  for (std::size_t i = 0; i < space.parameters().size(); ++i)
    defaults[space.parameters()[i].name] = value_json(space.value(def, i));
  header.extra[kDefaultField] = std::move(defaults);
}

std::map<std::string, std::int64_t> problem_field(const KtCacheHeader& header, const std::string& where) {
  std::map<std::string, std::int64_t> out;
  const auto it = header.extra.find(kProblemField);
  if (it == header.extra.end()) return out;
  if (!it->is_object() || it->empty())
    throw InputError(fmt::format("{}: {}: expected an object of the problem's variables, e.g. {{\"n\": 1024}}", where,
                                 kProblemField));
  for (const auto& [name, value] : it->items()) {
    if (!value.is_number_integer())
      throw InputError(fmt::format("{}: {}: \"{}\" is {}, not an integer", where, kProblemField, name, value.dump()));
    out[name] = value.get<std::int64_t>();
  }
  return out;
}

void set_problem_field(KtCacheHeader& header, const std::map<std::string, std::int64_t>& variables) {
  if (variables.empty()) return;
  ordered_json j = ordered_json::object();
  for (const auto& [name, value] : variables) j[name] = value;
  header.extra[kProblemField] = std::move(j);
}

std::map<std::string, std::int64_t> stored_problem_variables(const ordered_json& problem) {
  std::map<std::string, std::int64_t> out;
  if (!problem.is_object()) return out;
  for (const auto& [name, value] : problem.items())
    if (name != "ProblemSize" && name != kImportedTuneParamsKey && value.is_number_integer())
      out[name] = value.get<std::int64_t>();
  return out;
}

std::string kernel_function(const KtCacheHeader& header) {
  const auto it = header.extra.find(kKernelFunctionField);
  return it != header.extra.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Measurement measurement_of_entry(const KtEntry& e, ResultConfig config, const std::string& imported_at) {
  Measurement m;
  m.config = std::move(config);
  m.status = e.status;
  if (e.status != Status::Ok) m.error = e.error.empty() ? kt_error_name(e.status) : e.error;
  m.samples_ms = e.times_ms;
  ImportedOrigin imported;
  if (e.status == Status::Ok) {
    const auto median = number_in(e.extra, kMedianField);
    m.median_ms = median ? *median
                  : !e.times_ms.empty() ? median_of(e.times_ms)
                  : std::isnan(e.time_ms) ? 0.0
                                          : e.time_ms;
    if (!std::isnan(e.time_ms)) imported.mean_ms = e.time_ms;
    imported.ci_low_ms = number_in(e.extra, kCiLowField);
    imported.ci_high_ms = number_in(e.extra, kCiHighField);
  }
  if (!std::isfinite(m.median_ms)) m.median_ms = 0.0;
  m.compile_ms = e.compile_time_ms.value_or(0.0);
  m.verify_ms = e.verification_time_ms.value_or(0.0);
  if (std::isnan(m.compile_ms)) m.compile_ms = 0.0;
  if (std::isnan(m.verify_ms)) m.verify_ms = 0.0;
  m.started_at = m.finished_at = iso_of_kt_timestamp(e.timestamp).value_or(imported_at);
  // Everything else the file said, so an export gives it back.
  ordered_json& kt = imported.file_fields;
  auto keep = [&](const char* field, const std::optional<double>& v) {
    if (v) kt[field] = *v;
  };
  keep("benchmark_time", e.benchmark_time_ms);
  keep("strategy_time", e.strategy_time_ms);
  keep("framework_time", e.framework_time_ms);
  if (!e.timestamp.empty()) kt["timestamp"] = e.timestamp;
  for (auto it = e.extra.begin(); it != e.extra.end(); ++it)
    if (!is_interval_field(it.key())) kt[it.key()] = it.value();
  m.origin = std::move(imported);
  return m;
}

namespace {

KtEntry entry_of(const Measurement& m, ordered_json params) {
  KtEntry e;
  e.key = m.config.key();
  e.params = std::move(params);
  e.status = m.status;
  const ImportedOrigin* imported = m.imported();
  if (m.status == Status::Ok) {
    e.times_ms = m.samples_ms;
    e.time_ms = !e.times_ms.empty() ? kt_mean(e.times_ms) : m.mean_ms().value_or(m.median_ms);
    e.extra[kMedianField] = m.median_ms;
    std::optional<double> lo, hi;
    if (const ResultStats* s = m.stats()) lo = s->summary.ci_low, hi = s->summary.ci_high;
    else if (imported) lo = imported->ci_low_ms, hi = imported->ci_high_ms;
    if (lo) e.extra[kCiLowField] = *lo;
    if (hi) e.extra[kCiHighField] = *hi;
    e.extra[kSampleCountField] = m.samples_ms.size();
    // Observers' values are fields of the entry, as Kernel Tuner's observers' results are
    // (an AccuracyObserver's "error", a RegisterObserver's "num_regs"): the package's rows
    // and Python metrics read them there. One named like a parameter or a field of Kernel
    // Tuner's own would change what the file means, and is left out.
    if (const MeasuredOrigin* measured = m.measured())
      for (const auto& [name, v] : measured->observed)
        if (!e.params.contains(name) && !is_known_entry_field(name) && !is_interval_field(name)) e.extra[name] = v;
    for (const auto& [name, v] : m.metrics)
      if (!e.params.contains(name)) e.extra[name] = v;
  }
  e.compile_time_ms = m.compile_ms;
  e.verification_time_ms = m.verify_ms;
  if (imported && !imported->file_fields.empty()) {  // the file's own fields, as they were
    const ordered_json* kt = &imported->file_fields;
    e.benchmark_time_ms = number_in(*kt, "benchmark_time");
    e.strategy_time_ms = number_in(*kt, "strategy_time");
    e.framework_time_ms = number_in(*kt, "framework_time");
    if (const auto ts = kt->find("timestamp"); ts != kt->end() && ts->is_string()) e.timestamp = *ts;
    for (auto it = kt->begin(); it != kt->end(); ++it) {
      const std::string& k = it.key();
      if (k == "benchmark_time" || k == "strategy_time" || k == "framework_time" || k == "timestamp" ||
          e.params.contains(k) || is_interval_field(k) || e.extra.contains(k))
        continue;
      e.extra[k] = it.value();
    }
  } else if (m.status == Status::Ok) {
    // A measurement of cutune's own has no benchmark time stored: its timed launches stand in
    // for it, as in the report. Exported as 0 before, the recorded spaces' costs were compile
    // and verification alone, leaving out 36-41% of the cost on BAT's nbody (9 ms launches).
    e.benchmark_time_ms = std::accumulate(m.samples_ms.begin(), m.samples_ms.end(), 0.0);
  }
  if (e.timestamp.empty()) e.timestamp = kt_stamp_of_iso(m.finished_at);
  return e;
}

}  // namespace

KtEntry entry_of_measurement(const Measurement& m) { return entry_of(m, m.config.to_json()); }

KtEntry entry_of_measurement(const Measurement& m, const Configuration& config) {
  return entry_of(m, config.to_json());
}

}  // namespace cutune::db::kt
