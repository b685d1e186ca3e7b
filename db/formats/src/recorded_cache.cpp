#include "cutune/formats/recorded_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <optional>

#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/ktt.hpp"
#include "cutune/formats/python_json.hpp"
#include "cutune/formats/t4.hpp"
#include "text_file.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::replay {
namespace {

using nlohmann::ordered_json;

Value value_of(const ordered_json& j, const std::string& where) {
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (j.is_array()) {
    ValueList list;
    for (const auto& x : j) list.push_back(value_of(x, where));
    return Value(std::move(list));
  }
  throw InputError(fmt::format("{}: a parameter value must be a number, string, bool or list, got {}", where,
                               j.dump()));
}

// Kernel Tuner's rule (autotuning_methodology does the same): throughput objectives are
// maximised, times and anything else minimised.
bool maximised(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* m : {"score", "gflop/s", "gflops", "gb/s", "tflop/s"})
    if (name.find(m) != std::string::npos) return true;
  return false;
}

std::string stem_of(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  for (const char* ext : {".json.gz", ".json"})
    if (name.size() > std::string(ext).size() && name.ends_with(ext)) return name.substr(0, name.size() - std::string(ext).size());
  return name;
}

search::RecordedSpace build(const std::string& name, const std::vector<std::string>& keys,
                            std::vector<ValueList> values, const std::vector<db::kt::KtEntry>& entries,
                            const std::string& objective, bool runtimes_for_benchmark,
                            const std::optional<Config>& default_config = std::nullopt) {
  std::vector<Parameter> params;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (values[i].empty()) throw InputError(fmt::format("{}: tune_params[\"{}\"] has no values", name, keys[i]));
    // The default a tuning evaluates first: the file's (kDefaultField), else the first listed.
    Value def = default_config ? values[i].at(default_config->index.at(i)) : values[i].front();
    params.push_back(Parameter{keys[i], std::move(values[i]), std::move(def)});
  }
  const bool maximise = maximised(objective);
  std::vector<search::RecordedSpace::Entry> out;
  bool any_valid = false;
  for (const auto& e : entries) {
    const std::string where = fmt::format("{}: cache[\"{}\"]", name, e.key);
    search::RecordedSpace::Entry r;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!e.params.contains(params[i].name))
        throw InputError(fmt::format("{}: parameter '{}' is missing", where, params[i].name));
      const Value v = value_of(e.params.at(params[i].name), where);
      auto it = std::find(params[i].values.begin(), params[i].values.end(), v);
      if (it == params[i].values.end())
        throw InputError(fmt::format("{}: {} = {} is not one of tune_params", where, params[i].name, v.repr()));
      r.config.index.push_back(static_cast<std::uint32_t>(it - params[i].values.begin()));
    }
    double value = std::nan("");
    if (e.status == Status::Ok) {
      if (objective == "time") value = e.time_ms;
      else if (e.extra.contains(objective) && e.extra.at(objective).is_number()) value = e.extra.at(objective).get<double>();
    }
    r.result.observation.valid = std::isfinite(value);
    r.result.observation.objective = r.result.observation.valid ? (maximise ? -value : value) : 0.0;
    any_valid = any_valid || r.result.observation.valid;
    // T4 files from Kernel Tuner have no "benchmark" time: the timed runs stand in for it. A
    // cache without one has no costs at all (objective values only): its costs stay 0 and
    // RecordedSpace scores it in evaluations, rather than on the kernels' runtimes alone.
    const double benchmark_ms =
        e.benchmark_time_ms ? *e.benchmark_time_ms
        : runtimes_for_benchmark ? std::accumulate(e.times_ms.begin(), e.times_ms.end(), 0.0)
                                 : 0.0;
    r.result.compile_s = e.compile_time_ms.value_or(0.0) / 1e3;
    r.result.verify_s = e.verification_time_ms.value_or(0.0) / 1e3;
    r.result.benchmark_s = benchmark_ms / 1e3;
    r.result.cost_s = (e.compile_time_ms.value_or(0.0) + benchmark_ms + e.verification_time_ms.value_or(0.0)) / 1e3;
    out.push_back(std::move(r));
  }
  if (!any_valid)
    throw InputError(fmt::format("{}: no configuration has a valid '{}'", name, objective));
  return search::RecordedSpace(name, std::move(params), std::move(out));
}

