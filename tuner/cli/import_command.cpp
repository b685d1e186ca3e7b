// cutune import FILE: a Kernel Tuner cache, T4 or KTT results file into the store.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "commands.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/python_repr.hpp"
#include "cutune/model/configuration.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/prior.hpp"
#include "interop_commands.hpp"
#include "option_checks.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace cutune::cli {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return "[" + out + "]";
}

/// The problem size as a list of ints with trailing 1s dropped (Kernel Tuner writes N, [N]
/// or [N, 1]); nullopt when it is not ints.
std::optional<std::vector<std::int64_t>> sizes_of(const json& ps) {
  std::vector<std::int64_t> out;
  if (ps.is_number_integer()) out.push_back(ps.get<std::int64_t>());
  else if (ps.is_array())
    for (const auto& v : ps) {
      if (!v.is_number_integer()) return std::nullopt;
      out.push_back(v.get<std::int64_t>());
    }
  else return std::nullopt;
  while (out.size() > 1 && out.back() == 1) out.pop_back();
  return out;
}

/// Where the entries go: the kernel, problem and space they are checked against.
struct Target {
  std::string kernel, source_hash, problem_key, problem_json;
  std::string kernel_function;  ///< the CUDA function's bare name, "" when the file does not tell
  std::optional<KernelProblem> problem;  ///< with --kernel: its space checks every entry
};

/// The problem's variables --problem names (none for ProblemSize=AxB), checked against the ones a
/// cutune-written cache names (db::kt::kProblemField): a file of k=2048 is not stored as k=1024.
std::map<std::string, std::int64_t> problem_variables_of(const ImportArgs& a, const db::kt::ResultsFile& rf) {
  if (a.problem.empty()) return rf.problem_variables;
  std::map<std::string, std::int64_t> given;
  if (problem_key_of(a.problem).rfind("ProblemSize=", 0) != 0)
    for (auto& [name, value] : parse_problem_assignments(a.problem)) given[name] = value;
  if (!rf.problem_variables.empty() && given != rf.problem_variables)
    throw InputError(fmt::format("{}: {}: the file's problem is {}, --problem gives {}", a.file, db::kt::kProblemField,
                                 variables_key(rf.problem_variables), a.problem));
  return given;
}

Target target_of(const ImportArgs& a, const db::kt::ResultsFile& rf) {
  const std::string file = a.file;
  const std::map<std::string, std::int64_t> variables = problem_variables_of(a, rf);
  Target t;
  if (!a.kernel.empty()) {
    t.problem = KernelProblem::load(resolve_kernel(a.kernel));
    // Without --problem, the problem a cutune-written file names (else the kernel's defaults).
    const ProblemInstance inst = t.problem->instantiate(a.problem.empty() ? variables_key(variables) : a.problem);
    std::vector<std::string> names;
    for (const auto& p : t.problem->space().parameters()) names.push_back(p.name);
    if (rf.param_names != names)
      throw InputError(fmt::format("{}: tune_params_keys: the file has {}, {} has {}", file, joined(rf.param_names),
                                   t.problem->name(), joined(names)));
    if (!rf.problem_size.is_null()) {
      const auto theirs = sizes_of(rf.problem_size);
      std::vector<std::int64_t> ours(inst.problem_size);
      while (ours.size() > 1 && ours.back() == 1) ours.pop_back();
      if (theirs != ours)
        throw InputError(fmt::format("{}: problem_size: the file has {}, {} with problem {} has {}", file,
                                     db::python_str(rf.problem_size), t.problem->name(), inst.key(),
                                     db::python_str(json(inst.problem_size))));
    }
    t.kernel = t.problem->name();
    t.kernel_function = search::bare_function_name(t.problem->kernel_name());
    t.source_hash = runner::kernel_source_hash(*t.problem);
    t.problem_key = inst.key();
    t.problem_json = inst.json();
    return t;
  }
  t.kernel = !rf.kernel_name.empty() ? rf.kernel_name : a.kernel_name;
  // A cutune-written cache names the function beside cutune's name; Kernel Tuner's own caches
  // name the function itself. T4 and KTT files name no function.
  if (!rf.kernel_function.empty()) t.kernel_function = search::bare_function_name(rf.kernel_function);
  else if (rf.format == "Kernel Tuner cache") t.kernel_function = search::bare_function_name(rf.kernel_name);
  // No source to hash: an imported kernel is identified by its parameters.
  t.source_hash = "imported:" + joined(rf.param_names);
  json pj = json::object();
  if (!a.problem.empty()) {
    // The key the rows are found by (query --problem, tune's own keys): n=2**24 is stored as
    // n=16777216, and "n=1/0" is refused rather than stored as a problem nobody can name.
    t.problem_key = problem_key_of(a.problem);
  } else if (!variables.empty()) {
    t.problem_key = variables_key(variables);  // as the tuning that wrote the file keyed it
  } else if (const auto sizes = sizes_of(rf.problem_size)) {
    for (auto d : *sizes) t.problem_key += (t.problem_key.empty() ? "" : "x") + std::to_string(d);
    t.problem_key = "ProblemSize=" + t.problem_key;
  } else {
    t.problem_key = "ProblemSize=" + db::python_str(rf.problem_size);  // cmd_import asked when it is null
  }
  // The variables beside the size, as a tuning stores its problem (ProblemInstance::json): a prior
  // from the import then tells problems of one extent apart (matmul's [n, m] at two k).
  for (const auto& [name, value] : variables) pj[name] = value;
  if (!rf.problem_size.is_null()) pj["ProblemSize"] = rf.problem_size;
  // Kept so that an export can write the file's parameter lists back (a cache header).
  if (!rf.tune_params.empty()) pj[db::kt::kImportedTuneParamsKey] = rf.tune_params;
  t.problem_json = db::kt::store_json(pj);
  return t;
}

