#include "result_rows.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"

namespace cutune::db {

using ordered_json = nlohmann::ordered_json;

namespace {

/// Text as SQLite keeps it: what is not valid UTF-8 (a lone surrogate or raw bytes an imported
/// file carried) replaced by U+FFFD, where dump() would throw.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::optional<double> number(const ordered_json& obj, const char* field) {
  const auto it = obj.find(field);
  if (it != obj.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}
double number_or(const ordered_json& obj, const char* field, double fallback = 0.0) {
  return number(obj, field).value_or(fallback);
}
std::size_t count_or_0(const ordered_json& obj, const char* field) {
  const auto it = obj.find(field);
  return it != obj.end() && it->is_number_unsigned() ? it->get<std::size_t>() : 0;
}
std::string text_or(const ordered_json& obj, const char* field) {
  const auto it = obj.find(field);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::vector<double> numbers(const ordered_json& obj, const char* field) {
  std::vector<double> out;
  const auto it = obj.find(field);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it) out.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  return out;
}

/// The statistics of a stats object (stats_object's keys); `median_ms` is kept beside it.
ResultStats stats_of(const ordered_json& j, double median_ms) {
  ResultStats s;
  s.level = parse_level(text_or(j, "level")).value_or(MeasurementLevel::Screening);
  Summary& sum = s.summary;
  sum.count = count_or_0(j, "samples");
  sum.median = median_ms;
  sum.mean = number_or(j, "mean_ms");
  sum.min = number_or(j, "min_ms");
  sum.max = number_or(j, "max_ms");
  sum.stddev = number_or(j, "stddev_ms");
  sum.rel_stddev = sum.mean != 0.0 ? sum.stddev / sum.mean : 0.0;  // as measure::summarize
  sum.ci_low = number_or(j, "ci_low_ms");
  sum.ci_high = number_or(j, "ci_high_ms");
  sum.ci_coverage = number_or(j, "ci_coverage");
  sum.rel_ci_half_width = number_or(j, "rel_ci_half_width");
  s.stop_reason = parse_stop_reason(text_or(j, "stop_reason")).value_or(StopReason::none);
  s.measure_ms = number_or(j, "measure_ms");
  s.l2 = parse_l2_method(text_or(j, "l2")).value_or(L2Method{});
  s.timer = parse_sample_timer(text_or(j, "timer")).value_or(SampleTimer::Events);
  s.timer_fallbacks = count_or_0(j, "timer_fallbacks");
  s.sm_clock_mhz = number(j, "sm_clock_mhz");
  s.sm_clock_min_mhz = number(j, "sm_clock_min_mhz");
  s.discarded_ms = numbers(j, "discarded_ms");
  s.back_offs = count_or_0(j, "back_offs");
  s.block_timeouts = count_or_0(j, "block_timeouts");
  s.nvml_sm_clock_mhz = number(j, "nvml_sm_clock_mhz");
  s.temperature_c = number(j, "temperature_c");
  s.power_w = number(j, "power_w");
  s.energy_mj_per_launch = number(j, "energy_mj_per_launch");
  return s;
}

// JSON has no NaN or infinity (nlohmann writes null): an observed error metric can be either
// (a kernel that wrote NaN), so they are kept as Python's json module spells them, as text.
ordered_json observed_object(const ObservedValues& values) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, v] : values) {
    if (std::isnan(v)) j[name] = "NaN";
    else if (std::isinf(v)) j[name] = v > 0 ? "Infinity" : "-Infinity";
    else j[name] = v;
  }
  return j;
}

ObservedValues observed_of(const ordered_json& j) {
  ObservedValues out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const ordered_json& v = it.value();
    if (v.is_number()) out.emplace_back(it.key(), v.get<double>());
    else if (v == "NaN") out.emplace_back(it.key(), std::numeric_limits<double>::quiet_NaN());
    else if (v == "Infinity" || v == "-Infinity")
      out.emplace_back(it.key(), (v == "Infinity" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity());
  }
  return out;
}

ordered_json parse_object(const std::string& text) {
  auto j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : ordered_json::object();
}

}  // namespace

