#pragma once
// A prior: what was measured for the same kernel elsewhere (another GPU, another problem
// size), used to start a tuning from it instead of from nothing. None of the peer tuners
// (Kernel Tuner, KTT, CLTune) carries results across GPUs or problem sizes.
//
// A Prior is what one source measured, by parameter *values* (not indices: the target's
// lists may order them differently). It is used only when it matches the target:
// - the same kernel name;
// - the same parameter names (in any order);
// - every value its measurements use is in the target's list for that parameter.
// Otherwise it is left out, with the reason (PriorUse). Of a matching prior, the
// configurations that are not valid in the target (its restrictions, a recording that does
// not hold them) are dropped from what is proposed; they still inform predict().
//
// Objective values of different GPUs or sizes are not comparable, so each source's results
// become ranks: 0 = its best, 1 = its worst valid, kFailedScore for a failure there.
// Several sources (N GPUs) are combined by the mean of their ranks.
#include <cstddef>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cutune/model/space.hpp"

namespace cutune::search {

/// The names one kernel goes by. cutune names a kernel after its T1 file (General.BenchmarkName,
/// else KernelSpecification.KernelName, or a template's name); Kernel Tuner's caches name the
/// CUDA function given to tune_kernel. So BAT's convolution is "convolution" in a cutune DB and
/// "convolution_kernel" in a Kernel Tuner cache of the same code, and a recording under one name
/// never served as a prior for the other (results/transfer_prior/transfer_prior.md renamed a copy to measure it).
struct KernelNames {
  // Implicit: a kernel known by one name is the common case (a cache's kernel_name).
  KernelNames(std::string name_ = "", std::string function_ = "")
      : name(std::move(name_)), function(std::move(function_)) {}
  KernelNames(const char* name_) : name(name_) {}
  std::string name;      ///< cutune's name for it ("" when unknown)
  std::string function;  ///< its __global__ function's ("" when unknown or the same as name)
  /// Whether either name of one is either name of the other. Functions are compared without
  /// namespace or template arguments ("ns::matmul<float, 32>" is "matmul"), as a cache names
  /// the function as its script wrote it. Empty names match nothing. The parameters' names and
  /// values are checked as well (prior_mismatch): the name alone does not make a prior.
  bool shares_a_name_with(const KernelNames& other) const;
  /// "convolution" or "convolution (function convolution_kernel)".
  std::string describe() const;
};

/// A function's name without namespace or template arguments: "ns::k<float, 4>" -> "k".
std::string bare_function_name(std::string_view name);

/// A problem's size as priors compare it. Every source knows its extent (a Kernel Tuner cache's
/// problem_size); a tuning and the store also know every variable of the problem, which the
/// extent may leave out: the matmul template's problem_size is [n, m], so a DB run at another k
/// would pass for one at the target's size.
struct ProblemSize {
  std::string extent;     ///< as a cache writes problem_size ("[4096,4096]"; "" when unknown)
  std::string variables;  ///< as the problem's key names them ("k=1024,m=4096,n=4096"; "" when unknown)
  /// Both extents known and equal, and the variables equal where both are known.
  bool same_as(const ProblemSize& other) const;
  /// "[4096,4096]", "[4096,4096] (k=1024,m=4096,n=4096)" or "unknown".
  std::string describe() const;
};

/// Where a prior was measured.
struct PriorOrigin {
  KernelNames kernel;   ///< the kernel's names
  std::string device;   ///< the GPU ("NVIDIA A100-PCIE-40GB")
  std::string problem;  ///< the problem ("n=268435456", "4096x4096"; "" when unknown)
  /// Its size, compared by extent, which recordings, the store and a tuning all know, and by
  /// variables where both sides know them (`problem` is a cache's problem_size, a store's
  /// problem key or "recorded:FILE" by where it came from).
  ProblemSize size;
  /// "kernel on device, problem P" for reports.
  std::string describe() const;
};

struct PriorParameter {
  std::string name;
  ValueList values;  ///< declared there
};

struct PriorMeasurement {
  std::vector<Value> values;        ///< one per PriorParameter, in the same order
  std::optional<double> objective;  ///< lower is better; nullopt: it failed there
};

struct Prior {
  PriorOrigin origin;
  std::vector<PriorParameter> parameters;
  std::vector<PriorMeasurement> measurements;
};

/// Whether `prior` matches a target (kernel `kernel`, parameters of `target`): "" when it
/// does, else the reason, naming the kernel, parameter or value that differs.
std::string prior_mismatch(const Prior& prior, const KernelNames& kernel, const Space& target);

/// What became of one prior offered for a target.
struct PriorUse {
  PriorOrigin origin;
  bool used = false;
  std::string reason;            ///< why not, when not used
  std::size_t measurements = 0;  ///< in the prior
  std::size_t proposable = 0;    ///< of them, valid in the target
};

/// A rank in the prior for a configuration that failed there: worse than any valid one.
inline constexpr double kFailedScore = 2.0;

/// The matching priors mapped onto one target space: a ranking of the target's
/// configurations and a surrogate of the objective's shape. Holds no reference to the space.
class SpacePrior {
 public:
  /// Matches each of `priors` against the target; the ones that do not match are reported
  /// in uses() and not used. Deterministic: the order of `priors` is kept. `size` is the
  /// target problem's (its extent "" when unknown). Where some matching
  /// priors were measured at `size`, those at other sizes are not used (their reason says so).
  /// Why: leave one out on 19 recorded spaces (results/transfer_prior/transfer_prior.md), the prior hurt the
  /// default where its sources mixed sizes: reduction at 2^28 on an H200 with the H100 at 2^28
  /// and the H200 at 2^22 averaged (-0.31), matmul at 1024^3 from 2048^3 (-0.89). The same size
  /// on another GPU is the closer evidence; another size is used only when nothing else is known.
  /// Sizes, not problem keys, are compared: a key's form depends on where the prior came from
  /// (a recording's problem_size, a store's "m=2048,...", "recorded:FILE").
  SpacePrior(const Space& target, const KernelNames& kernel, const std::vector<Prior>& priors,
             const ProblemSize& size);

