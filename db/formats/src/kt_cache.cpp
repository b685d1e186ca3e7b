#include "cutune/formats/kt_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "cutune/formats/python_json.hpp"
#include "cutune/formats/python_repr.hpp"
#include "cutune/model/errors.hpp"
#include "kt_json_util.hpp"
#include "python_json_parser.hpp"
#include "text_file.hpp"

namespace cutune::db::kt {

using nlohmann::ordered_json;
namespace fs = std::filesystem;
using detail::json_equal;
using detail::json_quoted;

const char* kt_error_name(Status s) {
  switch (s) {
    case Status::Ok: return "";
    case Status::Compile: return "CompilationFailedConfig";
    case Status::Constraints: return "InvalidConfig";
    case Status::Runtime:
    case Status::Correctness:
    case Status::Timeout: return "RuntimeFailedConfig";
  }
  return "RuntimeFailedConfig";
}

std::optional<Status> status_of_kt_error(std::string_view name) {
  if (name == "InvalidConfig") return Status::Constraints;
  if (name == "CompilationFailedConfig") return Status::Compile;
  if (name == "RuntimeFailedConfig" || name == "ErrorConfig") return Status::Runtime;
  return std::nullopt;
}

namespace {

bool double_equal(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool opt_equal(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || double_equal(*a, *b);
}

}  // namespace

bool KtEntry::operator==(const KtEntry& o) const {
  return key == o.key && json_equal(params, o.params) && status == o.status && error == o.error &&
         double_equal(time_ms, o.time_ms) &&
         std::equal(times_ms.begin(), times_ms.end(), o.times_ms.begin(), o.times_ms.end(),
                    double_equal) &&
         opt_equal(compile_time_ms, o.compile_time_ms) &&
         opt_equal(verification_time_ms, o.verification_time_ms) &&
         opt_equal(benchmark_time_ms, o.benchmark_time_ms) &&
         opt_equal(strategy_time_ms, o.strategy_time_ms) &&
         opt_equal(framework_time_ms, o.framework_time_ms) && timestamp == o.timestamp &&
         json_equal(extra, o.extra);
}

bool KtCacheHeader::operator==(const KtCacheHeader& o) const {
  return schema_version == o.schema_version && device_name == o.device_name &&
         kernel_name == o.kernel_name && json_equal(problem_size, o.problem_size) &&
         tune_params_keys == o.tune_params_keys && json_equal(tune_params, o.tune_params) &&
         json_equal(objective, o.objective) && json_equal(extra, o.extra);
}

std::vector<std::string> KtCacheHeader::objectives() const {
  if (objective.is_string()) return {objective.get<std::string>()};
  std::vector<std::string> out;
  if (objective.is_array())
    for (const auto& o : objective)
      if (o.is_string()) out.push_back(o.get<std::string>());
  return out;
}

// ---------------------------------------------------------------------------------------
// Reading

namespace {
constexpr const char* kKnownEntryFields[] = {
    "time", "times", "compile_time", "verification_time", "benchmark_time",
    "strategy_time", "framework_time", "timestamp", "__error__", "cutune_status"};
}  // namespace

bool is_known_entry_field(std::string_view k) {
  return std::find(std::begin(kKnownEntryFields), std::end(kKnownEntryFields), k) !=
         std::end(kKnownEntryFields);
}

namespace {

/// Where the writer may append to a file it resumes.
struct ResumePoint {
  std::size_t append_offset = 0;    ///< just after the last complete entry, or after `{`
  std::string field_after_cache;    ///< a top-level field that follows "cache", if any
};

/// What parse_raw found: the top-level fields other than "cache", and the raw entries.
struct RawCache {
  ordered_json root = ordered_json::object();
  bool has_cache = false;
  std::vector<std::pair<std::string, ordered_json>> entries;
  KtFileState state = KtFileState::Closed;
  ResumePoint resume;
};

void parse_cache_object(detail::PyJsonParser& p, std::string_view name, RawCache& raw) {
  if (p.peek() != '{')
    throw InputError(fmt::format("{}: cache: expected an object of configurations", name));
  p.expect('{', "'{'");
  raw.resume.append_offset = p.offset();
  std::unordered_map<std::string, std::size_t> index;
  if (p.consume('}')) return;
  while (true) {
    if (p.at_end()) {  // `"cache": {` or a trailing ",": a file left open
      raw.state = KtFileState::Open;
      return;
    }
    std::string key;
    ordered_json value;
    try {
      if (p.peek() != '"') p.fail("expected a configuration key (a string) in \"cache\"");
      key = p.parse_string();
      p.expect(':', "':' after a configuration key");
      value = p.parse_value(2);
    } catch (const detail::JsonSyntaxError& e) {
      // A crash in the middle of a line: the text ends inside the entry, or only the NUL
      // bytes of a power loss follow. Anything else is a syntax error.
      if (!e.at_end() && !p.only_padding_from(e.offset())) throw;
      raw.state = KtFileState::Truncated;
      return;
    }
    // A repeated key keeps its first place and its last value, as json.loads does.
    if (auto it = index.find(key); it != index.end()) {
      raw.entries[it->second].second = std::move(value);
    } else {
      index.emplace(key, raw.entries.size());
      raw.entries.emplace_back(std::move(key), std::move(value));
    }
    raw.resume.append_offset = p.offset();
    if (p.at_end()) {  // an entry without its "," (Kernel Tuner's repair handles it too)
      raw.state = KtFileState::Open;
      return;
    }
    if (p.consume(',')) continue;
    if (p.consume('}')) return;
    p.fail("expected ',' or '}' after an entry of \"cache\"");
  }
}

RawCache parse_raw(std::string_view text, std::string_view name) {
  RawCache raw;
  detail::PyJsonParser p(text);
  try {
    if (p.at_end()) throw InputError(fmt::format("{}: empty file, not a cache file", name));
    if (p.peek() != '{')
      throw InputError(fmt::format("{}: expected a JSON object (a cache file)", name));
    p.expect('{', "'{'");
    auto& root = raw.root.get_ref<ordered_json::object_t&>();
    if (!p.consume('}')) {
      while (true) {
        if (raw.has_cache && p.at_end()) {  // the closing "}" of the file is missing
          if (raw.state == KtFileState::Closed) raw.state = KtFileState::Open;
          break;
        }
        if (p.peek() != '"') p.fail("expected a field name (a string)");
        std::string key = p.parse_string();
        p.expect(':', "':' after a field name");
        if (key == "cache") {
          raw.has_cache = true;
          raw.entries.clear();
          parse_cache_object(p, name, raw);
          if (raw.state != KtFileState::Closed) break;  // the file ends inside "cache"
        } else {
          ordered_json v = p.parse_value(1);
          if (raw.has_cache && raw.resume.field_after_cache.empty())
            raw.resume.field_after_cache = key;
          bool replaced = false;
          for (auto& [k, old] : root)
            if (k == key) {
              old = std::move(v);
              replaced = true;
              break;
            }
          if (!replaced) root.emplace_back(std::move(key), std::move(v));
        }
        if (raw.has_cache && p.at_end()) {
          if (raw.state == KtFileState::Closed) raw.state = KtFileState::Open;
          break;
        }
        if (p.consume(',')) continue;
        p.expect('}', "',' or '}' after a field");
        if (!p.at_end()) p.fail("extra data after the end of the cache file");
        break;
      }
    }
  } catch (const detail::JsonSyntaxError& e) {
    throw InputError(detail::syntax_error_message(p, name, e));
  }
  if (!raw.has_cache) throw InputError(fmt::format("{}: cache: missing (not a cache file)", name));
  return raw;
}

std::string type_name(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return "a boolean";
    case ordered_json::value_t::number_integer:
    case ordered_json::value_t::number_unsigned:
    case ordered_json::value_t::number_float: return "a number";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "a list";
    case ordered_json::value_t::object: return "an object";
    default: return "a binary value";
  }
}

std::string required_string(const ordered_json& root, const char* field, std::string_view name) {
  const auto it = root.find(field);
  if (it == root.end()) throw InputError(fmt::format("{}: {}: missing", name, field));
  if (!it->is_string())
    throw InputError(
        fmt::format("{}: {}: expected a string, got {}", name, field, type_name(*it)));
  return it->get<std::string>();
}

KtCacheHeader header_from_root(const ordered_json& root, std::string_view name) {
  KtCacheHeader h;
  h.device_name = required_string(root, "device_name", name);
  h.kernel_name = required_string(root, "kernel_name", name);
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& k = it.key();
    const ordered_json& v = it.value();
    if (k == "device_name" || k == "kernel_name") continue;
    if (k == "schema_version") {
      if (!v.is_string())
        throw InputError(fmt::format("{}: schema_version: expected a string, got {}", name,
                                     type_name(v)));
      h.schema_version = v.get<std::string>();
    } else if (k == "problem_size") {
      if (!v.is_number_integer() && !v.is_array() && !v.is_string())
        throw InputError(fmt::format(
            "{}: problem_size: expected an integer, a list or a string, got {}", name,
            type_name(v)));
      h.problem_size = v;
    } else if (k == "tune_params_keys") {
      if (!v.is_array())
        throw InputError(fmt::format("{}: tune_params_keys: expected a list of names, got {}",
                                     name, type_name(v)));
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
          throw InputError(fmt::format("{}: tune_params_keys[{}]: expected a string, got {}",
                                       name, i, type_name(v[i])));
        h.tune_params_keys.push_back(v[i].get<std::string>());
      }
    } else if (k == "tune_params") {
      if (!v.is_object())
        throw InputError(
            fmt::format("{}: tune_params: expected an object, got {}", name, type_name(v)));
      for (auto p = v.begin(); p != v.end(); ++p)
        if (!p.value().is_array())
          throw InputError(fmt::format("{}: tune_params[{}]: expected a list of values, got {}",
                                       name, json_quoted(p.key()), type_name(p.value())));
      h.tune_params = v;
    } else if (k == "objective") {
      bool ok = v.is_string() || v.is_array();
      if (v.is_array())
        for (const auto& o : v) ok = ok && o.is_string();
      if (!ok)
        throw InputError(fmt::format(
            "{}: objective: expected a string or a list of strings, got {}", name,
            type_name(v)));
      h.objective = v;
    } else {
      h.extra[k] = v;
    }
  }
  if (!root.contains("tune_params_keys"))
    throw InputError(fmt::format("{}: tune_params_keys: missing", name));
  return h;
}

