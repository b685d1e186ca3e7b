#include "cutune/worker/protocol.hpp"

#include <fmt/format.h>

#include <cstring>

#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>

namespace cutune::worker {
namespace {

using json = nlohmann::json;

/// A field that cannot be read: its path inside the header ("measure.sampler.timer") and why.
struct FieldError {
  std::string path, reason;
};

/// `Is<T> S`: S is T or const T (one fields() list serves reading and writing).
/// `key` in front of the path of a field inside it: "measure" + "sampler.timer", "evaluations" + "[1].x".
std::string join_path(std::string_view key, const std::string& inner) {
  if (inner.empty()) return std::string(key);
  return std::string(key) + (inner.front() == '[' ? "" : ".") + inner;
}

template <class S, class T>
concept Is = std::same_as<std::remove_const_t<S>, T>;

// ---- the fields of each plain struct, in one place for both directions ----

template <Is<measure::ThrottleSettings> S, class F>
void fields(S& s, F&& f) {
  f("min_clock_fraction", s.min_clock_fraction);
  f("reference_clock_mhz", s.reference_clock_mhz);
  f("back_off_after", s.back_off_after);
  f("back_off_s", s.back_off_s);
}

template <Is<measure::SamplerSettings> S, class F>
void fields(S& s, F&& f) {
  f("flush_l2", s.flush_l2);
  f("flush_l2_multiple", s.flush_l2_multiple);
  f("warmup_launches", s.warmup_launches);
  f("probe_clock", s.probe_clock);
  f("timer", s.timer);
  f("throttle", s.throttle);
}

template <Is<measure::ScreeningSettings> S, class F>
void fields(S& s, F&& f) {
  f("min_samples", s.min_samples);
  f("max_samples", s.max_samples);
  f("slower_factor", s.slower_factor);
  f("max_rel_noise", s.max_rel_noise);
  f("time_cap_s", s.time_cap_s);
  f("confidence", s.confidence);
}

template <Is<measure::StoppingSettings> S, class F>
void fields(S& s, F&& f) {
  f("min_samples", s.min_samples);
  f("max_samples", s.max_samples);
  f("max_rel_noise", s.max_rel_noise);
  f("time_cap_s", s.time_cap_s);
  f("stabilisation_window", s.stabilisation_window);
  f("stabilisation_tolerance", s.stabilisation_tolerance);
  f("confidence", s.confidence);
}

template <Is<MeasureOptions> S, class F>
void fields(S& s, F&& f) {
  f("cold_l2", s.cold_l2);
  f("rotate_when_fits", s.rotate_when_fits);
  f("sampler", s.sampler);
  f("screening", s.screening);
  f("thorough", s.thorough);
  f("finalists", s.finalists);
  f("energy_every_config", s.energy_every_config);
  f("energy_window_s", s.energy_window_s);
  f("verify", s.verify);
  f("verifier", s.verifier);
}

template <Is<Summary> S, class F>
void fields(S& s, F&& f) {
  f("count", s.count);
  f("median", s.median);
  f("mean", s.mean);
  f("min", s.min);
  f("max", s.max);
  f("stddev", s.stddev);
  f("rel_stddev", s.rel_stddev);
  f("ci_low", s.ci_low);
  f("ci_high", s.ci_high);
  f("ci_coverage", s.ci_coverage);
  f("rel_ci_half_width", s.rel_ci_half_width);
}

template <Is<SampleSet> S, class F>
void fields(S& s, F&& f) {
  f("samples_ms", s.samples_ms);
  f("clocks_mhz", s.clocks_mhz);
  f("discarded_ms", s.discarded_ms);
  f("back_offs", s.back_offs);
  f("block_timeouts", s.block_timeouts);
  f("reason", s.reason);
  f("wall_ms", s.wall_ms);
  f("timer", s.timer);
  f("timer_fallbacks", s.timer_fallbacks);
}

template <Is<L2Method> S, class F>
void fields(S& s, F&& f) {
  f("kind", s.kind);
  f("argument_sets", s.argument_sets);
}

template <Is<MeasuredStats> S, class F>
void fields(S& s, F&& f) {
  f("level", s.level);
  f("set", s.set);
  f("summary", s.summary);
  f("l2", s.l2);
  f("temperature_c", s.temperature_c);
  f("power_w", s.power_w);
  f("energy_mj_per_launch", s.energy_mj_per_launch);
  f("nvml_sm_clock_mhz", s.nvml_sm_clock_mhz);
}

template <Is<KernelResources> S, class F>
void fields(S& s, F&& f) {
  f("registers", s.registers);
  f("local_bytes", s.local_bytes);
  f("static_shared_bytes", s.static_shared_bytes);
  f("dynamic_shared_bytes", s.dynamic_shared_bytes);
  f("const_bytes", s.const_bytes);
  f("max_threads_per_block", s.max_threads_per_block);
  f("block_threads", s.block_threads);
  f("active_blocks_per_sm", s.active_blocks_per_sm);
  f("occupancy", s.occupancy);
}

template <Is<GpuEvaluation> S, class F>
void fields(S& s, F&& f) {
  f("status", s.status);
  f("error", s.error);
  f("verify_ms", s.verify_ms);
  f("load_ms", s.load_ms);
  f("stage_ms", s.stage_ms);
  f("idle_before_ms", s.idle_before_ms);
  f("stats", s.stats);
  f("resources", s.resources);
  f("context_lost", s.context_lost);
  f("defined_expected", s.defined_expected);
  f("observed", s.observed);
}

template <Is<jit::CompileRequest> S, class F>
void fields(S& s, F&& f) {
  f("source", s.source);
  f("source_name", s.source_name);
  f("kernel_names", s.kernel_names);
  f("options", s.options);
  f("arch", s.arch);
  f("headers", s.headers);
  f("compiler", s.compiler);
  f("source_dir", s.source_dir);
}

/// Everything but the cubin, which travels as a frame.
template <Is<jit::CompileResult> S, class F>
void fields(S& s, F&& f) {
  f("ok", s.ok);
  f("lowered_names", s.lowered_names);
  f("log", s.log);
  f("error", s.error);
  f("compile_ms", s.compile_ms);
  f("full_options", s.full_options);
  f("from_cache", s.from_cache);
}

template <Is<Setup> S, class F>
void fields(S& s, F&& f) {
  f("problem_json", s.problem_json);
  f("problem", s.problem);
  f("device", s.device);
  f("data_seed", s.data_seed);
  f("measure", s.measure);
}

template <Is<DeviceIdentity> S, class F>
void fields(S& s, F&& f) {
  f("name", s.name);
  f("cc_major", s.cc_major);
  f("cc_minor", s.cc_minor);
  f("sm_count", s.sm_count);
  f("memory_bytes", s.memory_bytes);
  f("sm_clock_khz", s.sm_clock_khz);
  f("memory_clock_khz", s.memory_clock_khz);
  f("memory_bus_bits", s.memory_bus_bits);
  f("l2_bytes", s.l2_bytes);
  f("driver_version", s.driver_version);
  f("driver_release", s.driver_release);
  f("nvrtc_version", s.nvrtc_version);
  f("uuid", s.uuid);
}

template <Is<Identified> S, class F>
void fields(S& s, F&& f) {
  f("device", s.device);
}

template <Is<SetTimeout> S, class F>
void fields(S& s, F&& f) {
  f("ms", s.ms);
}

template <Is<Ready> S, class F>
void fields(S& s, F&& f) {
  f("verification", s.verification);
  f("l2", s.l2);
  f("total_argument_bytes", s.total_argument_bytes);
  f("setup_ms", s.setup_ms);
}

template <Is<WorkerError> S, class F>
void fields(S& s, F&& f) {
  f("input_error", s.input_error);
  f("no_driver", s.no_driver);
  f("message", s.message);
}

template <Is<BackToBackTimed> S, class F>
void fields(S& s, F&& f) {
  f("ms_per_launch", s.ms_per_launch);
}

template <Is<CopyBandwidth> S, class F>
void fields(S& s, F&& f) {
  f("bytes", s.bytes);
}

template <Is<CopyBandwidthMeasured> S, class F>
void fields(S& s, F&& f) {
  f("gbps", s.gbps);
}

template <Is<Shutdown> S, class F>
void fields(S&, F&&) {}

/// A struct whose fields are listed above.
struct AnyField {
  template <class T>
  void operator()(const char*, T&) const {}
};
template <class S>
concept HasFields = requires(S& s) { fields(s, AnyField{}); };

// ---- every value conversion, declared first so that the generic ones below find them ----

template <class T>
  requires(std::is_integral_v<T>)
json to_j(T v);
json to_j(double v);
json to_j(const std::string& v);
json to_j(StopReason v);
json to_j(SampleTimer v);
json to_j(MeasurementLevel v);
json to_j(Status v);
json to_j(Compiler v);
json to_j(L2Method::Kind v);
json to_j(const VerificationPlan& v);
json to_j(const Config& v);
template <class T>
json to_j(const std::optional<T>& v);
template <class T>
json to_j(const std::vector<T>& v);
template <class A, class B>
json to_j(const std::pair<A, B>& v);
template <HasFields S>
json to_j(const S& s);

template <class T>
  requires(std::is_integral_v<T>)
void from_j(const json& j, T& v);
void from_j(const json& j, double& v);
void from_j(const json& j, std::string& v);
void from_j(const json& j, StopReason& v);
void from_j(const json& j, SampleTimer& v);
void from_j(const json& j, MeasurementLevel& v);
void from_j(const json& j, Status& v);
void from_j(const json& j, Compiler& v);
void from_j(const json& j, L2Method::Kind& v);
void from_j(const json& j, VerificationPlan& v);
void from_j(const json& j, Config& v);
template <class T>
void from_j(const json& j, std::optional<T>& v);
template <class T>
void from_j(const json& j, std::vector<T>& v);
template <class A, class B>
void from_j(const json& j, std::pair<A, B>& v);
template <HasFields S>
void from_j(const json& j, S& s);

// ---- the conversions ----

template <class T>
  requires(std::is_integral_v<T>)
json to_j(T v) {
  return v;
}
template <class T>
  requires(std::is_integral_v<T>)
void from_j(const json& j, T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) throw FieldError{"", "not a boolean: " + j.dump()};
    v = j.get<bool>();
  } else {
    // An integer within the field's range, never a float or a negative count cast silently.
    if (!j.is_number_integer()) throw FieldError{"", "not an integer: " + j.dump()};
    if (j.is_number_unsigned()) {
      const auto x = j.get<std::uint64_t>();
      if (x > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) throw FieldError{"", "out of range: " + j.dump()};
      v = static_cast<T>(x);
    } else {
      const auto x = j.get<std::int64_t>();
      if (x < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          (x > 0 && static_cast<std::uint64_t>(x) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
        throw FieldError{"", "out of range: " + j.dump()};
      v = static_cast<T>(x);
    }
  }
}

// JSON has no NaN or infinity (nlohmann writes them as null): they travel as strings.
json to_j(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}
void from_j(const json& j, double& v) {
  if (j.is_number()) {
    v = j.get<double>();
  } else if (j == "NaN") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (j == "Infinity" || j == "-Infinity") {
    v = (j == "Infinity" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
  } else {
    throw FieldError{"", "not a number: " + j.dump()};
  }
}

json to_j(const std::string& v) { return v; }
void from_j(const json& j, std::string& v) {
  if (!j.is_string()) throw FieldError{"", "not a string: " + j.dump()};
  v = j.get<std::string>();
}

/// An enum by its name, strictly: an unknown name is an error, never a default value.
template <class E, class Parse>
void enum_from_j(const json& j, E& v, Parse parse, const char* what) {
  if (!j.is_string()) throw FieldError{"", fmt::format("not a {} name: {}", what, j.dump())};
  const auto parsed = parse(j.get<std::string>());
  if (!parsed) throw FieldError{"", fmt::format("unknown {} {}", what, j.dump())};
  v = *parsed;
}

json to_j(StopReason v) { return std::string(to_string(v)); }
void from_j(const json& j, StopReason& v) { enum_from_j(j, v, parse_stop_reason, "stop reason"); }
json to_j(SampleTimer v) { return timer_name(v); }
void from_j(const json& j, SampleTimer& v) { enum_from_j(j, v, parse_sample_timer, "timer"); }
json to_j(MeasurementLevel v) { return level_name(v); }
void from_j(const json& j, MeasurementLevel& v) { enum_from_j(j, v, parse_level, "measurement level"); }
json to_j(Status v) { return status_name(v); }
void from_j(const json& j, Status& v) { enum_from_j(j, v, parse_status, "status"); }
json to_j(Compiler v) { return compiler_name(v); }
void from_j(const json& j, Compiler& v) { enum_from_j(j, v, parse_compiler, "compiler"); }

const char* l2_kind_name(L2Method::Kind k) {
  switch (k) {
    case L2Method::Kind::Flush: return "flush";
    case L2Method::Kind::Rotate: return "rotate";
    case L2Method::Kind::Warm: return "warm";
  }
  return "unknown";
}
std::optional<L2Method::Kind> parse_l2_kind(std::string_view name) {
  for (auto k : {L2Method::Kind::Flush, L2Method::Kind::Rotate, L2Method::Kind::Warm})
    if (name == l2_kind_name(k)) return k;
  return std::nullopt;
}
json to_j(L2Method::Kind v) { return l2_kind_name(v); }
void from_j(const json& j, L2Method::Kind& v) { enum_from_j(j, v, parse_l2_kind, "L2 method"); }

json to_j(const VerificationPlan& v) {
  json a = json::array();
  for (VerifyMode m : v.modes) a.push_back(verify_mode_name(m));
  return a;
}
void from_j(const json& j, VerificationPlan& v) {
  if (!j.is_array()) throw FieldError{"", "not an array: " + j.dump()};
  v.modes.clear();
  for (const json& m : j) {
    VerifyMode mode{};
    enum_from_j(m, mode, [](const std::string& s) { return parse_verify_mode(s); }, "verification mode");
    v.modes.push_back(mode);
  }
}

json to_j(const Config& v) { return to_j(v.index); }
void from_j(const json& j, Config& v) { from_j(j, v.index); }

template <class T>
json to_j(const std::optional<T>& v) {
  return v ? to_j(*v) : json(nullptr);
}
template <class T>
void from_j(const json& j, std::optional<T>& v) {
  if (j.is_null()) {
    v.reset();
    return;
  }
  T x{};
  from_j(j, x);
  v = std::move(x);
}

template <class T>
json to_j(const std::vector<T>& v) {
  json a = json::array();
  for (const T& x : v) a.push_back(to_j(x));
  return a;
}
template <class T>
void from_j(const json& j, std::vector<T>& v) {
  if (!j.is_array()) throw FieldError{"", "not an array: " + j.dump()};
  v.clear();
  v.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    T x{};
    try {
      from_j(j[i], x);
    } catch (FieldError& e) {
      e.path = fmt::format("[{}]{}{}", i, e.path.empty() ? "" : ".", e.path);
      throw;
    }
    v.push_back(std::move(x));
  }
}

template <class A, class B>
json to_j(const std::pair<A, B>& v) {
  return json::array({to_j(v.first), to_j(v.second)});
}
template <class A, class B>
void from_j(const json& j, std::pair<A, B>& v) {
  if (!j.is_array() || j.size() != 2) throw FieldError{"", "not a pair: " + j.dump()};
  from_j(j[0], v.first);
  from_j(j[1], v.second);
}

template <HasFields S>
json to_j(const S& s) {
  json j = json::object();
  fields(s, [&](const char* key, const auto& v) { j[key] = to_j(v); });
  return j;
}
template <HasFields S>
void from_j(const json& j, S& s) {
  if (!j.is_object()) throw FieldError{"", "not an object: " + j.dump()};
  fields(s, [&](const char* key, auto& v) {
    const auto it = j.find(key);
    if (it == j.end()) throw FieldError{key, "missing"};
    try {
      from_j(*it, v);
    } catch (FieldError& e) {
      e.path = join_path(key, e.path);
      throw;
    }
  });
}

// ---- messages ----

/// The header of a message: its fields, its type and how many frames follow.
template <class M>
Envelope envelope_of(const M& m, json header, std::vector<process::Frame> frames = {}) {
  header["type"] = M::kType;
  header["frames"] = frames.size();
  (void)m;
  return Envelope{std::move(header), std::move(frames)};
}

template <class M>
Envelope plain_envelope(const M& m) {
  return envelope_of(m, to_j(m));
}

/// `e`'s fields read as M by `read`, after checking its type and frame count; every error
/// as a ProtocolError naming the message and the field.
template <class M, class Read>
M read_message_as(const Envelope& e, Read read) {
  const std::string type = message_type(e);
  if (type != M::kType)
    throw ProtocolError(fmt::format("worker protocol: a '{}' message where '{}' was expected", type, M::kType));
  const auto frames = e.header.find("frames");
  if (frames == e.header.end() || !frames->is_number_integer() || frames->get<std::int64_t>() < 0 ||
      frames->get<std::size_t>() != e.frames.size())
    throw ProtocolError(fmt::format("worker protocol: a malformed '{}' message: it announces {} frames, {} came",
                                    M::kType, frames == e.header.end() ? "no" : frames->dump(), e.frames.size()));
  try {
    M m{};
    read(m);
    return m;
  } catch (const FieldError& x) {
    throw ProtocolError(fmt::format("worker protocol: a malformed '{}' message: field '{}': {}", M::kType, x.path,
                                    x.reason));
  }
}

template <class M>
M plain_decode(const Envelope& e) {
  return read_message_as<M>(e, [&](M& m) { from_j(e.header, m); });
}

json candidate_header(const Candidate& c, std::vector<process::Frame>& frames) {
  json j{{"config", to_j(c.config)}, {"lowered_names", to_j(c.lowered_names)}, {"cubin", frames.size()}};
  frames.emplace_back(c.cubin.begin(), c.cubin.end());
  return j;
}

/// The frame index `key` of `j`, checked against the frames that came.
const process::Frame& frame_at(const json& j, const char* key, const std::vector<process::Frame>& frames) {
  std::size_t i = 0;
  const auto it = j.find(key);
  if (it == j.end()) throw FieldError{key, "missing"};
  try {
    from_j(*it, i);
  } catch (FieldError& e) {
    e.path = key;
    throw;
  }
  if (i >= frames.size()) throw FieldError{key, fmt::format("frame {} of {}", i, frames.size())};
  return frames[i];
}

Candidate candidate_of(const json& j, const std::vector<process::Frame>& frames) {
  if (!j.is_object()) throw FieldError{"", "not an object: " + j.dump()};
  Candidate c;
  for (const char* key : {"config", "lowered_names"})
    if (!j.contains(key)) throw FieldError{key, "missing"};
  try {
    from_j(j.at("config"), c.config);
  } catch (FieldError& e) {
    e.path = "config";
    throw;
  }
  try {
    from_j(j.at("lowered_names"), c.lowered_names);
  } catch (FieldError& e) {
    e.path = join_path("lowered_names", e.path);
    throw;
  }
  const process::Frame& cubin = frame_at(j, "cubin", frames);
  c.cubin.assign(cubin.begin(), cubin.end());
  return c;
}

/// candidate_of for the field `key` of `j`, its errors under that name.
Candidate candidate_field(const json& j, const char* key, const std::vector<process::Frame>& frames) {
  const auto it = j.find(key);
  if (it == j.end()) throw FieldError{key, "missing"};
  try {
    return candidate_of(*it, frames);
  } catch (FieldError& e) {
    e.path = join_path(key, e.path);
    throw;
  }
}

template <class T>
void field(const json& j, const char* key, T& v) {
  const auto it = j.find(key);
  if (it == j.end()) throw FieldError{key, "missing"};
  try {
    from_j(*it, v);
  } catch (FieldError& e) {
    e.path = join_path(key, e.path);
    throw;
  }
}

constexpr std::size_t kMaxFrames = 1 << 16;

std::size_t frame_count(const json& header) {
  const auto it = header.find("frames");
  if (it == header.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0 ||
      it->get<std::size_t>() > kMaxFrames)
    throw ProtocolError(fmt::format("worker protocol: a '{}' header without a valid frame count: {}",
                                    header.value("type", std::string("?")), header.dump()));
  return it->get<std::size_t>();
}

}  // namespace

Envelope encode(const Compile& m) { return envelope_of(m, json{{"request", to_j(m.request)}}); }
template <>
Compile decode<Compile>(const Envelope& e) {
  return read_message_as<Compile>(e, [&](Compile& m) { field(e.header, "request", m.request); });
}

Envelope encode(const Compiled& m) {
  json h{{"result", to_j(m.result)}, {"cubin", std::size_t{0}}};
  return envelope_of(m, std::move(h), {process::Frame(m.result.cubin.begin(), m.result.cubin.end())});
}
template <>
Compiled decode<Compiled>(const Envelope& e) {
  return read_message_as<Compiled>(e, [&](Compiled& m) {
    field(e.header, "result", m.result);
    const process::Frame& cubin = frame_at(e.header, "cubin", e.frames);
    m.result.cubin.assign(cubin.begin(), cubin.end());
  });
}

Envelope encode(const Setup& m) { return plain_envelope(m); }
template <>
Setup decode<Setup>(const Envelope& e) {
  return plain_decode<Setup>(e);
}
Envelope encode(const Identified& m) { return plain_envelope(m); }
template <>
Identified decode<Identified>(const Envelope& e) {
  return plain_decode<Identified>(e);
}
Envelope encode(const SetTimeout& m) { return plain_envelope(m); }
template <>
SetTimeout decode<SetTimeout>(const Envelope& e) {
  return plain_decode<SetTimeout>(e);
}
Envelope encode(const AdoptReference& m) {
  std::vector<process::Frame> frames;
  json h{{"candidate", candidate_header(m.candidate, frames)}};
  return envelope_of(m, std::move(h), std::move(frames));
}
template <>
AdoptReference decode<AdoptReference>(const Envelope& e) {
  return read_message_as<AdoptReference>(
      e, [&](AdoptReference& m) { m.candidate = candidate_field(e.header, "candidate", e.frames); });
}
Envelope encode(const Ready& m) { return plain_envelope(m); }
template <>
Ready decode<Ready>(const Envelope& e) {
  return plain_decode<Ready>(e);
}
Envelope encode(const WorkerError& m) { return plain_envelope(m); }
template <>
WorkerError decode<WorkerError>(const Envelope& e) {
  return plain_decode<WorkerError>(e);
}

Envelope encode(const Evaluate& m) {
  std::vector<process::Frame> frames;
  json h{{"candidate", candidate_header(m.candidate, frames)}, {"best_ms", to_j(m.best_ms)}, {"thorough", m.thorough}};
  return envelope_of(m, std::move(h), std::move(frames));
}
template <>
Evaluate decode<Evaluate>(const Envelope& e) {
  return read_message_as<Evaluate>(e, [&](Evaluate& m) {
    m.candidate = candidate_field(e.header, "candidate", e.frames);
    field(e.header, "best_ms", m.best_ms);
    field(e.header, "thorough", m.thorough);
  });
}

Envelope encode(const Evaluated& m) { return envelope_of(m, json{{"evaluation", to_j(m.evaluation)}}); }
template <>
Evaluated decode<Evaluated>(const Envelope& e) {
  return read_message_as<Evaluated>(e, [&](Evaluated& m) { field(e.header, "evaluation", m.evaluation); });
}

Envelope encode(const Remeasure& m) {
  std::vector<process::Frame> frames;
  json candidates = json::array();
  for (const Candidate& c : m.candidates) candidates.push_back(candidate_header(c, frames));
  return envelope_of(m, json{{"candidates", std::move(candidates)}}, std::move(frames));
}
template <>
Remeasure decode<Remeasure>(const Envelope& e) {
  return read_message_as<Remeasure>(e, [&](Remeasure& m) {
    const auto it = e.header.find("candidates");
    if (it == e.header.end()) throw FieldError{"candidates", "missing"};
    if (!it->is_array()) throw FieldError{"candidates", "not an array: " + it->dump()};
    for (std::size_t i = 0; i < it->size(); ++i) {
      try {
        m.candidates.push_back(candidate_of((*it)[i], e.frames));
      } catch (FieldError& x) {
        x.path = join_path(fmt::format("candidates[{}]", i), x.path);
        throw;
      }
    }
  });
}

Envelope encode(const Remeasured& m) { return envelope_of(m, json{{"evaluations", to_j(m.evaluations)}}); }
template <>
Remeasured decode<Remeasured>(const Envelope& e) {
  return read_message_as<Remeasured>(e, [&](Remeasured& m) { field(e.header, "evaluations", m.evaluations); });
}

Envelope encode(const BackToBack& m) {
  std::vector<process::Frame> frames;
  json h{{"candidate", candidate_header(m.candidate, frames)}, {"launches", m.launches}};
  return envelope_of(m, std::move(h), std::move(frames));
}
template <>
BackToBack decode<BackToBack>(const Envelope& e) {
  return read_message_as<BackToBack>(e, [&](BackToBack& m) {
    m.candidate = candidate_field(e.header, "candidate", e.frames);
    field(e.header, "launches", m.launches);
  });
}

Envelope encode(const BackToBackTimed& m) { return plain_envelope(m); }
template <>
BackToBackTimed decode<BackToBackTimed>(const Envelope& e) {
  return plain_decode<BackToBackTimed>(e);
}
Envelope encode(const CopyBandwidth& m) { return plain_envelope(m); }
template <>
CopyBandwidth decode<CopyBandwidth>(const Envelope& e) {
  return plain_decode<CopyBandwidth>(e);
}
Envelope encode(const CopyBandwidthMeasured& m) { return plain_envelope(m); }
template <>
CopyBandwidthMeasured decode<CopyBandwidthMeasured>(const Envelope& e) {
  return plain_decode<CopyBandwidthMeasured>(e);
}
Envelope encode(const RunOnce& m) {
  std::vector<process::Frame> frames;
  json h{{"candidate", candidate_header(m.candidate, frames)}};
  return envelope_of(m, std::move(h), std::move(frames));
}
template <>
RunOnce decode<RunOnce>(const Envelope& e) {
  return read_message_as<RunOnce>(e, [&](RunOnce& m) { m.candidate = candidate_field(e.header, "candidate", e.frames); });
}

// The arguments' bytes travel as frames, never inside the JSON; the header gives each one's
// frame and size, so that a reply cut short is told from a short argument.
Envelope encode(const RanOnce& m) {
  std::vector<process::Frame> frames;
  json args = json::array();
  for (const std::vector<char>& a : m.arguments) {
    args.push_back(json{{"frame", frames.size()}, {"bytes", a.size()}});
    frames.emplace_back(a.begin(), a.end());
  }
  json h{{"status", to_j(m.status)}, {"error", m.error}, {"context_lost", m.context_lost},
         {"arguments", std::move(args)}};
  return envelope_of(m, std::move(h), std::move(frames));
}
template <>
RanOnce decode<RanOnce>(const Envelope& e) {
  return read_message_as<RanOnce>(e, [&](RanOnce& m) {
    field(e.header, "status", m.status);
    field(e.header, "error", m.error);
    field(e.header, "context_lost", m.context_lost);
    const auto it = e.header.find("arguments");
    if (it == e.header.end()) throw FieldError{"arguments", "missing"};
    if (!it->is_array()) throw FieldError{"arguments", "not an array: " + it->dump()};
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string path = fmt::format("arguments[{}]", i);
      const json& a = (*it)[i];
      if (!a.is_object()) throw FieldError{path, "not an object: " + a.dump()};
      std::size_t bytes = 0;
      try {
        field(a, "bytes", bytes);
      } catch (FieldError& x) {
        x.path = join_path(path, x.path);
        throw;
      }
      const process::Frame* frame = nullptr;
      try {
        frame = &frame_at(a, "frame", e.frames);
      } catch (FieldError& x) {
        x.path = join_path(path, x.path);
        throw;
      }
      if (frame->size() != bytes)
        throw FieldError{path, fmt::format("a frame of {} bytes where {} were announced", frame->size(), bytes)};
      m.arguments.emplace_back(frame->begin(), frame->end());
    }
  });
}

