#include "cutune/measure/sampler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace cutune::measure {

Sampler::Sampler(std::size_t l2_bytes, int sm_count, double rated_clock_mhz, SamplerSettings settings)
    : settings_(settings), rated_clock_mhz_(rated_clock_mhz) {
  if (settings_.flush_l2 && l2_bytes > 0) flush_.emplace(l2_bytes, sm_count, settings_.flush_l2_multiple);
  if (settings_.timer == SampleTimer::Activity) {
    std::string why;
    activity_ = cuda::ActivityTrace::try_get(&why);
    if (!activity_) throw std::runtime_error("activity timing asked for, but " + why);
  }
  timer_ = activity_ ? SampleTimer::Activity : SampleTimer::Events;
}

namespace {
// The measurement's own kernels (gpu_helpers.cpp), never part of a sample.
bool is_helper(std::string_view name) {
  return name == "cutune_block" || name == "cutune_probe" || name == "cutune_flush";
}
}  // namespace

void Sampler::warm_up(const LaunchSequence& seq) {
  for (int i = 0; i < settings_.warmup_launches; ++i) launch(seq);
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());
}

Sampler::Timed Sampler::sample(const LaunchSequence& seq) {
  return sample_call([&] { launch(seq); });
}

Sampler::Timed Sampler::sample_call(const std::function<void()>& enqueue) {
  if (before_sample_) before_sample_();
  if (flush_) flush_->flush();
  // Everything after the blocking kernel is queued before the GPU reaches it, so the
  // interval between the events holds the launches only, not the host's launch latency.
  helpers_.block();
  struct Release {  // a refused launch must not leave the blocking kernel spinning
    GpuHelpers& h;
    ~Release() { h.release(); }
  } release{helpers_};
  // Work queued from here on starts after this instant (the blocking kernel holds it).
  const std::uint64_t since_ns = activity_ ? activity_->now_ns() : 0;
  start_.record();
  enqueue();
  stop_.record();
  if (settings_.probe_clock) helpers_.probe_clock();
  helpers_.release();
  CUTUNE_CU(CU_FN(cuCtxSynchronize)());  // also surfaces an asynchronous launch failure
  Timed t;
  t.ms = stop_.elapsed_ms_since(start_);
  if (activity_) {
    // From the first piece of work's start to the last one's end: a sequence of launches
    // (or a library call's kernels) counts with the gaps between them, like the events.
    std::uint64_t first = UINT64_MAX, last = 0;
    for (const auto& a : activity_->collect(since_ns)) {
      if (is_helper(a.name) || a.start_ns == 0) continue;
      first = std::min(first, a.start_ns);
      last = std::max(last, a.end_ns);
    }
    if (last > first)
      t.ms = static_cast<double>(last - first) * 1e-6;
    else
      t.timer_fell_back = true;
  }
  t.clock_mhz = settings_.probe_clock ? helpers_.probed_clock_mhz() : 0.0;
  t.block_timed_out = helpers_.block_timed_out();
  return t;
}

double Sampler::timer_floor_ms(std::size_t samples) {
  std::vector<double> ms;
  for (std::size_t i = 0; i < std::max<std::size_t>(samples, 1); ++i) {
    ms.push_back(sample_call([] {}).ms);  // activity-timed: no work, so the events time it
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::vector<SampleSet> Sampler::measure_interleaved(
    const std::vector<std::vector<LaunchSequence>>& candidates, std::vector<NoiseCriterion>& criteria) {
  if (candidates.size() != criteria.size() || candidates.empty())
    throw std::invalid_argument("measure_interleaved: one criterion per candidate, at least one");
  std::vector<SampleSet> out(candidates.size());
  std::vector<Clock::time_point> started(candidates.size());
  std::vector<double> spent_s(candidates.size(), 0.0);
  ThrottleSettings ts = settings_.throttle;
  ts.reference_clock_mhz = rated_clock_mhz_;
  ThrottleFilter filter(ts);
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const auto t0 = Clock::now();
    warm_up(candidates[c].front());
    spent_s[c] += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  for (std::size_t round = 0;; ++round) {
    bool any = false;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (criteria[c].done()) continue;
      any = true;
      const auto t0 = Clock::now();
      // Each candidate's time cap counts only its own samples, as if measured alone.
      take(candidates[c][round % candidates[c].size()], criteria[c], filter, out[c]);
      spent_s[c] += std::chrono::duration<double>(Clock::now() - t0).count();
      criteria[c].set_elapsed_s(spent_s[c]);
    }
    if (!any) break;
  }
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    out[c].reason = criteria[c].reason();
    out[c].wall_ms = spent_s[c] * 1e3;
  }
  return out;
}

}  // namespace cutune::measure
