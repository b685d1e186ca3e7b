#include "report_json_printer.hpp"

#include "cutune/db/store.hpp"
#include "cutune/model/status.hpp"

namespace cutune::cli {
namespace {

using json = nlohmann::ordered_json;

json workers_json(const std::vector<runner::TuneReport::Worker>& workers) {
  json out = json::array();
  for (const auto& w : workers)
    out.push_back({{"name", w.name},
                   {"evaluations", w.evaluations},
                   {"evaluate_ms", w.evaluate_ms},
                   {"verify_ms", w.verify_ms},
                   {"sampling_ms", w.sampling_ms},
                   {"load_ms", w.load_ms},
                   {"stage_ms", w.stage_ms},
                   {"idle_ms", w.idle_ms},
                   {"restarts", w.restarts},
                   {"lost", w.lost}});
  return out;
}

/// What the run started from: each prior offered, used or not (and why not).
json prior_json(const std::vector<search::PriorUse>& uses) {
  json out = json::array();
  for (const auto& u : uses) out.push_back(prior_use_json(u));
  return out;
}

/// Where the wall time went (TuneReport's breakdown), and the process's time around the tuning.
json time_breakdown_json(const TuneSummary& s) {
  const runner::TuneReport& r = s.report;
  return {{"startup_s", r.startup_s},
          {"gpu_setup_ms", json::parse(r.gpu_setup_ms)},
          {"compile_wait_ms", r.compile_wait_ms},
          {"evaluate_ms", r.evaluate_ms},
          {"verify_ms", r.verify_ms},
          {"sampling_ms", r.sampling_ms},
          {"store_ms", r.store_ms},
          {"search_ms", r.search_ms},
          {"worker_load_ms", r.worker_load_ms},
          {"worker_stage_ms", r.worker_stage_ms},
          {"worker_idle_ms", r.worker_idle_ms},
          {"after_search_ms", r.after_search_ms},
          // Process start to the tuning's start, and to this report.
          {"process_before_tune_s", s.process_before_tune_s},
          {"process_at_report_s", s.process_at_report_s}};
}

json summary_json(const Summary& s) {
  return json{{"samples", s.count},          {"median_ms", s.median}, {"mean_ms", s.mean},
              {"min_ms", s.min},             {"max_ms", s.max},       {"stddev_ms", s.stddev},
              {"ci_low_ms", s.ci_low},       {"ci_high_ms", s.ci_high}, {"ci_coverage", s.ci_coverage},
              {"rel_ci_half_width", s.rel_ci_half_width}};
}

json measured_config_entry(const runner::MeasuredConfig& c) {
  const auto& ev = c.evaluation;
  json j{{"config_key", c.config.key()},
         {"config", c.config.to_json()},
         {"status", status_name(ev.status)},
         {"error", ev.error},
         {"compile_ms", c.compile_ms},
         {"verify_ms", ev.verify_ms}};
  if (!ev.stats) return j;
  j["summary"] = summary_json(ev.stats->summary);
  j["stats"] = db::stats_object(*ev.stats);
  j["samples_ms"] = ev.stats->set.samples_ms;
  j["clocks_mhz"] = ev.stats->set.clocks_mhz;
  if (c.loop_ms > 0) j["loop"] = json{{"ms_per_launch", c.loop_ms}, {"launches", c.loop_launches}};
  return j;
}

}  // namespace

json tune_report_json(const TuneSummary& s) {
  const runner::TuneReport& r = s.report;
  json j{{"device", cutune::to_json(r.device)},
         {"date", r.date},
         {"command", s.command},
         {"kernel", r.kernel},
         {"problem", r.problem_key},
         {"strategy", s.strategy},
         {"seed", s.seed},
         {"run_id", r.run_id},
         {"verification", r.verification},
         {"prior", prior_json(r.prior)},
         {"l2", r.l2_method},
         {"screening_samples_max", s.screening_samples_max},
         {"space_valid", r.space_valid},
         {"configs_tried", r.configs_tried},
         {"configs_resumed", r.configs_resumed},
         {"configs_resumed_other_gpus", r.configs_resumed_other_gpus},
         {"configs_failed", r.configs_failed},
         {"winner", r.winner ? r.winner->to_json() : json(nullptr)},
         {"winner_key", r.winner ? r.winner->key() : std::string()},
         {"winner_ms", r.winner_ms},
         {"default", s.default_key()},
         {"default_ms", r.default_ms},
         // false: the problem names no default and the strategy did not propose it (no baseline)
         {"default_evaluated", r.default_evaluated},
         {"speedup_over_default", s.speedup_over_default()},
         {"objective", r.objective.name()},
         {"objective_higher_is_better", r.objective.higher_is_better},
         {"winner_objective_value", r.winner_objective_value},
         {"verdict", verdict_name(r.verdict)},
         {"finalists", db::finalists_array(r.stored_finalists())},
         {"cost", {{"screening_ms_per_config", r.screening_ms_per_config},
                   {"thorough_ms_per_config", r.thorough_ms_per_config}}},
         {"copy_gbps", r.copy_gbps},
         {"wall_s", r.wall_s},
         {"timed_ms_total", r.timed_ms_total},
         {"compile_workers", r.compile_workers},
         {"compiler", r.compiler},
         {"compiler_reason", r.compiler_reason},
         {"learnt_budget", r.learnt_budget ? json(*r.learnt_budget) : json(nullptr)},
         {"workers", workers_json(r.workers)},
         {"compile_mode", s.compile_mode},
         {"compiled", r.compile.compiled},
         {"cache_hits", r.compile.cache_hits},
         {"shared_compiles", r.compile.shared},
         {"compile_ms_total", r.compile.compile_ms},
         {"gpu_worker_restarts", r.worker_restarts},
         {"timeout_s", r.timeout_s},
         {"compile_ms_median", r.compile_ms_median},
         {"time_breakdown", time_breakdown_json(s)}};
  json fails = json::object();
  for (const auto& [status, n] : r.failures_by_status) fails[status] = n;
  j["failures_by_status"] = fails;
  for (const auto& [name, v] : r.winner_metrics) j[name] = v;
  return j;
}

json measure_json(const runner::MeasureSession& session, const std::string& kernel, const std::string& command,
                  const std::string& date) {
  json configs = json::array();
  for (const auto& c : session.configs) configs.push_back(measured_config_entry(c));
  return {{"device", cutune::to_json(session.device)},
          {"date", date},
          {"command", command},
          {"kernel", kernel},
          {"problem", session.problem_key},
          {"l2", session.l2_method},
          {"verification", session.verification},
          {"compiler", session.compiler},
          {"interleaved", session.configs.size() > 1},
          {"timer_floor_ms", session.timer_floor_ms},
          {"configs", configs}};
}

json prior_use_json(const search::PriorUse& u) {
  // A recording made by Kernel Tuner names no CUDA function: null says "not recorded", where an
  // empty string read as a function named "".
  const json function = u.origin.kernel.function.empty() ? json(nullptr) : json(u.origin.kernel.function);
  return {{"kernel", u.origin.kernel.name}, {"function", function},
          {"device", u.origin.device},       {"problem", u.origin.problem},
          {"used", u.used},            {"reason", u.reason},        {"measurements", u.measurements},
          {"valid_here", u.proposable}};
}

}  // namespace cutune::cli