Envelope encode(const Shutdown& m) { return plain_envelope(m); }
template <>
Shutdown decode<Shutdown>(const Envelope& e) {
  return plain_decode<Shutdown>(e);
}

std::string message_type(const Envelope& e) {
  const auto it = e.header.find("type");
  if (!e.header.is_object() || it == e.header.end() || !it->is_string())
    throw ProtocolError("worker protocol: a header without a message type: " + e.header.dump());
  return it->get<std::string>();
}

nlohmann::json parse_header(const process::Frame& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    throw ProtocolError(fmt::format("worker protocol: a header that is not JSON: {:.200}", text));
  if (!j.is_object()) throw ProtocolError(fmt::format("worker protocol: a header that is not an object: {:.200}", text));
  return j;
}

std::vector<char> to_bytes(const Envelope& e) {
  const std::string header = e.header.dump();
  // Sized once and filled: two inserts per frame into a growing vector made g++ 12 (-O2) warn of
  // a write past its first 8-byte allocation (-Wstringop-overflow), a false positive; one
  // allocation of the known total is also all the frames need.
  std::size_t total = sizeof(std::uint64_t) + header.size();
  for (const process::Frame& f : e.frames) total += sizeof(std::uint64_t) + f.size();
  std::vector<char> out(total);
  char* at = out.data();
  auto put = [&](const char* data, std::uint64_t n) {
    std::memcpy(at, &n, sizeof n);
    at += sizeof n;
    if (n > 0) std::memcpy(at, data, n);
    at += n;
  };
  put(header.data(), header.size());
  for (const process::Frame& f : e.frames) put(f.data(), f.size());
  return out;
}

