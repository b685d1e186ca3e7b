// Shape sweeps: tune a kernel at many problem shapes, distil the results into a few
// configurations and a selector, and ask what the loader selects.
#include "sweep_commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/loader/loader.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/shape_sweep.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/distill.hpp"
#include "option_checks.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace cutune::cli {
namespace {

KernelProblem load_problem(const std::string& kernel) { return KernelProblem::load(resolve_kernel(kernel)); }

/// The sweep's shapes as --problem texts, each with `fixed` (the --problem given beside the
/// sweep) before it; a variable named by both is refused.
std::vector<std::string> sweep_problems(const KernelProblem& p, const std::string& sweep, const std::string& fixed,
                                        bool allow_large) {
  const auto shapes = parse_sweep(sweep, p.variables(), allow_large);
  std::set<std::string> fixed_names;
  for (const auto& [name, value] : parse_problem_assignments(fixed)) fixed_names.insert(name);
  std::vector<std::string> out;
  for (const auto& shape : shapes) {
    for (const auto& [name, value] : shape)
      if (fixed_names.contains(name))
        throw InputError(fmt::format("--sweep and --problem both give {}: give it in one", name));
    out.push_back(fixed.empty() ? sweep_shape_text(shape) : fixed + "," + sweep_shape_text(shape));
    p.instantiate(out.back());  // every shape checked before the first is tuned
  }
  return out;
}

}  // namespace

int cmd_tune_sweep(const TuneArgs& args, const std::string& sweep, bool allow_large) {
  const KernelProblem p = load_problem(args.kernel);
  const std::vector<std::string> problems = sweep_problems(p, sweep, args.problem, allow_large);
  std::cout << fmt::format("sweep: {} shapes of {} ({} .. {})\n", problems.size(), p.name(), problems.front(),
                           problems.back());
  for (std::size_t i = 0; i < problems.size(); ++i) {
    TuneArgs one = args;
    one.problem = problems[i];
    if (!args.report.empty()) one.report = fmt::format("{}.{}.json", args.report, i);
    std::cout << fmt::format("\n=== sweep shape {}/{}: {} ===\n", i + 1, problems.size(), problems[i]) << std::flush;
    const int rc = cmd_tune(one);
    if (rc != kOk) {
      std::cerr << fmt::format("cutune: sweep stopped at shape {}/{} ({}): tune exited {}\n", i + 1, problems.size(),
                               problems[i], rc);
      return rc;
    }
  }
  std::cout << fmt::format("\nsweep: {} shapes tuned; `cutune distill {} --sweep \"{}\"` keeps a few of their "
                           "configurations and a selector\n",
                           problems.size(), args.kernel, sweep);
  return kOk;
}

CLI::App* add_distill(CLI::App& app, DistillArgs& a) {
  auto* d = app.add_subcommand(
      "distill", "Keep the fewest configurations of a tuned sweep whose worst slowdown against each shape's own best "
                 "stays within a bound, and a selector over the problem variables (export --format wisdom carries it)");
  d->add_option("KERNEL", a.kernel, "Built-in template name or T1 .json file")->required();
  d->add_option("--sweep", a.sweep,
                "The shapes (as tune --sweep; default: every problem of the kernel with a winner on this GPU model)");
  d->add_flag("--yes", a.yes, "Allow a sweep of more than 10^4 shapes");
  d->add_option("--bound", a.bound, "Worst slowdown allowed against each shape's best (0.05: 5%)")
      ->check(CLI::Range(0.0, 10.0));
  d->add_option("--top-k", a.top_k, "Candidates from each shape: its winner and its best measured, this many in all")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100}));
  d->add_option("--db", a.db, "SQLite database (default as for tune)");
  d->add_option("--device", a.device, "GPU ordinal that measures the cross matrix");
  d->add_option("--gpu", a.gpu,
                "GPU model key (\"NVIDIA H100 80GB HBM3/sm_90\") of stored measurements; with --no-measure, "
                "instead of the GPU's");
  d->add_flag("--no-measure", a.no_measure, "Distil the cross matrix the DB holds, measuring nothing (no GPU needed)");
  d->add_option("--json", a.json, "Write the cross matrix and the selector to this file")
      ->check(directory_exists_for_output());
  d->add_option("--samples", a.measure.samples, "Screening samples per configuration at most")->check(CLI::Range(1, 100000));
  d->add_option("--time-cap", a.measure.time_cap_s, "Seconds per configuration at most (thorough measurement)")
      ->check(CLI::Range(0.001, 3600.0));
  d->add_option("--max-noise", a.measure.max_noise, "Target relative half-width of each median's interval")
      ->check(CLI::Range(1e-6, 1.0));
  return d;
}

