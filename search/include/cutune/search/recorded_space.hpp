#pragma once
// A recorded space: every configuration of a tuning problem that was measured, with its
// result and what measuring it cost. Built from Kernel Tuner cache files or T4
// results by cutune::replay; model types only here. A recording holds only configurations
// that passed the restrictions, so its Space accepts exactly the recorded configurations.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cutune/model/space.hpp"
#include "cutune/search/strategy.hpp"

namespace cutune::search {

/// The unit of a recorded space's costs, and so of its simulated time axis and time budgets.
/// Seconds: the recorded compile + benchmark + verification time. Evaluations: the recording
/// has no usable costs (objective values only, e.g. one timing sample per configuration), so
/// every evaluation costs 1 and a time budget is an evaluation count.
enum class CostUnit { Seconds, Evaluations };

/// "seconds" or "evaluations", as the command line and JSON name the unit.
const char* cost_unit_name(CostUnit unit);

/// What one recorded configuration returns when it is evaluated again.
struct RecordedResult {
  Observation observation;  ///< valid=false for a recorded failure
  /// Compile + benchmark + verification time, seconds: what evaluating it costs in
  /// simulated time. In a space whose cost_unit() is Evaluations, 1 (set by RecordedSpace).
  double cost_s = 0.0;
  /// Its parts as recorded, seconds (cost_s is their sum): what a simulated run stores as
  /// the configuration's compile, verification and benchmark time.
  double compile_s = 0.0, verify_s = 0.0, benchmark_s = 0.0;
};

class RecordedSpace {
 public:
  struct Entry {
    Config config;
    RecordedResult result;
  };

  /// `parameters` in key order; `entries` must be distinct configurations of them (else
  /// InputError naming `name` and the key). Entries keep their order.
  ///
  /// Costs: a cost is recorded when it is finite and above 0. When fewer than half of the
  /// valid entries have one (a recording of objective values only: Kernel Tuner caches
  /// without compile/benchmark/verification times, or with them all 0; KTT results without
  /// overheads), the space is scored in evaluations: every entry's cost_s becomes 1 (its
  /// parts stay as recorded). Otherwise it stays in seconds and an entry without a recorded
  /// cost gets the median recorded cost of its kind (valid or failed; of all entries when
  /// its kind has none): measuring it took time that the file does not say, and a cost of 0
  /// would make it free to a strategy, which no real evaluation is. Both thresholds keep a
  /// space with a few gaps on its real time axis, and never let a handful of costs stand
  /// for a recording that has none.
  RecordedSpace(std::string name, std::vector<Parameter> parameters, std::vector<Entry> entries);

  const std::string& name() const { return name_; }
  /// The parameters, restricted to the recorded configurations (shared: strategies keep a
  /// reference to it while the RecordedSpace may move).
  const Space& space() const { return *space_; }
  /// The recording names the default configuration a tuning evaluated first (a cache's
  /// cutune_default, with the parameters' defaults set to it): a replay evaluates it first too
  /// (loop_first).
  void set_default_named(bool named) { space_->set_default_named(named); }
  const std::vector<Entry>& entries() const { return entries_; }
  CostUnit cost_unit() const { return cost_unit_; }
  /// Entries whose cost was not recorded and was filled in (Seconds; see the constructor).
  std::size_t imputed_costs() const { return imputed_costs_; }
  /// The recorded result, or nullptr when `config` was not recorded.
  const RecordedResult* find(const Config& config) const;

 private:
  std::string name_;
  std::vector<Entry> entries_;
  CostUnit cost_unit_ = CostUnit::Seconds;
  std::size_t imputed_costs_ = 0;
  std::shared_ptr<const std::map<Config, std::size_t>> index_;
  std::shared_ptr<Space> space_;
};

/// The recording as a prior for tuning the same kernel elsewhere: every recorded
/// configuration with its objective (a recorded failure: none).
Prior prior_from_recording(const RecordedSpace& recorded, PriorOrigin origin);

}  // namespace cutune::search