/// Every entry as a measurement, each checked against the kernel's space when one is named.
std::vector<db::Measurement> measurements_of(const ImportArgs& a, const db::kt::ResultsFile& rf, const Target& t) {
  const std::string now = db::utc_now_iso();
  std::vector<db::Measurement> out;
  out.reserve(rf.entries.size());
  for (const auto& e : rf.entries) {
    const std::string where = fmt::format("{}: configuration \"{}\"", a.file, e.key);
    ResultConfig config;
    if (t.problem) {
      const Space& space = t.problem->space();
      Config c;
      for (std::size_t i = 0; i < space.parameters().size(); ++i) {
        const auto& name = space.parameters()[i].name;
        const auto v = e.params.find(name);
        if (v == e.params.end()) throw InputError(fmt::format("{}: no value for {}", where, name));
        try {
          c.index.push_back(space.find_value(i, db::python_str(*v)));
        } catch (const InputError& err) {
          throw InputError(fmt::format("{}: {} of {}", where, err.what(), t.kernel));
        }
      }
      const Configuration of_space(space, std::move(c));
      if (e.status == Status::Ok)
        if (std::string r = of_space.violated_restriction(); !r.empty())
          throw InputError(fmt::format("{}: measured, but violates {}'s restriction \"{}\"", where, t.kernel, r));
      config = of_space;
    } else {
      json params = json::object();
      for (const auto& name : rf.param_names) {
        const auto v = e.params.find(name);
        if (v == e.params.end()) throw InputError(fmt::format("{}: no value for {}", where, name));
        params[name] = *v;
      }
      config = ResultConfig(db::kt::config_key(params, rf.param_names), parameter_values(params));
    }
    out.push_back(db::kt::measurement_of_entry(e, std::move(config), now));
  }
  return out;
}

}  // namespace

CLI::App* add_import(CLI::App& app, ImportArgs& a) {
  auto* cmd = app.add_subcommand("import", "Import a Kernel Tuner cache (.json, .json.gz), T4 or KTT results "
                                           "file into the database");
  cmd->add_option("FILE", a.file, "Cache, T4 or KTT results file")->required();
  cmd->add_option("--db", a.db, "SQLite database (default as for tune)")->check(directory_exists_for_output());
  cmd->add_option("--kernel", a.kernel, "Check every configuration against this kernel's space (built-in "
                                        "template or T1 .json) and store under it (default: store under the "
                                        "file's kernel name, unchecked)");
  cmd->add_option("--problem", a.problem, "With --kernel: its problem variables (n=2**24); without: the "
                                          "problem key to store under, n=VALUE,... or ProblemSize=AxB (default: "
                                          "the file's problem_size)");
  cmd->add_option("--kernel-name", a.kernel_name,
                  "Kernel name for a file that names none (T4), without --kernel (default: the file's)");
  cmd->add_option("--device-name", a.device_name,
                  "GPU name for a file that names none (T4 without metadata.device; default: the file's)");
  return cmd;
}

