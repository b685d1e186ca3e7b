// cutune score --prior-from: transfer across GPUs and problem sizes, scored leave-one-out.
// Each of --spaces is tuned with a prior from the --prior-from recordings of its kernel made
// elsewhere (another GPU or problem), and without; rows "strategy" and "strategy+prior".
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "cutune/db/store.hpp"
#include "cutune/formats/recorded_cache.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/search/transfer_scoring.hpp"
#include "replay_commands.hpp"

namespace cutune::cli {
namespace {

search::PriorOrigin origin_of(const replay::RecordingOrigin& o, const std::string& file) {
  if (o.kernel_name.empty())
    throw InputError(fmt::format("{}: the recording names no kernel (kernel_name): it cannot be matched to a prior",
                                 file));
  return {{o.kernel_name, o.kernel_function}, o.device_name, o.problem, {o.problem, o.problem_variables}};
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
}

}  // namespace

int cmd_score_with_prior(const ScoreArgs& a) {
  if (!a.traces.empty()) throw InputError("--traces and --prior-from: other tools' runs have no prior; give one");
  std::vector<search::RecordedSpace> spaces;
  std::vector<search::PriorOrigin> origins;
  for (const auto& f : a.spaces) {
    replay::RecordingOrigin o;
    spaces.push_back(replay::load_recorded_space(f, &o));
    origins.push_back(origin_of(o, f));
    for (std::size_t i = 0; i + 1 < spaces.size(); ++i)
      if (spaces[i].name() == spaces.back().name())
        throw InputError(fmt::format("--spaces: two files are named {}", spaces.back().name()));
  }
  std::vector<search::Prior> pool;
  for (const auto& f : a.prior_from) {
    replay::RecordingOrigin o;
    const search::RecordedSpace r = replay::load_recorded_space(f, &o);
    pool.push_back(search::prior_from_recording(r, origin_of(o, f)));
  }
  const auto priors = search::leave_one_out_priors(spaces, origins, pool);

  // The spaces with a prior are scored; the others are named with the reason.
  std::vector<search::RecordedSpace> scored;
  std::vector<std::shared_ptr<const search::SpacePrior>> scored_priors;
  std::vector<std::size_t> scored_index;
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    std::cout << fmt::format("{}: {}\n", spaces[i].name(), priors[i]->summary());
    if (priors[i]->empty()) continue;
    scored.push_back(spaces[i]);
    scored_priors.push_back(priors[i]);
    scored_index.push_back(i);
  }
  if (scored.empty())
    throw InputError("--prior-from: no space of --spaces has a recording of its kernel from another GPU or problem");

  const search::ComparisonOptions o = comparison_options(a);
  const auto t0 = std::chrono::steady_clock::now();
  const search::ScoreTable table = search::compare_with_prior(scored, scored_priors, o);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::cout << search::format_score_table(table);
  // The difference the prior makes, per strategy and space: what the table is for.
  std::map<std::string, const search::ScoreRow*> rows;
  for (const auto& r : table.rows) rows[r.strategy] = &r;
  nlohmann::ordered_json deltas = nlohmann::ordered_json::array();
  std::cout << "with the prior minus without (per space, overall):\n";
  for (const auto& name : o.strategies) {
    const auto* without = rows.at(name);
    const auto* with = rows.at(name + "+prior");
    std::string line = fmt::format("  {:<20}", name);
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < table.spaces.size(); ++i) {
      const double d = with->per_space[i] - without->per_space[i];
      line += fmt::format("  {:+.3f}", d);
      per[table.spaces[i]] = number_or_null(d);
    }
    const double d = with->overall - without->overall;
    std::cout << line << fmt::format("  overall {:+.3f}\n", d);
    deltas.push_back({{"strategy", name},
                      {"without", number_or_null(without->overall)},
                      {"with", number_or_null(with->overall)},
                      {"difference", number_or_null(d)},
                      {"per_space", per}});
  }
  std::cout << fmt::format("{} repeats per strategy and space, the same seeds with and without the prior; {:.1f} s\n",
                           a.repeats, wall_s);

  if (!a.json.empty()) {
    nlohmann::ordered_json j;
    j["date"] = db::utc_now_iso();
    j["command"] = a.command;
    j["what"] = "leave-one-out transfer: each space tuned with a prior from the recordings of its kernel on other "
                "GPUs or problems (--prior-from), and without; the same seeds, scored by the FGCS 2024 methodology";
    j["repeats"] = a.repeats;
    j["seed"] = a.seed;
    j["workers"] = o.workers;
    j["prior_seeds"] = search::kPriorSeeds;
    auto& js = j["spaces"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < spaces.size(); ++i) {
      nlohmann::ordered_json sources = nlohmann::ordered_json::array();
      for (const auto& u : priors[i]->uses())
        sources.push_back(prior_use_json(u));
      js.push_back({{"name", spaces[i].name()},
                    {"file", a.spaces[i]},
                    {"kernel", origins[i].kernel.name},
                    {"device", origins[i].device},
                    {"problem", origins[i].problem},
                    {"scored", !priors[i]->empty()},
                    {"prior", sources}});
    }
    auto& jr = j["strategies"] = nlohmann::ordered_json::array();
    for (const auto& r : table.rows) {
      nlohmann::ordered_json per = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < table.spaces.size(); ++i) per[table.spaces[i]] = number_or_null(r.per_space[i]);
      jr.push_back({{"strategy", r.strategy}, {"overall", number_or_null(r.overall)}, {"per_space", per}});
    }
    j["prior_minus_without"] = deltas;
    std::ofstream out(a.json);
    if (!out) throw InputError(fmt::format("--json {}: cannot be written", a.json));
    out << j.dump(1) << '\n';
  }
  return kOk;
}

}  // namespace cutune::cli