CLI::App* add_select(CLI::App& app, SelectArgs& a) {
  auto* s = app.add_subcommand("select", "Say which configuration cutune::loader selects for a kernel, problem and GPU "
                                         "model, and why (no GPU needed with --gpu)");
  s->add_option("KERNEL", a.kernel, "Built-in template name or T1 .json file")->required();
  s->add_option("--problem", a.problem, "Problem variables, e.g. n=2**24 (default: the kernel's defaults)");
  s->add_option("--winners", a.winners, "A cutune DB or wisdom file (default: the DB as for tune)");
  s->add_option("--gpu", a.gpu, "GPU model key, \"NAME/sm_XY\" (default: GPU 0's)");
  s->add_option("--objective", a.objective, "Whose winners (as LoaderOptions::objective)");
  s->add_flag("--no-selectors", a.no_selectors, "The ladder without distilled selectors");
  s->add_flag("--json", a.json, "Print JSON");
  return s;
}

namespace {

/// "NVIDIA H100 80GB HBM3/sm_90" -> its name and compute capability.
DeviceIdentity identity_of_model(const std::string& model) {
  const auto slash = model.rfind("/sm_");
  const std::string digits = slash == std::string::npos ? "" : model.substr(slash + 4);
  if (slash == 0 || digits.size() < 2 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw InputError(fmt::format("--gpu {}: not a GPU model key (NAME/sm_XY, as `cutune query` shows it)", model));
  DeviceIdentity d;
  d.name = model.substr(0, slash);
  d.cc_major = std::stoi(digits.substr(0, digits.size() - 1));
  d.cc_minor = digits.back() - '0';
  return d;
}

ojson selection_json(const loader::Selection& s) {
  ojson config = ojson::object();
  for (const auto& [name, value] : s.config) config[name] = value;
  return ojson{{"kernel", s.kernel},       {"problem", s.problem},         {"gpu_model", s.gpu_model},
               {"rung", static_cast<int>(s.rung)}, {"rung_name", loader::rung_name(s.rung)},
               {"config_key", s.config_key}, {"config", config},           {"tuned_problem", s.tuned_problem},
               {"tuned_gpu", s.tuned_gpu}, {"distance", s.distance},       {"selector", s.selector},
               {"source", s.source},       {"describe", s.describe()}};
}

}  // namespace

int cmd_select(const SelectArgs& a) {
  loader::LoaderOptions o;
  o.winners = a.winners.empty() ? default_db_path() : fs::path(a.winners);
  if (a.winners.empty() && !fs::exists(o.winners)) o.winners.clear();  // no DB yet: the template default
  o.use_cache = false;
  o.objective = a.objective;
  o.use_selectors = !a.no_selectors;
  o.on_miss = loader::OnMiss{};  // select() never tunes: $CUTUNE_ON_MISS is not this command's business
  DeviceIdentity gpu;
  if (!a.gpu.empty()) {
    gpu = identity_of_model(a.gpu);
  } else {
    gpu = cuda::identify(0);  // throws NoDriver without a GPU: main() says so
  }
  loader::Loader l(o);
  const loader::Selection s = l.select(a.kernel, a.problem, gpu);
  if (a.json) std::cout << selection_json(s).dump(2) << '\n';
  else std::cout << s.describe() << '\n';
  return kOk;
}

}  // namespace cutune::cli