Envelope from_bytes(const char* data, std::size_t size) {
  std::size_t at = 0;
  auto take = [&]() -> process::Frame {
    std::uint64_t n = 0;
    if (size - at < sizeof n) throw ProtocolError("worker protocol: a buffer that ends inside a frame length");
    std::memcpy(&n, data + at, sizeof n);
    at += sizeof n;
    if (size - at < n) throw ProtocolError("worker protocol: a buffer that ends inside a frame");
    process::Frame f(data + at, data + at + n);
    at += n;
    return f;
  };
  Envelope e{parse_header(take()), {}};
  const std::size_t n = frame_count(e.header);
  for (std::size_t i = 0; i < n; ++i) e.frames.push_back(take());
  if (at != size) throw ProtocolError("worker protocol: a buffer with bytes after its last frame");
  return e;
}

bool write_message(int fd, const Envelope& e) {
  if (!process::write_frame(fd, e.header.dump())) return false;
  for (const process::Frame& f : e.frames)
    if (!process::write_frame(fd, f)) return false;
  return true;
}

namespace {

/// The rest of a message after its header frame, each frame read by `next` (nullopt: gone).
template <class Next>
std::optional<Envelope> rest_of(const process::Frame& header, Next next) {
  Envelope e{parse_header(header), {}};
  const std::size_t n = frame_count(e.header);
  for (std::size_t i = 0; i < n; ++i) {
    auto f = next();
    if (!f) return std::nullopt;
    e.frames.push_back(std::move(*f));
  }
  return e;
}

/// Milliseconds left until `deadline` (none: no limit), never negative.
std::optional<std::chrono::milliseconds> left(std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (!deadline) return std::nullopt;
  return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                    *deadline - std::chrono::steady_clock::now()));
}

std::optional<std::chrono::steady_clock::time_point> deadline_of(std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) return std::nullopt;
  return std::chrono::steady_clock::now() + *timeout;
}

}  // namespace

std::optional<Envelope> read_message(int fd, std::optional<std::chrono::milliseconds> timeout, bool* timed_out) {
  const auto deadline = deadline_of(timeout);
  auto header = process::read_frame(fd, timeout, timed_out);
  if (!header) return std::nullopt;
  return rest_of(*header, [&] { return process::read_frame(fd, left(deadline), timed_out); });
}

bool send(process::Subprocess& child, const Envelope& e) {
  if (!child.send(e.header.dump())) return false;
  for (const process::Frame& f : e.frames)
    if (!child.send(f)) return false;
  return true;
}

std::optional<Envelope> receive(process::Subprocess& child, std::optional<std::chrono::milliseconds> timeout) {
  const auto deadline = deadline_of(timeout);
  auto header = child.receive(timeout);
  if (!header) return std::nullopt;
  return rest_of(*header, [&] { return child.receive(left(deadline)); });
}

}  // namespace cutune::worker
