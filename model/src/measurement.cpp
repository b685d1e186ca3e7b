#include "cutune/model/measurement.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cutune {

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::none: return "none";
    case StopReason::converged: return "converged";
    case StopReason::noise_stabilised: return "noise stabilised";
    case StopReason::time_cap: return "time cap";
    case StopReason::sample_cap: return "sample cap";
    case StopReason::clearly_slower: return "clearly slower";
  }
  return "unknown";
}

std::optional<StopReason> parse_stop_reason(std::string_view name) {
  for (StopReason r : {StopReason::none, StopReason::converged, StopReason::noise_stabilised, StopReason::time_cap,
                       StopReason::sample_cap, StopReason::clearly_slower})
    if (name == to_string(r)) return r;
  return std::nullopt;
}

const char* timer_name(SampleTimer t) {
  switch (t) {
    case SampleTimer::Events: return "events";
    case SampleTimer::Activity: return "activity";
  }
  return "unknown";
}

std::optional<SampleTimer> parse_sample_timer(std::string_view name) {
  for (SampleTimer t : {SampleTimer::Events, SampleTimer::Activity})
    if (name == timer_name(t)) return t;
  return std::nullopt;
}

const char* level_name(MeasurementLevel l) {
  switch (l) {
    case MeasurementLevel::Screening: return "screening";
    case MeasurementLevel::Thorough: return "thorough";
  }
  return "unknown";
}

std::optional<MeasurementLevel> parse_level(std::string_view name) {
  for (MeasurementLevel l : {MeasurementLevel::Screening, MeasurementLevel::Thorough})
    if (name == level_name(l)) return l;
  return std::nullopt;
}

std::string to_string(const L2Method& m) {
  switch (m.kind) {
    case L2Method::Kind::Flush: return "flush";
    case L2Method::Kind::Rotate: return fmt::format("rotate {}", m.argument_sets);
    case L2Method::Kind::Warm: return "warm";
  }
  return "unknown";
}

std::optional<L2Method> parse_l2_method(std::string_view name) {
  if (name == "flush") return L2Method{L2Method::Kind::Flush, 1};
  if (name == "warm") return L2Method{L2Method::Kind::Warm, 1};
  constexpr std::string_view rotate = "rotate ";
  if (name.substr(0, rotate.size()) != rotate) return std::nullopt;
  const std::string_view n = name.substr(rotate.size());
  std::size_t sets = 0;
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), sets);
  if (ec != std::errc() || end != n.data() + n.size()) return std::nullopt;
  return L2Method{L2Method::Kind::Rotate, sets};
}

const std::vector<double>& GpuEvaluation::samples_ms() const {
  static const std::vector<double> none;
  return stats ? stats->set.samples_ms : none;
}

}  // namespace cutune
