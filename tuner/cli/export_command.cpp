// cutune export --format cache|t4: one (kernel, problem, GPU model)'s measurements from the
// store as a Kernel Tuner file. Each format is one function; a new format is one
// more enumerator and one more case in the dispatch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "commands.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/t4.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/runner/tuning_session.hpp"
#include "interop_commands.hpp"
#include "option_checks.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace cutune::cli {
namespace {

enum class ExportFormat { Cache, T4, Wisdom };

ExportFormat parse_format(const std::string& name) {
  if (name == "cache") return ExportFormat::Cache;
  if (name == "t4") return ExportFormat::T4;
  if (name == "wisdom") return ExportFormat::Wisdom;
  throw InputError(fmt::format("--format {}: must be cache, t4 or wisdom", name));
}

/// What every format needs: the target, its device and its measurements as file entries.
struct ExportData {
  db::MeasurementTarget target;
  DeviceIdentity device;
  std::vector<db::kt::KtEntry> entries;
  std::vector<std::string> param_names;  ///< in the stored configurations' order
  std::string objective = "time";        ///< the file's objective (cache header, T4 "objectives")
};

/// The objective an export names: --objective when given (time, energy, or a metric the
/// entries carry); else the one the target's stored winner was tuned for when there is
/// exactly one; else time.
std::string export_objective(const db::Store& store, const ExportData& x, const std::string& requested) {
  if (!requested.empty()) {
    const bool known = !Objective::from_name(requested).is_metric() ||
                       std::any_of(x.entries.begin(), x.entries.end(),
                                   [&](const db::kt::KtEntry& e) { return e.extra.contains(requested); });
    if (!known)
      throw InputError(fmt::format("--objective {}: not time, energy or a metric of the stored measurements of {}",
                                   requested, x.target.kernel));
    return requested;
  }
  std::set<std::string> objectives;
  for (const auto& w : store.winners({x.target.kernel, x.target.gpu_model, x.target.problem_key, ""}))
    if (w.gpu_model == x.target.gpu_model) objectives.insert(w.objective.name());
  return objectives.size() == 1 ? *objectives.begin() : "time";
}

/// The header of a cache but for the problem's variables (header_of): the kernel file's (--space)
/// or, without one, the built-in kernel's of that name when its parameters are the stored ones
/// (Kernel Tuner's kernel_name, the declared lists); else the file's header when the data was
/// imported from a cache; else the values the measurements hold, sorted. The lists' order is the space's neighbourhood for every strategy
/// that replays the file (Kernel Tuner's and cutune's): the values in the order the
/// measurements first hold them put a BAT file's default first (brute force measures it
/// first), so BLOCK_SIZE 64,128,256,512 was written 256,64,128,512.
db::kt::KtCacheHeader header_without_problem(const ExportData& x, const std::string& space_file, const json& problem) {
  std::vector<std::int64_t> sizes;
  if (const auto it = problem.find("ProblemSize"); it != problem.end() && it->is_array())
    for (const auto& d : *it)
      if (d.is_number_integer()) sizes.push_back(d.get<std::int64_t>());
  if (!space_file.empty()) {
    const KernelProblem kp = KernelProblem::load(resolve_kernel(space_file));
    // Named as the measurements are (a BAT file's BenchmarkName, not its CUDA function's name),
    // with the function's name beside it for a prior from Kernel Tuner's caches of the kernel.
    auto h = db::kt::cache_header(x.target.kernel, kp.space(), sizes, x.device, x.objective);
    if (runner::evaluates_default_first(kp)) db::kt::set_default_field(h, kp.space());
    if (kp.name() != x.target.kernel)
      throw InputError(fmt::format("--space {}: its kernel is {}, the measurements' {}", space_file, kp.name(),
                                   x.target.kernel));
    if (kp.kernel_name() != x.target.kernel) h.extra[db::kt::kKernelFunctionField] = kp.kernel_name();
    if (h.tune_params_keys != x.param_names)
      throw InputError(fmt::format("--space {}: its parameters ({}) are not the stored ones ({})", space_file,
                                   fmt::join(h.tune_params_keys, ","), fmt::join(x.param_names, ",")));
    return h;
  }
  try {
    const KernelProblem kp = KernelProblem::load(resolve_kernel(x.target.kernel));
    auto h = db::kt::cache_header(kp.kernel_name(), kp.space(), sizes, x.device, x.objective);
    if (runner::evaluates_default_first(kp)) db::kt::set_default_field(h, kp.space());
    if (h.tune_params_keys == x.param_names) return h;
  } catch (const InputError&) {
    // Not a kernel this cutune knows (imported data): the header from what is stored.
  }
  db::kt::KtCacheHeader h;
  h.device_name = x.device.name;
  h.kernel_name = x.target.kernel;
  if (problem.contains("ProblemSize")) h.problem_size = problem["ProblemSize"];
  h.tune_params_keys = x.param_names;
  if (const auto it = problem.find(db::kt::kImportedTuneParamsKey); it != problem.end() && it->is_object()) {
    h.tune_params = *it;
  } else {
    for (const auto& name : x.param_names) {
      json values = json::array();
      for (const auto& e : x.entries) {
        const auto& v = e.params[name];
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      std::sort(values.begin(), values.end());
      h.tune_params[name] = values;
    }
  }
  h.objective = json::array({x.objective});
  h.extra[db::kt::kDeviceField] = to_json(x.device);
  // The function's name where the DB knows it and it is not the kernel's: a prior from this
  // file then finds tunings of the function under other names (as --space writes it).
  if (!x.target.kernel_function.empty() && x.target.kernel_function != x.target.kernel)
    h.extra[db::kt::kKernelFunctionField] = x.target.kernel_function;
  return h;
}

/// The header of a cache: header_without_problem's, and the problem's variables beside its
/// problem_size, which may leave one out (matmul's is [n, m]).
db::kt::KtCacheHeader header_of(const ExportData& x, const std::string& space_file) {
  json problem = json::parse(x.target.problem_json, nullptr, /*allow_exceptions=*/false);
  if (!problem.is_object()) problem = json::object();
  db::kt::KtCacheHeader h = header_without_problem(x, space_file, problem);
  db::kt::set_problem_field(h, db::kt::stored_problem_variables(problem));
  return h;
}

/// Written beside `out`, then renamed over it: a failed export leaves no half file.
fs::path temporary_beside(const fs::path& out) { return out.string() + ".cutune-tmp"; }

void write_cache(const ExportData& x, const db::kt::KtCacheHeader& h, const fs::path& out) {
  const fs::path tmp = temporary_beside(out);
  fs::remove(tmp);
  db::kt::KtCacheWriter w;
  w.open(tmp, h);
  for (const auto& e : x.entries) w.append(e);
  w.close();
  fs::rename(tmp, out);
}

void write_t4_results(const ExportData& x, const fs::path& out, const std::string& version) {
  db::kt::T4Metadata md;
  md.device = x.device.name;
  md.autotuner_version = CUTUNE_VERSION;
  md.extra[db::kt::kDeviceField] = to_json(x.device);
  const fs::path tmp = temporary_beside(out);
  db::kt::write_t4(tmp, version, md, {x.objective}, x.entries);
  fs::rename(tmp, out);
}

std::string describe(const db::MeasurementTarget& t, std::size_t gpus = 1) {
  return fmt::format("{} / {} / {} ({} measurements{})", t.kernel, t.problem_key, t.gpu_model, t.count,
                     gpus > 1 ? fmt::format(", from {} GPUs of the model", gpus) : "");
}

/// The store's targets grouped by (kernel, problem, GPU model), in the store's order. The store
/// keeps each physical GPU's measurements apart (its uuid), but a file names the GPU by its
/// model, as Kernel Tuner's caches do, so one file holds every GPU of the model: the shards of
/// one space run on several GPUs or nodes and merged (`cutune merge`), or a space recorded over
/// calls on different machines of one model. Seen on two lent H200s (2026-12-03): the export of
/// such a DB was refused, listing two targets that read the same ("NVIDIA H200/sm_90").
std::vector<std::vector<db::MeasurementTarget>> by_model(const std::vector<db::MeasurementTarget>& targets) {
  std::vector<std::vector<db::MeasurementTarget>> groups;
  for (const auto& t : targets) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front().kernel_id == t.kernel_id && g.front().problem_id == t.problem_id &&
             g.front().gpu_model == t.gpu_model;
    });
    if (it == groups.end())
      groups.push_back({t});
    else
      it->push_back(t);
  }
  return groups;
}