nlohmann::ordered_json stats_object(const ResultStats& s) {
  const Summary& summary = s.summary;
  ordered_json j;
  j["level"] = level_name(s.level);
  j["samples"] = summary.count;
  j["mean_ms"] = summary.mean;
  j["min_ms"] = summary.min;
  j["max_ms"] = summary.max;
  j["stddev_ms"] = summary.stddev;
  j["ci_low_ms"] = summary.ci_low;
  j["ci_high_ms"] = summary.ci_high;
  j["ci_coverage"] = summary.ci_coverage;
  j["rel_ci_half_width"] = summary.rel_ci_half_width;
  j["stop_reason"] = std::string(to_string(s.stop_reason));
  j["measure_ms"] = s.measure_ms;
  j["l2"] = to_string(s.l2);
  j["timer"] = timer_name(s.timer);
  if (s.timer_fallbacks) j["timer_fallbacks"] = s.timer_fallbacks;
  auto opt = [&](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  opt("sm_clock_mhz", s.sm_clock_mhz);
  opt("sm_clock_min_mhz", s.sm_clock_min_mhz);
  j["discarded_ms"] = s.discarded_ms;
  j["back_offs"] = s.back_offs;
  if (s.block_timeouts) j["block_timeouts"] = s.block_timeouts;
  opt("nvml_sm_clock_mhz", s.nvml_sm_clock_mhz);
  opt("temperature_c", s.temperature_c);
  opt("power_w", s.power_w);
  opt("energy_mj_per_launch", s.energy_mj_per_launch);
  return j;
}

nlohmann::ordered_json stats_object(const MeasuredStats& stats) { return stats_object(ResultStats::of(stats)); }

std::string stats_json(const MeasuredStats& stats) { return stats_object(stats).dump(); }

nlohmann::ordered_json finalists_array(const std::vector<Finalist>& finalists) {
  ordered_json arr = ordered_json::array();
  for (const auto& f : finalists) {
    ordered_json j;
    j["config_key"] = f.config.key();
    j["config"] = f.config.to_json();
    j["is_default"] = f.is_default;
    j["tied_with_winner"] = f.tied;
    j["screening_median_ms"] = f.screening_ms;
    j["median_ms"] = f.stats.summary.median;
    if (f.objective_value) j["objective_value"] = *f.objective_value;
    j["stats"] = stats_object(f.stats);
    j["samples_ms"] = f.samples_ms;
    arr.push_back(std::move(j));
  }
  return arr;
}

namespace detail {

std::string config_row(const ResultConfig& config) { return dump(config.to_json()); }

ResultConfig config_of_row(std::string key, const std::string& json, const std::string& where) {
  const auto j = ordered_json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw InputError(fmt::format("{}: config_json is not a JSON object", where));
  return {std::move(key), parameter_values(j)};
}

std::string stats_row(const Result& r) {
  if (const SimulatedOrigin* s = r.simulated()) {
    // fmt's shortest form, as simulations always wrote it ("2" where nlohmann writes "2.0").
    if (!s->benchmark_s) return fmt::format(R"({{"simulated_cost_s":{}}})", s->cost_s);
    return fmt::format(R"({{"simulated_cost_s":{},"simulated_benchmark_s":{}}})", s->cost_s, *s->benchmark_s);
  }
  ordered_json j = ordered_json::object();
  if (const ImportedOrigin* i = r.imported()) {
    if (i->mean_ms) j["mean_ms"] = *i->mean_ms;
    if (i->ci_low_ms) j["ci_low_ms"] = *i->ci_low_ms;
    if (i->ci_high_ms) j["ci_high_ms"] = *i->ci_high_ms;
    j["imported"] = true;
    if (!i->file_fields.empty()) j["kt"] = i->file_fields;
    return dump(j);
  }
  const MeasuredOrigin& m = std::get<MeasuredOrigin>(r.origin);
  if (m.stats) j = stats_object(*m.stats);
  // Loading the module is part of an evaluation's time that no other column holds: `cutune
  // report` stacks it beside compile, verification and the samples.
  if (m.load_ms) j["load_ms"] = *m.load_ms;
  // What the configuration costs the GPU, in the same column: rows written before it was
  // kept read back without it ("-" in query and the report), and no migration is needed.
  if (m.resources) j["resources"] = to_json(*m.resources);
  // Observers' values, in the same column for the same reason.
  if (!m.observed.empty()) j["observed"] = observed_object(m.observed);
  return dump(j);
}

void read_stats_row(Result& r, const std::string& text) {
  const ordered_json j = parse_object(text);
  if (const auto it = j.find("imported"); it != j.end() && it->is_boolean() && it->get<bool>()) {
    ImportedOrigin i;
    i.mean_ms = number(j, "mean_ms");
    i.ci_low_ms = number(j, "ci_low_ms");
    i.ci_high_ms = number(j, "ci_high_ms");
    if (const auto kt = j.find("kt"); kt != j.end() && kt->is_object()) i.file_fields = *kt;
    r.origin = std::move(i);
    return;
  }
  if (const auto cost = number(j, "simulated_cost_s")) {
    r.origin = SimulatedOrigin{*cost, number(j, "simulated_benchmark_s")};
    return;
  }
  MeasuredOrigin m;
  m.load_ms = number(j, "load_ms");
  const auto resources = j.find("resources");
  if (resources != j.end()) m.resources = kernel_resources_of(*resources);
  const auto observed = j.find("observed");
  if (observed != j.end()) m.observed = observed_of(*observed);
  // Anything but the load time, the resources and the observed values is the statistics (rows
  // of older versions hold fewer of them).
  const std::size_t others = (m.load_ms ? 1u : 0u) + (resources != j.end() ? 1u : 0u) + (observed != j.end() ? 1u : 0u);
  if (j.size() > others) m.stats = stats_of(j, r.median_ms);
  r.origin = std::move(m);
}

std::optional<KernelResources> resources_of_stats_row(const std::string& text) {
  const auto j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find("resources");
  return it == j.end() ? std::nullopt : kernel_resources_of(*it);
}

std::string finalists_row(const std::vector<Finalist>& finalists) { return dump(finalists_array(finalists)); }

std::vector<Finalist> finalists_of_row(const std::string& text) {
  std::vector<Finalist> out;
  const auto arr = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!arr.is_array()) return out;
  for (const auto& j : arr) {
    if (!j.is_object()) continue;
    Finalist f;
    const auto config = j.find("config");
    f.config = ResultConfig(text_or(j, "config_key"),
                            config != j.end() ? parameter_values(*config) : ParameterValues{});
    const auto flag = [&](const char* field) {
      const auto it = j.find(field);
      return it != j.end() && it->is_boolean() && it->get<bool>();
    };
    f.is_default = flag("is_default");
    f.tied = flag("tied_with_winner");
    f.screening_ms = number_or(j, "screening_median_ms");
    f.objective_value = number(j, "objective_value");
    const auto stats = j.find("stats");
    f.stats = stats_of(stats != j.end() && stats->is_object() ? *stats : ordered_json::object(),
                       number_or(j, "median_ms"));
    f.samples_ms = numbers(j, "samples_ms");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace detail

}  // namespace cutune::db