  const std::vector<PriorUse>& uses() const { return uses_; }
  /// No prior matched: nothing to use.
  bool empty() const { return scores_.empty(); }
  /// Every prior used was measured at another problem size than the target's (both known): its
  /// winners are checked against the target before they are all proposed (prior_guided.cpp).
  bool from_other_problem() const { return from_other_problem_; }
  /// Measurements used, over every matching prior.
  std::size_t measurements_used() const;
  /// The target's valid configurations the priors measured, best first by the mean rank
  /// (ties in index order).
  const std::vector<Config>& ranking() const { return ranking_; }
  /// The first `k` configurations to try: each source's best in turn (its best, then the
  /// next source's best, ...), so that one GPU unlike the target does not fill them all.
  /// Valid in the target, distinct.
  std::vector<Config> seeds(std::size_t k) const;
  /// The prior's rank for `c` (0 best .. 1 worst valid, kFailedScore: failed): the mean rank
  /// where a prior measured it, else that of the nearest configuration measured (fewest
  /// parameters differing, then smallest index distance, then index order).
  double predict(const Config& c) const;
  /// One line: "2 priors (NVIDIA A100 ..., 4362 measurements); not used: ... (reason)".
  std::string summary() const;

 private:
  std::vector<PriorUse> uses_;
  bool from_other_problem_ = false;
  std::map<Config, double> scores_;                  ///< every mapped configuration (valid here or not)
  std::vector<Config> ranking_;                      ///< valid here, best first
  std::vector<std::vector<Config>> source_rankings_;  ///< per used source, valid here, best first
};

}  // namespace cutune::search