/// A number of an entry, or (Kernel Tuner's rule) one of the error names; else InputError.
/// Returns nullopt for an error name, which it records in `error_found`.
std::optional<double> entry_number(const ordered_json& v, const std::string& where,
                                   std::string& error_found) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && status_of_kt_error(v.get_ref<const std::string&>())) {
    if (error_found.empty()) error_found = v.get<std::string>();
    return std::nullopt;
  }
  throw InputError(fmt::format("{}: expected a number or one of Kernel Tuner's error names, got {}",
                               where, v.is_string() ? json_quoted(v.get<std::string>()) : type_name(v)));
}

// The runs of "times". Older Kernel Tuner versions wrote one list per kernel launch of a
// configuration (nested lists), which Kernel Tuner 1.5 reads without looking inside: every
// number is one run, in the order written.
void append_times(const ordered_json& v, const std::string& where, std::vector<double>& out) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    if (v[i].is_array()) append_times(v[i], at, out);
    else if (v[i].is_number()) out.push_back(v[i].get<double>());
    else throw InputError(fmt::format("{}: expected a number or a list of numbers, got {}", at, type_name(v[i])));
  }
}

KtEntry entry_from_json(std::string key, const ordered_json& obj, const KtCacheHeader& header,
                        std::string_view name) {
  const std::string at = fmt::format("{}: cache[{}]", name, json_quoted(key));
  if (!obj.is_object())
    throw InputError(fmt::format("{}: expected an object, got {}", at, type_name(obj)));
  KtEntry e;
  e.key = std::move(key);
  for (const auto& p : header.tune_params_keys) {
    const auto it = obj.find(p);
    if (it == obj.end()) throw InputError(fmt::format("{}: missing parameter {}", at, json_quoted(p)));
    e.params[p] = *it;
  }
  std::string error_time;       // the error name in "time"
  std::string error_elsewhere;  // the first error name in any other field
  std::optional<std::string> error_field;  // "__error__"
  std::optional<Status> cutune_status;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    const ordered_json& v = it.value();
    if (e.params.contains(k)) continue;
    const std::string where = fmt::format("{}.{}", at, k);
    if (k == "time") {
      if (auto d = entry_number(v, where, error_time)) e.time_ms = *d;
    } else if (k == "times") {
      if (!v.is_array())
        throw InputError(fmt::format("{}: expected a list of numbers, got {}", where, type_name(v)));
      append_times(v, where, e.times_ms);
    } else if (k == "compile_time") {
      e.compile_time_ms = entry_number(v, where, error_elsewhere);
    } else if (k == "verification_time") {
      e.verification_time_ms = entry_number(v, where, error_elsewhere);
    } else if (k == "benchmark_time") {
      e.benchmark_time_ms = entry_number(v, where, error_elsewhere);
    } else if (k == "strategy_time") {
      e.strategy_time_ms = entry_number(v, where, error_elsewhere);
    } else if (k == "framework_time") {
      e.framework_time_ms = entry_number(v, where, error_elsewhere);
    } else if (k == "timestamp") {
      if (!v.is_string())
        throw InputError(fmt::format("{}: expected a string, got {}", where, type_name(v)));
      e.timestamp = v.get<std::string>();
    } else if (k == "__error__") {
      // 1.4 on: the ErrorConfig's class name. An object is taken apart for a name it
      // holds; an unknown name or an empty string (an ErrorConfig dumped without str())
      // is still a failure, as Kernel Tuner treats any "__error__" as one.
      if (v.is_string()) {
        error_field = v.get<std::string>();
      } else if (v.is_object()) {
        error_field = "";
        for (const char* f : {"type", "name", "class", "error", "__class__"})
          if (auto m = v.find(f); m != v.end() && m->is_string() &&
                                  status_of_kt_error(m->get_ref<const std::string&>())) {
            error_field = m->get<std::string>();
            break;
          }
      } else {
        throw InputError(fmt::format("{}: expected an error name or an object, got {}", where,
                                     type_name(v)));
      }
    } else if (k == "cutune_status") {
      if (!v.is_string())
        throw InputError(fmt::format("{}: expected a status name, got {}", where, type_name(v)));
      cutune_status = parse_status(v.get_ref<const std::string&>());
      if (!cutune_status)
        throw InputError(fmt::format("{}: unknown status {}", where, json_quoted(v.get<std::string>())));
    } else {
      if (v.is_string() && status_of_kt_error(v.get_ref<const std::string&>()) &&
          error_elsewhere.empty())
        error_elsewhere = v.get<std::string>();
      e.extra[k] = v;
    }
  }
  if (error_field) {
    e.error = status_of_kt_error(*error_field) ? *error_field
              : !error_time.empty()            ? error_time
              : !error_elsewhere.empty()       ? error_elsewhere
              : error_field->empty()           ? std::string("ErrorConfig")
                                               : *error_field;
  } else if (!error_time.empty()) {
    e.error = error_time;
  } else if (!error_elsewhere.empty()) {
    e.error = error_elsewhere;
  }
  if (!e.error.empty()) {
    e.status = status_of_kt_error(e.error).value_or(Status::Runtime);
    e.time_ms = std::numeric_limits<double>::quiet_NaN();
  }
  // cutune's own status is finer than Kernel Tuner's (correctness, timeout).
  if (cutune_status) e.status = *cutune_status;
  return e;
}

