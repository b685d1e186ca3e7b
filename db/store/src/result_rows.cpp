#include <algorithm>
#include <nlohmann/json.hpp>

#include "cutune/db/store.hpp"

namespace cutune::db {

nlohmann::ordered_json stats_object(const MeasuredStats& stats) {
  const Summary& summary = stats.summary;
  const SampleSet& set = stats.set;
  nlohmann::ordered_json j;
  j["level"] = level_name(stats.level);
  j["samples"] = summary.count;
  j["mean_ms"] = summary.mean;
  j["min_ms"] = summary.min;
  j["max_ms"] = summary.max;
  j["stddev_ms"] = summary.stddev;
  j["ci_low_ms"] = summary.ci_low;
  j["ci_high_ms"] = summary.ci_high;
  j["ci_coverage"] = summary.ci_coverage;
  j["rel_ci_half_width"] = summary.rel_ci_half_width;
  j["stop_reason"] = std::string(to_string(set.reason));
  j["measure_ms"] = set.wall_ms;
  j["l2"] = to_string(stats.l2);
  j["timer"] = timer_name(set.timer);
  if (set.timer_fallbacks) j["timer_fallbacks"] = set.timer_fallbacks;
  if (!set.clocks_mhz.empty()) {
    std::vector<double> c = set.clocks_mhz;
    std::sort(c.begin(), c.end());
    const std::size_t n = c.size();
    j["sm_clock_mhz"] = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    j["sm_clock_min_mhz"] = c.front();
  }
  j["discarded_ms"] = set.discarded_ms;
  j["back_offs"] = set.back_offs;
  if (set.block_timeouts) j["block_timeouts"] = set.block_timeouts;
  auto opt = [&](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  opt("nvml_sm_clock_mhz", stats.nvml_sm_clock_mhz);
  opt("temperature_c", stats.temperature_c);
  opt("power_w", stats.power_w);
  opt("energy_mj_per_launch", stats.energy_mj_per_launch);
  return j;
}

std::string stats_json(const MeasuredStats& stats) { return stats_object(stats).dump(); }

}  // namespace cutune::db
