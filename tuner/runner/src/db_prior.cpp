#include "cutune/runner/db_prior.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cutune/formats/kt_interop.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/search/objective.hpp"

namespace cutune::runner {

PriorMode parse_prior_mode(const std::string& text) {
  if (text == "auto") return PriorMode::Auto;
  if (text == "on") return PriorMode::On;
  if (text == "none") return PriorMode::None;
  throw InputError(fmt::format("--prior {}: expected auto, on or none", text));
}

bool prior_from_db(PriorMode mode) {
  return mode == PriorMode::On || (mode == PriorMode::Auto && search::kPriorByDefault);
}

namespace {

// A value a prior can learn from: what a configuration of a space is stored as (bools, ints,
// floats, anything else as its str()); a file's null or array is none of those.
bool learnable(const Value& v) { return v.is_bool() || v.is_int() || v.is_float() || v.is_string(); }

// A stored problem's size: its JSON's ProblemSize (a tuning's and an import's; unknown where it has
// none, a simulation's) and its variables where the JSON holds them beside it (a tuning's,
// ProblemInstance::json; an import's where the file or --problem named them), keyed as a
// tuning's target is (ProblemInstance::key). Only the variables: an import's JSON also keeps
// the file's tune_params, and taking every field for a variable had keyed such an import
// "ProblemSize=...", another problem than the tuning at its very size.
search::ProblemSize size_of(const std::string& problem_json) {
  const auto j = nlohmann::ordered_json::parse(problem_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return {};
  search::ProblemSize size;
  if (const auto it = j.find("ProblemSize"); it != j.end() && !it->is_null()) size.extent = it->dump();
  size.variables = variables_key(db::kt::stored_problem_variables(j));
  return size;
}

}  // namespace

std::vector<search::Prior> priors_from_store(const db::Store& store, const search::KernelNames& kernel,
                                             const Objective& objective, std::int64_t except_kernel_id,
                                             std::int64_t except_problem_id, std::int64_t except_device_id,
                                             const std::string& except_gpu_model) {
  // The store knows a kernel by cutune's name (a tuning) or the function's (a Kernel Tuner
  // cache imported as it names itself), and by its function's bare name where it was stored
  // (tunings and imports since schema 4): a target found by both names is taken once.
  std::vector<db::MeasurementTarget> targets;
  std::vector<std::string> names{kernel.name};
  if (const std::string f = search::bare_function_name(kernel.function); !f.empty() && f != kernel.name)
    names.push_back(f);
  for (const auto& name : names) {
    if (name.empty()) continue;
    db::WinnerFilter filter;
    filter.kernel = name;
    for (auto& t : store.measurement_targets(filter, /*or_function=*/true)) {
      const bool seen = std::any_of(targets.begin(), targets.end(), [&](const db::MeasurementTarget& o) {
        return o.kernel_id == t.kernel_id && o.problem_id == t.problem_id && o.device_id == t.device_id;
      });
      if (!seen) targets.push_back(std::move(t));
    }
  }
  std::vector<search::Prior> out;
  for (const auto& t : targets) {
    if (t.kernel_id == except_kernel_id && t.problem_id == except_problem_id &&
        (t.device_id == except_device_id || (!except_gpu_model.empty() && t.gpu_model == except_gpu_model)))
      continue;
    search::Prior prior;
    prior.origin = {search::KernelNames(t.kernel, t.kernel_function), t.gpu_model, t.problem_key, size_of(t.problem_json)};
    std::vector<std::string> names;
    bool readable = true;
    for (const auto& m : store.measurements(t.kernel_id, t.problem_id, t.device_id)) {
      const ParameterValues& values = m.config.values();
      if (names.empty()) {
        for (const auto& [name, v] : values) names.push_back(name);
        for (const auto& n : names) prior.parameters.push_back({n, {}});
      }
      search::PriorMeasurement pm;
      for (const auto& n : names) {
        const auto it = std::find_if(values.begin(), values.end(), [&](const auto& nv) { return nv.first == n; });
        if (it == values.end() || !learnable(it->second)) {
          readable = false;
          break;
        }
        pm.values.push_back(it->second);
      }
      if (!readable || values.size() != names.size()) {
        readable = false;  // configurations of different parameters under one target: not a prior
        break;
      }
      const search::Observation o = search::observation_for(db::objective_value(m, objective), objective);
      if (o.valid) pm.objective = o.objective;
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto& values = prior.parameters[i].values;
        if (std::find(values.begin(), values.end(), pm.values[i]) == values.end()) values.push_back(pm.values[i]);
      }
      prior.measurements.push_back(std::move(pm));
    }
    if (readable && !prior.measurements.empty()) out.push_back(std::move(prior));
  }
  return out;
}

}  // namespace cutune::runner