KtCache build_cache(RawCache&& raw, std::string_view name) {
  KtCache cache;
  static_cast<KtCacheHeader&>(cache) = header_from_root(raw.root, name);
  cache.file_state = raw.state;
  cache.entries.reserve(raw.entries.size());
  for (auto& [key, value] : raw.entries)
    cache.entries.push_back(entry_from_json(std::move(key), value, cache, name));
  return cache;
}

}  // namespace

KtCache parse_cache(std::string_view text, std::string_view name_for_errors) {
  return build_cache(parse_raw(text, name_for_errors), name_for_errors);
}

KtCache read_cache(const fs::path& path) {
  const std::string text = detail::read_text_file(path);
  return parse_cache(text, path.string());
}

// ---------------------------------------------------------------------------------------
// Keys, means, timestamps

std::string config_key(const std::vector<ordered_json>& values) {
  std::string key;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) key += ',';
    key += python_str(values[i]);
  }
  return key;
}

std::string config_key(const ordered_json& params, const std::vector<std::string>& keys) {
  std::vector<ordered_json> values;
  values.reserve(keys.size());
  for (const auto& k : keys) {
    const auto it = params.find(k);
    if (it == params.end())
      throw std::invalid_argument(fmt::format("config_key: parameter {} missing", json_quoted(k)));
    values.push_back(*it);
  }
  return config_key(values);
}