int cmd_import(const ImportArgs& a) {
  // Everything is read and checked before the store is opened: bad input changes nothing.
  const db::kt::ResultsFile rf = db::kt::read_results_file(a.file);
  DeviceIdentity device;
  if (rf.device) device = *rf.device;
  else device.name = !rf.device_name.empty() ? rf.device_name : a.device_name;
  // What the file does not say and the flags do not give, asked for in one line: T4 names
  // neither device, kernel nor problem, and one flag per run took three runs. A problem left
  // unnamed was stored as "ProblemSize=unknown", where files of different sizes would mix.
  std::vector<std::string> unnamed, flags;
  if (device.name.empty()) {
    unnamed.push_back("device");
    flags.push_back("--device-name GPU");
  }
  if (a.kernel.empty() && rf.kernel_name.empty() && a.kernel_name.empty()) {
    unnamed.push_back("kernel");
    flags.push_back("--kernel-name NAME (or --kernel TEMPLATE|T1.json)");
  }
  if (a.kernel.empty() && a.problem.empty() && rf.problem_size.is_null()) {
    unnamed.push_back("problem size");
    flags.push_back("--problem n=VALUE,... (or ProblemSize=AxB)");
  }
  if (!unnamed.empty()) {
    std::string what;
    for (std::size_t i = 0; i < unnamed.size(); ++i)
      what += (i == 0 ? "" : i + 1 == unnamed.size() ? " or " : ", ") + unnamed[i];
    std::string give;
    for (std::size_t i = 0; i < flags.size(); ++i) give += (i == 0 ? "" : " ") + flags[i];
    throw InputError(fmt::format("{}: {} names no {}: give {}", a.file, rf.format, what, give));
  }
  const Target t = target_of(a, rf);
  const std::vector<db::Measurement> ms = measurements_of(a, rf, t);

  const fs::path db_path = a.db.empty() ? default_db_path() : fs::path(a.db);
  // The default DB's folder is made on first use; a --db folder must exist (option_checks.hpp).
  if (a.db.empty() && db_path.has_parent_path()) fs::create_directories(db_path.parent_path());
  db::Store store = db::Store::open(db_path, /*create=*/true);
  std::size_t added = 0, failed = 0;
  store.transaction([&] {
    // The run says where the data came from: strategy "import", the file in the command.
    db::RunSpec spec;
    spec.device = device;
    spec.kernel = t.kernel;
    spec.kernel_function = t.kernel_function;
    spec.source_hash = t.source_hash;
    spec.problem_key = t.problem_key;
    spec.problem_json = t.problem_json;
    spec.tool_version = CUTUNE_VERSION;
    spec.strategy = "import";
    spec.seed = 0;
    spec.command = fmt::format("{} [{} {}]", a.command, rf.format, fs::absolute(a.file).string());
    db::Run run = store.begin_run(spec);
    const db::Measurement* best = nullptr;
    for (const auto& m : ms) {
      if (!run.add(m)) continue;
      ++added;
      if (m.status != Status::Ok) ++failed;
      else if (!best || m.median_ms < best->median_ms) best = &m;
    }
    if (added == 0) return false;  // all stored already: not even the run is kept
    // A winner for a target that has none; a measured winner is never replaced by an import.
    bool has_winner = false;
    for (const auto& w : store.winners({t.kernel, "", t.problem_key, "time"}))
      has_winner = has_winner || w.gpu_model == device.model_key();
    if (best && !has_winner) {
      db::WinnerChoice w;
      w.config = best->config;
      w.median_ms = best->median_ms;
      run.set_winner(w);  // time, screening: nothing was re-measured
    }
    run.end();
    return true;
  });
  std::cout << fmt::format("{} ({}): {} configurations, {} stored now ({} failed), {} already stored\n"
                           "  kernel {}, problem {}, device {} -> {}\n",
                           a.file, rf.format, ms.size(), added, failed, ms.size() - added, t.kernel, t.problem_key,
                           device.name, db_path.string());
  return kOk;
}

}  // namespace cutune::cli