// The configuration a kDefaultField names: every parameter once, each value one of its list.
Config default_of(const ordered_json& j, const std::vector<std::string>& keys, const std::vector<ValueList>& values,
                  const std::string& name) {
  const std::string where = fmt::format("{}: {}", name, db::kt::kDefaultField);
  if (!j.is_object()) throw InputError(fmt::format("{}: expected an object of parameter values", where));
  Config c;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto v = j.find(keys[i]);
    if (v == j.end()) throw InputError(fmt::format("{}: parameter '{}' is missing", where, keys[i]));
    const Value value = value_of(*v, where);
    const auto at = std::find(values[i].begin(), values[i].end(), value);
    if (at == values[i].end())
      throw InputError(fmt::format("{}: {} = {} is not one of tune_params", where, keys[i], value.repr()));
    c.index.push_back(static_cast<std::uint32_t>(at - values[i].begin()));
  }
  if (j.size() != keys.size())
    throw InputError(fmt::format("{}: names a parameter that is not in tune_params_keys", where));
  return c;
}

}  // namespace

search::RecordedSpace recorded_space_from_cache(const db::kt::KtCache& cache, const std::string& name) {
  std::vector<ValueList> values;
  for (const auto& k : cache.tune_params_keys) {
    if (!cache.tune_params.contains(k) || !cache.tune_params.at(k).is_array())
      throw InputError(fmt::format("{}: tune_params has no list for \"{}\"", name, k));
    ValueList list;
    for (const auto& v : cache.tune_params.at(k)) list.push_back(value_of(v, fmt::format("{}: tune_params[\"{}\"]", name, k)));
    values.push_back(std::move(list));
  }
  const auto objectives = cache.objectives();
  std::optional<Config> def;
  if (const auto it = cache.extra.find(db::kt::kDefaultField); it != cache.extra.end())
    def = default_of(*it, cache.tune_params_keys, values, name);
  search::RecordedSpace recorded = build(name, cache.tune_params_keys, std::move(values), cache.entries,
                                         objectives.empty() ? "time" : objectives.front(),
                                         /*runtimes_for_benchmark=*/false, def);
  recorded.set_default_named(def.has_value());
  return recorded;
}

namespace {

// T4 and KTT have no tune_params: the values seen, numbers ascending (neighbours in the
// value order are neighbours for the strategies), anything else in first-seen order.
std::vector<ValueList> values_seen(const std::vector<std::string>& names, const std::vector<db::kt::KtEntry>& entries,
                                   const std::string& name) {
  std::vector<ValueList> values(names.size());
  for (const auto& e : entries)
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!e.params.contains(names[i])) continue;
      Value v = value_of(e.params.at(names[i]), name);
      if (std::find(values[i].begin(), values[i].end(), v) == values[i].end()) values[i].push_back(std::move(v));
    }
  for (auto& list : values)
    if (std::all_of(list.begin(), list.end(), [](const Value& v) { return v.is_number(); }))
      std::sort(list.begin(), list.end(), [](const Value& a, const Value& b) { return a.to_double() < b.to_double(); });
  return values;
}

}  // namespace

search::RecordedSpace load_recorded_space(const std::filesystem::path& path, RecordingOrigin* origin) {
  const std::string name = stem_of(path);
  // KTT's results are told apart by their top level ("Metadata" and "Results"); then a
  // cache file holds "cache", T4 results "results": try the cache reader first.
  bool is_ktt = false;
  std::string text;
  try {
    text = db::detail::read_text_file(path);
    // Parsed only when both names occur: a large cache is not parsed twice.
    is_ktt = text.find("\"Metadata\"") != std::string::npos && text.find("\"Results\"") != std::string::npos &&
             db::ktt::is_ktt_results(db::parse_python_json(text, path.string()));
  } catch (const InputError&) {
    // Unreadable, or not JSON (an open cache): the readers below say why.
  }
  if (is_ktt) {
    const db::ktt::KttResults k = db::ktt::parse_ktt(text, path.string());
    if (origin) *origin = RecordingOrigin{k.device, k.kernel_name, ""};
    return build(name, k.param_names, values_seen(k.param_names, k.entries, name), k.entries, "time",
                 /*runtimes_for_benchmark=*/false);
  }
  db::kt::T4Results r;
  try {
    const db::kt::KtCache cache = db::kt::read_cache(path);
    if (origin)
      *origin = RecordingOrigin{cache.device_name, cache.kernel_name,
                                cache.problem_size.is_null() ? std::string() : cache.problem_size.dump(),
                                db::kt::kernel_function(cache), variables_key(db::kt::problem_field(cache, name))};
    return recorded_space_from_cache(cache, name);
  } catch (const InputError& as_cache) {
    try {
      r = db::kt::read_t4(path);
    } catch (const InputError& as_t4) {
      throw InputError(fmt::format("{}: neither a Kernel Tuner cache file ({}), T4 results ({}) nor KTT results (no "
                                   "\"Metadata\" and \"Results\")",
                                   path.string(), as_cache.what(), as_t4.what()));
    }
  }
  if (origin) *origin = RecordingOrigin{r.metadata.device, "", ""};
  return build(name, r.param_names, values_seen(r.param_names, r.entries, name), r.entries,
               r.objectives.empty() ? "time" : r.objectives.front(), /*runtimes_for_benchmark=*/true);
}

}  // namespace cutune::replay
