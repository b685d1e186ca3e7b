#include "cutune/runner/worker_protocol.hpp"

#include <cstdlib>
#include <filesystem>

#include "cutune/process/subprocess.hpp"

namespace cutune::measure {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ThrottleSettings, min_clock_fraction, reference_clock_mhz, back_off_after,
                                   back_off_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SamplerSettings, flush_l2, flush_l2_multiple, warmup_launches, probe_clock, timer,
                                   throttle)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ScreeningSettings, min_samples, max_samples, slower_factor, max_rel_noise,
                                   time_cap_s, confidence)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StoppingSettings, min_samples, max_samples, max_rel_noise, time_cap_s,
                                   stabilisation_window, stabilisation_tolerance, confidence)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Summary, count, median, mean, min, max, stddev, rel_stddev, ci_low, ci_high,
                                   ci_coverage, rel_ci_half_width)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SampleSet, samples_ms, clocks_mhz, discarded_ms, back_offs, block_timeouts,
                                   reason, wall_ms, timer, timer_fallbacks)
}  // namespace cutune::measure

namespace cutune::runner::protocol {
namespace {

template <class T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
std::optional<T> get_optional(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

nlohmann::json to_json(const jit::CompileRequest& r) {
  return {{"source", r.source}, {"source_name", r.source_name}, {"kernel_names", r.kernel_names},
          {"options", r.options}, {"arch", r.arch}, {"headers", r.headers}};
}

jit::CompileRequest compile_request_from_json(const nlohmann::json& j) {
  jit::CompileRequest r;
  r.source = j.at("source").get<std::string>();
  r.source_name = j.at("source_name").get<std::string>();
  r.kernel_names = j.at("kernel_names").get<std::vector<std::string>>();
  r.options = j.at("options").get<std::vector<std::string>>();
  r.arch = j.at("arch").get<std::string>();
  r.headers = j.at("headers").get<std::vector<std::pair<std::string, std::string>>>();
  return r;
}

nlohmann::json to_json(const jit::CompileResult& r) {
  return {{"ok", r.ok},           {"log", r.log},
          {"error", r.error},     {"compile_ms", r.compile_ms},
          {"full_options", r.full_options}, {"lowered_names", r.lowered_names}};
}

jit::CompileResult compile_result_from_json(const nlohmann::json& j) {
  jit::CompileResult r;
  r.ok = j.at("ok").get<bool>();
  r.log = j.at("log").get<std::string>();
  r.error = j.at("error").get<std::string>();
  r.compile_ms = j.at("compile_ms").get<double>();
  r.full_options = j.at("full_options").get<std::vector<std::string>>();
  r.lowered_names = j.at("lowered_names").get<std::vector<std::string>>();
  return r;
}

nlohmann::json to_json(const MeasureOptions& o) {
  return {{"cold_l2", o.cold_l2},
          {"rotate_when_fits", o.rotate_when_fits},
          {"sampler", o.sampler},
          {"screening", o.screening},
          {"thorough", o.thorough},
          {"finalists", o.finalists},
          {"energy_every_config", o.energy_every_config},
          {"energy_window_s", o.energy_window_s},
          {"verify", o.verify}};
}

MeasureOptions measure_options_from_json(const nlohmann::json& j) {
  MeasureOptions o;
  o.cold_l2 = j.at("cold_l2").get<bool>();
  o.rotate_when_fits = j.at("rotate_when_fits").get<bool>();
  o.sampler = j.at("sampler").get<measure::SamplerSettings>();
  o.screening = j.at("screening").get<measure::ScreeningSettings>();
  o.thorough = j.at("thorough").get<measure::StoppingSettings>();
  o.finalists = j.at("finalists").get<std::size_t>();
  o.energy_every_config = j.at("energy_every_config").get<bool>();
  o.energy_window_s = j.at("energy_window_s").get<double>();
  o.verify = j.value("verify", std::vector<std::string>{});
  return o;
}

nlohmann::json to_json(const GpuEvaluation& e) {
  nlohmann::json j{{"status", status_name(e.status)},
                   {"error", e.error},
                   {"verify_ms", e.verify_ms},
                   {"load_ms", e.load_ms},
                   {"stage_ms", e.stage_ms},
                   {"idle_before_ms", e.idle_before_ms},
                   {"context_lost", e.context_lost}};
  if (e.stats) {
    const MeasuredStats& s = *e.stats;
    nlohmann::json st{{"level", s.level}, {"set", s.set}, {"summary", s.summary}, {"l2_method", s.l2_method}};
    put_optional(st, "temperature_c", s.temperature_c);
    put_optional(st, "power_w", s.power_w);
    put_optional(st, "energy_mj_per_launch", s.energy_mj_per_launch);
    put_optional(st, "nvml_sm_clock_mhz", s.nvml_sm_clock_mhz);
    j["stats"] = std::move(st);
  }
  return j;
}

GpuEvaluation evaluation_from_json(const nlohmann::json& j) {
  GpuEvaluation e;
  const auto status = parse_status(j.at("status").get<std::string>());
  if (!status) throw std::runtime_error("worker: unknown status " + j.at("status").dump());
  e.status = *status;
  e.error = j.at("error").get<std::string>();
  e.verify_ms = j.at("verify_ms").get<double>();
  e.load_ms = j.value("load_ms", 0.0);
  e.stage_ms = j.value("stage_ms", 0.0);
  e.idle_before_ms = j.value("idle_before_ms", 0.0);
  e.context_lost = j.at("context_lost").get<bool>();
  if (j.contains("stats")) {
    const auto& st = j["stats"];
    MeasuredStats s;
    s.level = st.at("level").get<std::string>();
    s.set = st.at("set").get<measure::SampleSet>();
    s.summary = st.at("summary").get<measure::Summary>();
    s.l2_method = st.at("l2_method").get<std::string>();
    s.temperature_c = get_optional<double>(st, "temperature_c");
    s.power_w = get_optional<double>(st, "power_w");
    s.energy_mj_per_launch = get_optional<double>(st, "energy_mj_per_launch");
    s.nvml_sm_clock_mhz = get_optional<double>(st, "nvml_sm_clock_mhz");
    e.stats = std::move(s);
  }
  return e;
}

std::string worker_executable() {
  if (const char* env = std::getenv("CUTUNE_WORKER"); env && *env) return env;
  const std::filesystem::path self = process::self_executable();
  if (!self.empty()) {
    const auto beside = self.parent_path() / "cutune-worker";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  return CUTUNE_WORKER_BUILD_PATH;
}

}  // namespace cutune::runner::protocol