namespace {

/// numpy's pairwise_sum for doubles (numpy/_core/src/umath/loops_utils.h.src).
double pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double res = 0.;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

}  // namespace

double kt_mean(const std::vector<double>& times_ms) {
  if (times_ms.empty()) return std::numeric_limits<double>::quiet_NaN();
  // np.average -> np.add.reduce over the whole contiguous array (one pairwise sum; checked
  // against numpy 2.4 up to 100001 elements), then / n.
  return pairwise_sum(times_ms.data(), times_ms.size()) / static_cast<double>(times_ms.size());
}

std::string kt_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  auto secs = us / 1000000;
  auto frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  // str(datetime) leaves the fraction out when it is zero.
  return frac ? fmt::format("{}.{:06d}+00:00", buf, frac) : fmt::format("{}+00:00", buf);
}

// ---------------------------------------------------------------------------------------
// Writing

namespace {
/// An unset time is written as Kernel Tuner writes one it did not take: `x or 0`, an int.
ordered_json or_zero(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(0); }
}  // namespace

ordered_json entry_to_json(const KtEntry& e) {
  ordered_json j = ordered_json::object();
  auto& m = j.get_ref<ordered_json::object_t&>();
  for (auto it = e.params.begin(); it != e.params.end(); ++it) m.emplace_back(it.key(), it.value());
  auto put = [&](const char* k, ordered_json v) {
    if (e.params.contains(k))
      throw std::invalid_argument(fmt::format("entry_to_json: parameter {} has the name of "
                                              "one of Kernel Tuner's fields", json_quoted(k)));
    m.emplace_back(k, std::move(v));
  };
  if (e.status == Status::Ok) {
    put("time", e.time_ms);
  } else {
    put("time", kt_error_name(e.status));
  }
  if (e.status == Status::Ok || !e.times_ms.empty()) put("times", e.times_ms);
  if (e.status != Status::Ok) put("__error__", kt_error_name(e.status));
  put("compile_time", or_zero(e.compile_time_ms));
  put("verification_time", or_zero(e.verification_time_ms));
  put("benchmark_time", or_zero(e.benchmark_time_ms));
  if (e.status == Status::Correctness || e.status == Status::Timeout)
    put("cutune_status", status_name(e.status));
  for (auto it = e.extra.begin(); it != e.extra.end(); ++it) {
    if (is_known_entry_field(it.key()) || e.params.contains(it.key()))
      throw std::invalid_argument(fmt::format(
          "entry_to_json: extra field {} has the name of a parameter or of a known field",
          json_quoted(it.key())));
    m.emplace_back(it.key(), it.value());
  }
  put("strategy_time", or_zero(e.strategy_time_ms));
  put("framework_time", or_zero(e.framework_time_ms));
  put("timestamp", e.timestamp);
  return j;
}

