#pragma once
// The tuning loop (ARCHITECTURE.md data flow): the strategy asks, the compile stage
// compiles ahead, the GPU stage verifies and times, every result is committed to the store
// as it is made, and the strategy is told. Work already stored is skipped (resume).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/measure/benchmark.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::runner {

struct TuneOptions {
  std::string problem;                  ///< "n=1000" overrides of problem variables
  std::string strategy = "brute_force";
  std::optional<std::uint64_t> budget;  ///< unique configurations to evaluate
  std::uint64_t seed = 1;               ///< strategy seed (stored with the run)
  std::uint64_t data_seed = 42;         ///< input data seed
  std::filesystem::path db;
  int device = 0;
  measure::TimingSettings timing;
  std::string command;                  ///< the command line, stored with the run
  std::ostream* log = nullptr;          ///< progress lines (nullptr = quiet)
};

struct TuneReport {
  DeviceIdentity device;
  std::string kernel, problem_key, date;
  std::int64_t run_id = 0;
  std::uint64_t space_valid = 0;
  std::uint64_t configs_tried = 0;    ///< evaluated in this run
  std::uint64_t configs_resumed = 0;  ///< found in the DB and skipped
  std::uint64_t configs_failed = 0;   ///< failed in this run or stored as failed
  std::vector<std::pair<std::string, std::uint64_t>> failures_by_status;
  std::string winner_key, winner_json;
  double winner_ms = 0.0;
  std::string default_key;
  double default_ms = 0.0;            ///< 0 when the default failed
  std::vector<std::pair<std::string, double>> winner_metrics;  ///< e.g. gbps
  double copy_gbps = 0.0;             ///< device-to-device copy measured in this run
  std::string verification;           ///< "reference" or "default configuration"
  bool aborted = false;               ///< a sticky GPU error stopped the run (rerun resumes)
  std::string abort_reason;
};

/// Runs a tuning session on GPU `options.device`. Throws InputError for bad input,
/// cuda::NoDriver when there is no GPU.
TuneReport tune(const KernelProblem& problem, const TuneOptions& options);

/// FNV-1a 64-bit hash in hex: the stable identity of a kernel's source and description.
std::string content_hash(const std::string& data);

/// {"block_size_x":128,...} for a configuration.
std::string config_json(const Space& space, const Config& config);

}  // namespace cutune::runner