/// A group as one target: its first GPU's ids, the measurements of all.
db::MeasurementTarget summed(const std::vector<db::MeasurementTarget>& group) {
  db::MeasurementTarget t = group.front();
  t.count = 0;
  for (const auto& g : group) t.count += g.count;
  return t;
}

}  // namespace

CLI::App* add_export(CLI::App& app, ExportArgs& a) {
  auto* cmd = app.add_subcommand("export", "Write one kernel/problem/GPU's measurements as a Kernel Tuner cache "
                                           "or T4 results file, or the stored winners as wisdom (cutune::loader)");
  cmd->add_option("--format", a.format, "cache (Kernel Tuner's cache layout), t4, or wisdom (winners)")
      ->check(CLI::IsMember({"cache", "t4", "wisdom"}));
  cmd->add_option("--objective", a.objective,
                  "wisdom: the winners for this objective (time, energy or a metric; default: all); cache/t4: the "
                  "objective the file names (default: the stored winner's, else time)");
  cmd->add_option("--t4-version", a.t4_version, "T4 version to write")->check(CLI::IsMember({"1.0.0", "1.1.0"}));
  cmd->add_option("--kernel", a.kernel, "Kernel name (default: any; one target must match)");
  cmd->add_option("--gpu", a.gpu, "GPU name or model (substring; default: any)");
  cmd->add_option("--problem", a.problem, "Problem key, e.g. n=268435456 (default: any)");
  cmd->add_option("--space", a.space,
                  "cache: the kernel (template name, T1 or BAT file) the measurements were tuned from; the "
                  "header's value lists are its declared ones, in its order (default: the built-in kernel of the "
                  "stored name, else the stored values sorted)");
  cmd->add_option("--db", a.db, "SQLite database (default as for tune)");
  cmd->add_option("-o,--output", a.output, "File to write")->required()->check(directory_exists_for_output());
  return cmd;
}