std::string format_cache_header(const KtCacheHeader& h) {
  ordered_json j = ordered_json::object();
  if (h.schema_version) j["schema_version"] = *h.schema_version;
  j["device_name"] = h.device_name;
  j["kernel_name"] = h.kernel_name;
  if (!h.problem_size.is_null()) j["problem_size"] = h.problem_size;
  j["tune_params_keys"] = h.tune_params_keys;
  j["tune_params"] = h.tune_params.is_null() ? ordered_json::object() : h.tune_params;
  if (!h.objective.is_null()) j["objective"] = h.objective;
  for (auto it = h.extra.begin(); it != h.extra.end(); ++it)
    if (!j.contains(it.key()) && it.key() != "cache") j[it.key()] = it.value();
  j["cache"] = ordered_json::object();
  std::string text = dump_python_json_indented(j, "");
  text.resize(text.size() - 3);  // Kernel Tuner's [:-3]: all but the last "}\n}"
  return text;
}

namespace {

std::string cache_line(const std::string& key, const KtEntry& e) {
  std::string line = "\n";
  append_python_json_string(line, key);
  line += ": ";
  line += dump_python_json(entry_to_json(e));
  line += ',';
  return line;
}

std::string entry_key(const KtEntry& e) {
  if (!e.key.empty()) return e.key;
  std::vector<ordered_json> values;
  for (auto it = e.params.begin(); it != e.params.end(); ++it) values.push_back(it.value());
  return config_key(values);
}

/// Kernel Tuner compares problem sizes as numpy arrays: 100 and [100] agree.
bool same_problem_size(const ordered_json& a, const ordered_json& b) {
  if (a.is_null() || b.is_null()) return true;  // Kernel Tuner skips the check then
  auto as_list = [](const ordered_json& v) {
    return v.is_array() ? v : ordered_json::array({v});
  };
  return json_equal(as_list(a), as_list(b));
}

bool same_tune_params(const ordered_json& a, const ordered_json& b) {
  if (a.size() != b.size()) return false;
  for (auto it = a.begin(); it != a.end(); ++it) {
    const auto o = b.find(it.key());
    if (o == b.end() || !json_equal(it.value(), *o)) return false;
  }
  return true;
}

void check_same_header(const KtCacheHeader& file, const KtCacheHeader& want,
                       const std::string& path) {
  auto differ = [&](const std::string& field, const std::string& has, const std::string& wants) {
    throw InputError(fmt::format("{}: {}: the file has {}, the problem has {}", path, field, has,
                                 wants));
  };
  if (file.device_name != want.device_name)
    differ("device_name", json_quoted(file.device_name), json_quoted(want.device_name));
  if (file.kernel_name != want.kernel_name)
    differ("kernel_name", json_quoted(file.kernel_name), json_quoted(want.kernel_name));
  if (!same_problem_size(file.problem_size, want.problem_size))
    differ("problem_size", dump_python_json(file.problem_size),
           dump_python_json(want.problem_size));
  // A file written before the field existed has none: taken at its problem_size's word.
  const auto fp = file.extra.find(kProblemField), wp = want.extra.find(kProblemField);
  if (fp != file.extra.end() && wp != want.extra.end() && !json_equal(*fp, *wp))
    differ(kProblemField, dump_python_json(*fp), dump_python_json(*wp));
  if (file.tune_params_keys != want.tune_params_keys)
    differ("tune_params_keys", dump_python_json(file.tune_params_keys),
           dump_python_json(want.tune_params_keys));
  const ordered_json& ft = file.tune_params;
  const ordered_json& wt = want.tune_params.is_null() ? ordered_json::object() : want.tune_params;
  if (!same_tune_params(ft, wt)) {
    for (auto it = wt.begin(); it != wt.end(); ++it) {
      const auto o = ft.find(it.key());
      if (o == ft.end())
        differ(fmt::format("tune_params[{}]", json_quoted(it.key())), "no such parameter",
               dump_python_json(it.value()));
      if (!json_equal(*o, it.value()))
        differ(fmt::format("tune_params[{}]", json_quoted(it.key())), dump_python_json(*o),
               dump_python_json(it.value()));
    }
    for (auto it = ft.begin(); it != ft.end(); ++it)
      if (!wt.contains(it.key()))
        differ(fmt::format("tune_params[{}]", json_quoted(it.key())), dump_python_json(it.value()),
               "no such parameter");
  }
}

bool starts_with_gzip_magic(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

std::string format_cache_line(const KtEntry& entry) { return cache_line(entry_key(entry), entry); }

std::vector<KtEntry> KtCacheWriter::open(const fs::path& path, const KtCacheHeader& header) {
  if (out_.is_open()) out_.close();
  path_ = path;
  header_ = header;
  keys_.clear();
  const std::string name = path.string();

  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists || fs::file_size(path, ec) == 0 || ec) {
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_) throw InputError(fmt::format("{}: cannot create: {}", name, std::strerror(errno)));
    out_ << format_cache_header(header);
    out_.flush();
    if (!out_) throw InputError(fmt::format("{}: cannot write: {}", name, std::strerror(errno)));
    return {};
  }

