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

/// What one recorded configuration returns when it is evaluated again.
struct RecordedResult {
  Observation observation;  ///< valid=false for a recorded failure
  /// Compile + benchmark + verification time, seconds: what evaluating it costs in
  /// simulated time.
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
  RecordedSpace(std::string name, std::vector<Parameter> parameters, std::vector<Entry> entries);

  const std::string& name() const { return name_; }
  /// The parameters, restricted to the recorded configurations (shared: strategies keep a
  /// reference to it while the RecordedSpace may move).
  const Space& space() const { return *space_; }
  const std::vector<Entry>& entries() const { return entries_; }
  /// The recorded result, or nullptr when `config` was not recorded.
  const RecordedResult* find(const Config& config) const;

 private:
  std::string name_;
  std::vector<Entry> entries_;
  std::shared_ptr<const std::map<Config, std::size_t>> index_;
  std::shared_ptr<Space> space_;
};

/// The recording as a prior for tuning the same kernel elsewhere: every recorded
/// configuration with its objective (a recorded failure: none).
Prior prior_from_recording(const RecordedSpace& recorded, PriorOrigin origin);

}  // namespace cutune::search