int cmd_export(const ExportArgs& a) {
  const ExportFormat format = parse_format(a.format);
  if (format == ExportFormat::Wisdom) return cmd_export_wisdom(a);  // winners, not measurements
  const fs::path path = a.db.empty() ? default_db_path() : fs::path(a.db);
  const db::Store store = db::Store::open(path, /*create=*/false);
  const auto targets = store.measurement_targets({a.kernel, a.gpu, a.problem, ""});
  if (targets.empty())
    throw InputError(fmt::format("{}: no measurements for --kernel '{}' --gpu '{}' --problem '{}'", path.string(),
                                 a.kernel, a.gpu, a.problem));
  const auto groups = by_model(targets);
  if (groups.size() > 1) {
    std::string list;
    for (std::size_t i = 0; i < groups.size() && i < 5; ++i)
      list += (i ? "; " : "") + describe(summed(groups[i]), groups[i].size());
    throw InputError(fmt::format("{}: {} kernel/problem/GPU targets match ({}{}): one file holds one; narrow it "
                                 "with --kernel, --problem, --gpu",
                                 path.string(), groups.size(), list, groups.size() > 5 ? "; ..." : ""));
  }
  const auto& group = groups.front();
  ExportData x;
  x.target = summed(group);
  x.device = store.device(x.target.device_id).value();  // the header's GPU: the model's first
  // A configuration measured on more than one GPU of the model: the first GPU's (the group's
  // first, the GPU the store first saw), so that a file holds one value per configuration.
  for (const auto& m : store.model_measurements(x.target.kernel_id, x.target.problem_id, x.target.device_id)) {
    x.entries.push_back(db::kt::entry_of_measurement(m));
    if (x.param_names.empty())
      for (auto it = x.entries.back().params.begin(); it != x.entries.back().params.end(); ++it)
        x.param_names.push_back(it.key());
  }
  x.target.count = x.entries.size();
  x.objective = export_objective(store, x, a.objective);
  // Before the file is opened: a --space that does not fit is about --space, not the output.
  const db::kt::KtCacheHeader header = format == ExportFormat::Cache ? header_of(x, a.space) : db::kt::KtCacheHeader{};
  try {
    switch (format) {
      case ExportFormat::Cache: write_cache(x, header, a.output); break;
      case ExportFormat::T4: write_t4_results(x, a.output, a.t4_version); break;
      case ExportFormat::Wisdom: break;  // answered above
    }
  } catch (const std::exception& e) {
    // The file is written under a temporary name beside the output; a failure (a folder
    // without write permission, a full disk) is about the output the user named.
    const std::string tmp = temporary_beside(a.output).string();
    std::error_code ec;
    fs::remove(tmp, ec);
    std::string why = e.what();
    for (auto pos = why.find(tmp); pos != std::string::npos; pos = why.find(tmp, pos + a.output.size()))
      why.replace(pos, tmp.size(), a.output);
    throw InputError(fmt::format("-o {}: cannot be written ({})", a.output, why));
  }
  std::cout << fmt::format("{}: {} configurations of {} as {}\n", a.output, x.entries.size(),
                           describe(x.target, group.size()),
                           format == ExportFormat::Cache ? "a Kernel Tuner cache" : "T4 " + a.t4_version);
  return kOk;
}

}  // namespace cutune::cli