  if (starts_with_gzip_magic(path))
    throw InputError(fmt::format("{}: a gzip-compressed cache cannot be appended to", name));
  const std::string text = detail::read_text_file(path);
  RawCache raw = parse_raw(text, name);
  const ResumePoint resume = raw.resume;
  KtCache file = build_cache(std::move(raw), name);
  check_same_header(file, header, name);
  if (!resume.field_after_cache.empty())
    throw InputError(fmt::format("{}: {}: a field after \"cache\"; cannot append to this file",
                                 name, resume.field_after_cache));
  header_ = static_cast<const KtCacheHeader&>(file);

  // Cut the closing "}\n}" (or a partial line) and append from the last complete entry.
  fs::resize_file(path, resume.append_offset, ec);
  if (ec) throw InputError(fmt::format("{}: cannot truncate: {}", name, ec.message()));
  out_.open(path, std::ios::binary | std::ios::app);
  if (!out_) throw InputError(fmt::format("{}: cannot open for appending: {}", name, std::strerror(errno)));
  if (!file.entries.empty()) out_ << ',';
  out_.flush();
  if (!out_) throw InputError(fmt::format("{}: cannot write: {}", name, std::strerror(errno)));
  for (const auto& e : file.entries) keys_.insert(e.key);
  return std::move(file.entries);
}

bool KtCacheWriter::append(const KtEntry& entry) {
  if (!out_.is_open()) throw std::logic_error("KtCacheWriter::append: no open cache file");
  std::string key = entry.key.empty() ? config_key(entry.params, header_.tune_params_keys) : entry.key;
  if (keys_.count(key)) return false;
  out_ << cache_line(key, entry);
  out_.flush();
  if (!out_)
    throw std::runtime_error(fmt::format("{}: cannot append: {}", path_.string(), std::strerror(errno)));
  keys_.insert(std::move(key));
  return true;
}

void KtCacheWriter::close() {
  if (!out_.is_open()) return;
  out_.close();
  if (keys_.empty()) return;  // `"cache": {` stays open, as Kernel Tuner leaves it
  std::error_code ec;
  const auto size = fs::file_size(path_, ec);
  if (ec || size == 0) return;
  {
    std::ifstream in(path_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size - 1));
    if (in.get() != ',') return;
  }
  fs::resize_file(path_, size - 1, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot close: {}", path_.string(), ec.message()));
  std::ofstream out(path_, std::ios::binary | std::ios::app);
  out << "}\n}";
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("{}: cannot close: {}", path_.string(), std::strerror(errno)));
}

}  // namespace cutune::db::kt
