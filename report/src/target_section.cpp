// The charts and tables of one target (kernel, problem, device).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "cutune/model/errors.hpp"
#include "cutune/search/scoring.hpp"
#include "sections.hpp"
#include "svg_chart.hpp"

namespace cutune::report {

using json = nlohmann::ordered_json;
using svg::Chart;
using svg::Series;

std::string html(const std::string& text) { return svg::escape(text); }

namespace {

constexpr int kWide = 860, kTall = 340;

// A log axis when the values span more than a factor 4: kernel times often span decades
// across a space, and on a linear axis the good ones, which matter, then sit on the floor.
bool spans_decades(const std::vector<double>& v) {
  double lo = INFINITY, hi = 0;
  for (double x : v)
    if (x > 0 && std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  return std::isfinite(lo) && hi / lo > 4;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  const double f = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}

std::string figure(const std::string& svg_text, const std::string& id, const std::string& caption) {
  return fmt::format("<figure id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", id, svg_text, caption);
}

// --- 1. best so far -----------------------------------------------------------------------

struct BestPoint {
  std::size_t evaluation;  ///< 1-based, within its run
  double end_s, best_ms;
};

std::vector<BestPoint> best_so_far(const TargetView& t, const RunView& r) {
  std::vector<BestPoint> out;
  double best = INFINITY;
  std::size_t n = 0;
  for (std::size_t i : r.evaluations) {
    ++n;
    const Evaluation& e = t.evaluations[i];
    if (e.ok() && e.median_ms < best) {
      best = e.median_ms;
      out.push_back({n, e.end_s, best});
    }
  }
  return out;
}

/// The calculated random-search expectation over the target's stored configurations
/// (search::SpaceScoring's baseline B(t) of the FGCS 2024 methodology); none when the
/// stored set cannot define one (fewer than two distinct valid values); in evaluations when
/// no costs were stored.
std::optional<search::SpaceScoring> random_baseline(const TargetView& t, std::string& why_not) {
  // The scoring reads only each entry's result and cost: one parameter numbering the stored
  // configurations is enough of a space for it.
  std::vector<search::RecordedSpace::Entry> entries;
  ValueList index;
  for (std::size_t i = 0; i < t.evaluations.size(); ++i) {
    const Evaluation& e = t.evaluations[i];
    index.emplace_back(static_cast<std::int64_t>(i));
    search::RecordedResult r;
    r.observation = {e.ok(), e.ok() ? e.median_ms : 0.0};
    r.cost_s = e.cost_s();
    entries.push_back({Config{{static_cast<std::uint32_t>(i)}}, r});
  }
  try {
    Parameter p{"stored", index, index.front()};
    search::RecordedSpace space(t.kernel, {p}, std::move(entries));
    return search::SpaceScoring(space);
  } catch (const InputError& e) {
    why_not = e.what();
    return std::nullopt;
  }
}

std::string best_so_far_charts(const TargetView& t, json& data) {
  std::string why_not;
  const auto baseline = random_baseline(t, why_not);
  std::vector<double> ys;
  double max_s = 0;
  std::size_t max_n = 0;
  std::vector<std::vector<BestPoint>> curves;
  for (const auto& r : t.runs) {
    curves.push_back(best_so_far(t, r));
    for (const auto& p : curves.back()) ys.push_back(p.best_ms);
    max_s = std::max(max_s, r.wall_s);
    max_n = std::max(max_n, r.evaluations.size());
  }
  json runs = json::array();
  for (std::size_t k = 0; k < t.runs.size(); ++k) {
    json pts = json::array();
    for (const auto& p : curves[k]) pts.push_back({p.evaluation, p.end_s, p.best_ms});
    runs.push_back({{"run", t.runs[k].id}, {"clock", clock_name(t.runs[k].clock)}, {"points", pts}});
  }
  data["best_so_far"] = {{"columns", {"evaluation", "elapsed_s", "best_ms"}}, {"runs", runs}};

  // The expectation at the evaluations and times of the chart.
  std::vector<std::pair<double, double>> rs_time, rs_evals;
  if (baseline) {
    const double tau = baseline->mean_cost_s();
    for (std::size_t m = 1; m <= std::max<std::size_t>(max_n, 1); ++m) {
      const double v = baseline->baseline(static_cast<double>(m) * tau);
      rs_evals.emplace_back(static_cast<double>(m), v);
      ys.push_back(v);
    }
    // Stored configurations without costs (imports of files that record none) are scored in
    // evaluations: their expectation has no time axis, only the chart against evaluations.
    const int steps = baseline->unit() == search::CostUnit::Seconds ? 200 : -1;
    for (int k = 0; k <= steps; ++k) {
      const double s = max_s * k / steps;
      rs_time.emplace_back(s, baseline->baseline(s));
    }
    json rs = json::array();
    for (const auto& [m, v] : rs_evals) rs.push_back({m, v});
    data["random_search"] = {{"stored_configurations", t.evaluations.size()},
                             {"valid", baseline->size()},
                             {"mean_cost_s", tau},
                             {"cost_unit", search::cost_unit_name(baseline->unit())},
                             {"optimum_ms", baseline->optimum()},
                             {"by_evaluations", rs}};
  } else {
    data["random_search"] = {{"none", why_not}};
  }

  const bool log_y = spans_decades(ys);
  const auto [y0, y1] = svg::domain(ys, log_y);
  const std::string y_label = "best median so far (ms)";
  const std::string sub = baseline ? fmt::format("dashed: random search, expected best of M uniform draws from the {} stored "
                                                 "configurations, {}",
                                                 t.evaluations.size(),
                                                 baseline->unit() == search::CostUnit::Seconds
                                                     ? fmt::format("M = t / {} s mean cost",
                                                                   svg::number(baseline->mean_cost_s(), 3))
                                                     : std::string("M = evaluations (no recorded costs)"))
                                   : "no random-search expectation: " + why_not;
  Chart by_time(kWide, kTall, "Best so far against wall time", "time since the run's start (s)", y_label);
  Chart by_evals(kWide, kTall, "Best so far against evaluations", "evaluations (configurations measured)", y_label);
  by_time.subtitle(sub);
  by_evals.subtitle(sub);
  by_time.x_axis(0, std::max(max_s, 1e-9) * 1.02, false);
  by_evals.x_axis(0, static_cast<double>(std::max<std::size_t>(max_n, 1)) * 1.02 + 0.5, false);
  by_time.y_axis(y0, y1, log_y);
  by_evals.y_axis(y0, y1, log_y);
  for (std::size_t k = 0; k < t.runs.size(); ++k) {
    const auto& r = t.runs[k];
    const std::string color = svg::palette()[k % svg::palette().size()];
    Series a{fmt::format("{} [{}]", r.label(), clock_name(r.clock)), color, {}, Series::Kind::Step};
    Series b{r.label(), color, {}, Series::Kind::Step};
    for (const auto& p : curves[k]) {
      a.xy.emplace_back(p.end_s, p.best_ms);
      b.xy.emplace_back(static_cast<double>(p.evaluation), p.best_ms);
    }
    if (!curves[k].empty()) {  // held to the run's end
      a.xy.emplace_back(r.wall_s, curves[k].back().best_ms);
      b.xy.emplace_back(static_cast<double>(r.evaluations.size()), curves[k].back().best_ms);
    }
    by_time.add(std::move(a));
    by_evals.add(std::move(b));
  }
  if (baseline) {
    if (!rs_time.empty()) by_time.add({"random search (expected)", "#555", rs_time, Series::Kind::Dashed});
    by_evals.add({"random search (expected)", "#555", rs_evals, Series::Kind::Dashed});
  }
  return figure(by_time.render(), "best-time",
                "Each run's best median so far; time is the run's clock (simulated: recorded costs summed; "
                "imports: Kernel Tuner's timestamps). The expectation is over the configurations the DB holds: "
                "after a search with a budget they are the ones it chose, and the expectation is then "
                "optimistic.") +
         figure(by_evals.render(), "best-evaluations", "The same against the number of configurations measured.");
}

// --- 2. where the time went ------------------------------------------------------------

struct Part {
  const char* name;
  const char* color;
};
constexpr Part kParts[] = {{"compile", "#4e79a7"},          {"module load", "#76b7b2"},
                           {"verification", "#f28e2b"},     {"timed samples", "#59a14f"},
                           {"recorded cost (simulated, not split)", "#b07aa1"},
                           {"idle / overhead", "#bab0ac"}};

std::string breakdown_chart(const TargetView& t, json& data) {
  std::vector<std::string> names;
  std::vector<std::array<double, 6>> parts;
  json runs = json::array();
  double max_x = 0;
  for (const auto& r : t.runs) {
    std::array<double, 6> p{};
    for (std::size_t i : r.evaluations) {
      const Evaluation& e = t.evaluations[i];
      p[0] += e.compile_s, p[1] += e.load_s, p[2] += e.verify_s, p[3] += e.sampling_s, p[4] += e.recorded_s;
      p[5] += e.overhead_s;
    }
    if (r.clock == Clock::Timestamps) {
      // Idle: the run's wall time the GPU side did not use. The compile pool works beside
      // the GPU, so its seconds count only where compiles were on the critical path.
      const double busy = p[1] + p[2] + p[3] + p[5] + (r.serial_compile ? p[0] : 0.0);
      p[5] += std::max(0.0, r.wall_s - busy);
    }
    names.push_back(r.label());
    parts.push_back(p);
    json j = {{"run", r.id}, {"wall_s", r.wall_s}, {"clock", clock_name(r.clock)}};
    for (std::size_t k = 0; k < 6; ++k) j[kParts[k].name] = p[k];
    runs.push_back(j);
    max_x = std::max({max_x, std::accumulate(p.begin(), p.end(), 0.0), r.wall_s});
  }
  data["time_breakdown_s"] = runs;
  const int height = 110 + 34 * static_cast<int>(t.runs.size());
  Chart c(kWide, height, "Where the time went", "seconds (summed over the run's configurations)", "");
  c.subtitle("black tick: the run's wall time; the compile pool runs beside the GPU, so its bar may pass it");
  c.x_axis(0, std::max(max_x, 1e-9) * 1.05, false);
  c.y_categories(names);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    double x = 0;
    const double y = static_cast<double>(k);
    for (std::size_t p = 0; p < 6; ++p) {
      if (parts[k][p] <= 0) continue;
      c.rect(x, y - 0.3, x + parts[k][p], y + 0.3, kParts[p].color,
             fmt::format("{}: {} s", kParts[p].name, svg::number(parts[k][p], 4)));
      x += parts[k][p];
    }
    if (t.runs[k].clock != Clock::Simulated) c.segment(t.runs[k].wall_s, y - 0.42, t.runs[k].wall_s, y + 0.42, "#000", 2.5);
  }
  for (std::size_t p = 0; p < 6; ++p)
    if (std::any_of(parts.begin(), parts.end(), [&](const auto& run) { return run[p] > 0; }))
      c.legend_box(kParts[p].name, kParts[p].color);
  return figure(c.render(), "time-breakdown",
                "Compile, module load, verification and timed samples summed over each run's configurations; "
                "idle is the rest of the run's wall time (Kernel Tuner's framework and strategy time for imports).");
}

// --- 3. distribution ---------------------------------------------------------------------

std::string distribution_charts(const TargetView& t, json& data) {
  std::vector<double> ok;
  std::map<std::string, std::size_t> statuses;
  for (const auto& e : t.evaluations) {
    if (e.ok()) ok.push_back(e.median_ms);
    ++statuses[e.ok() ? "ok" : status_name(e.status)];
  }
  std::sort(ok.begin(), ok.end());
  json counts = json::object();
  // In the order of the statuses' definition, ok first.
  const std::vector<std::string> order{"ok", "compile", "runtime", "correctness", "constraints", "timeout"};
  for (const auto& s : order)
    if (statuses.count(s)) counts[s] = statuses[s];
  data["status_counts"] = counts;
  if (!ok.empty())
    data["ok_medians_ms"] = {{"min", ok.front()},
                             {"q1", quantile(ok, 0.25)},
                             {"median", quantile(ok, 0.5)},
                             {"q3", quantile(ok, 0.75)},
                             {"max", ok.back()}};
  std::string out;
  const bool log_x = spans_decades(ok);
  const auto [x0, x1] = svg::domain(ok, log_x);
  Chart ecdf(kWide, kTall, "Distribution of the medians over the space (ECDF)", "median time (ms)",
             "fraction of valid configurations");
  ecdf.subtitle(fmt::format("{} valid of {} stored configurations; grey lines: the best and the median", ok.size(),
                            t.evaluations.size()));
  ecdf.x_axis(x0, x1, log_x);
  ecdf.y_axis(0, 1.0, false);
  Series s{"", svg::palette()[0], {}, Series::Kind::Step};
  // At most 400 steps: the curve looks the same and the page stays small for large spaces.
  const std::size_t n = ok.size(), stride = std::max<std::size_t>(1, n / 400);
  for (std::size_t i = 0; i < n; i += stride)
    s.xy.emplace_back(ok[i], static_cast<double>(i + 1) / static_cast<double>(n));
  if (n) s.xy.emplace_back(ok.back(), 1.0);
  ecdf.add(std::move(s));
  if (n) {
    for (double v : {ok.front(), quantile(ok, 0.5)}) ecdf.segment(v, 0, v, 1, "#999", 1);
  }
  out += figure(ecdf.render(), "distribution",
                "Share of the valid configurations at or below each median time.");

  // The statuses as one stacked bar, every evaluation counted.
  Chart bar(kWide, 150, "Status of every stored configuration", "share of configurations", "");
  bar.x_axis(0, 1, false);
  bar.y_categories({"all"});
  const std::map<std::string, std::string> colors{{"ok", "#59a14f"},      {"compile", "#e15759"},
                                                  {"runtime", "#f28e2b"}, {"correctness", "#b07aa1"},
                                                  {"constraints", "#bab0ac"}, {"timeout", "#9c755f"}};
  double x = 0;
  const double total = static_cast<double>(t.evaluations.size());
  for (const auto& s_name : order) {
    if (!statuses.count(s_name)) continue;
    const double share = static_cast<double>(statuses[s_name]) / total;
    bar.rect(x, -0.3, x + share, 0.3, colors.at(s_name), fmt::format("{}: {}", s_name, statuses[s_name]));
    if (share > 0.06) bar.text(x + share / 2, 0, fmt::format("{}", statuses[s_name]), "middle", 11);
    bar.legend_box(fmt::format("{} ({}, {}%)", s_name, statuses[s_name], svg::number(100 * share, 3)),
                   colors.at(s_name));
    x += share;
  }
  out += figure(bar.render(), "statuses", "Failures are data: every status, with its count.");
  return out;
}

// --- 4. parameter sensitivity -----------------------------------------------------------

struct ParameterView {
  std::string name;
  std::vector<std::string> values;             ///< in display order
  std::vector<std::vector<double>> medians;    ///< per value, sorted
  double spread = 1.0;                         ///< largest / smallest per-value median
};

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

std::string sensitivity_charts(const TargetView& t, json& data) {
  std::vector<ParameterView> params;
  std::map<std::string, std::map<std::string, std::vector<double>>> by;  // name -> value -> medians
  std::vector<std::string> order;
  for (const auto& e : t.evaluations) {
    if (!e.ok()) continue;
    for (const auto& [name, value] : e.parameters) {
      if (!by.count(name)) order.push_back(name);
      by[name][value].push_back(e.median_ms);
    }
  }
  std::vector<std::string> fixed;
  for (const auto& name : order) {
    auto& values = by[name];
    if (values.size() < 2) {
      fixed.push_back(name + "=" + values.begin()->first);
      continue;
    }
    ParameterView p{name, {}, {}, 1.0};
    for (const auto& [v, _] : values) p.values.push_back(v);
    if (std::all_of(p.values.begin(), p.values.end(), is_number))
      std::sort(p.values.begin(), p.values.end(),
                [](const std::string& a, const std::string& b) { return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr); });
    double lo = INFINITY, hi = 0;
    for (const auto& v : p.values) {
      auto m = values[v];
      std::sort(m.begin(), m.end());
      const double med = quantile(m, 0.5);
      lo = std::min(lo, med), hi = std::max(hi, med);
      p.medians.push_back(std::move(m));
    }
    p.spread = hi / lo;
    params.push_back(std::move(p));
  }
  // What matters most first.
  std::stable_sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.spread > b.spread; });
  json j = json::array();
  std::string out = "<div class=\"panels\">\n";
  for (const auto& p : params) {
    json values = json::array();
    std::vector<double> all;
    for (std::size_t k = 0; k < p.values.size(); ++k) {
      const auto& m = p.medians[k];
      values.push_back({{"value", p.values[k]},
                        {"count", m.size()},
                        {"min_ms", m.front()},
                        {"q1_ms", quantile(m, 0.25)},
                        {"median_ms", quantile(m, 0.5)},
                        {"q3_ms", quantile(m, 0.75)},
                        {"max_ms", m.back()}});
      all.insert(all.end(), m.begin(), m.end());
    }
    j.push_back({{"parameter", p.name}, {"spread", p.spread}, {"values", values}});
    const bool log_y = spans_decades(all);
    const auto [y0, y1] = svg::domain(all, log_y);
    Chart c(420, 300, fmt::format("{}: per-value medians differ {}x", p.name, svg::number(p.spread, 3)), p.name,
            "median time (ms)");
    c.x_categories(p.values);
    c.y_axis(y0, y1, log_y);
    Series strip{"", "#4e79a7", {}, Series::Kind::Points, 1.8, 0.35};
    for (std::size_t k = 0; k < p.values.size(); ++k) {
      const auto& m = p.medians[k];
      const double x = static_cast<double>(k);
      // Box: quartiles and median; whiskers: min and max.
      c.segment(x, m.front(), x, m.back(), "#555", 1);
      c.rect(x - 0.28, quantile(m, 0.25), x + 0.28, quantile(m, 0.75), "#f28e2b",
             fmt::format("{}={}: {} configurations, median {} ms", p.name, p.values[k], m.size(),
                         svg::number(quantile(m, 0.5), 4)));
      c.segment(x - 0.28, quantile(m, 0.5), x + 0.28, quantile(m, 0.5), "#000", 2);
      // The strip: at most 60 points per value, evenly over the sorted medians, spread
      // sideways (golden-ratio steps: even, and the same every time) so that equal times
      // do not hide each other.
      const std::size_t stride = std::max<std::size_t>(1, m.size() / 60);
      for (std::size_t i = 0; i < m.size(); i += stride) {
        const double jitter = std::fmod(static_cast<double>(i / stride) * 0.6180339887, 1.0);
        strip.xy.emplace_back(x - 0.42 + 0.12 * jitter, m[i]);
      }
    }
    c.add(std::move(strip));
    out += figure(c.render(), "sensitivity-" + html(p.name), fmt::format("{} (box: quartiles; whiskers: range)", html(p.name)));
  }
  out += "</div>\n";
  if (!fixed.empty()) out += fmt::format("<p>One value only: {}.</p>\n", html(fmt::format("{}", fmt::join(fixed, ", "))));
  if (params.empty()) out += "<p>No parameter takes two values among the valid configurations.</p>\n";
  data["sensitivity"] = j;
  return out;
}

// --- 5. top configurations ---------------------------------------------------------------

std::string top_table(const TargetView& t, const ReportOptions& options, json& data) {
  std::vector<const Evaluation*> ok;
  for (const auto& e : t.evaluations)
    if (e.ok()) ok.push_back(&e);
  std::stable_sort(ok.begin(), ok.end(), [](const Evaluation* a, const Evaluation* b) {
    return a->median_ms < b->median_ms || (a->median_ms == b->median_ms && a->key < b->key);
  });
  std::set<std::string> finalists;
  if (t.winner) {
    for (const auto& f : t.winner->finalists) finalists.insert(f.config.key());
  }
  const double default_ms = t.winner && t.winner->default_ms > 0 ? t.winner->default_ms : 0.0;
  std::string out = "<table class=\"top\">\n<tr><th>#</th><th>configuration</th><th>median (ms)</th><th>95% interval "
                    "(ms)</th><th>samples</th><th title=\"registers per thread\">regs</th><th title=\"local memory per thread: "
                    "spills and stack arrays\">local (B)</th><th title=\"shared memory per block, static plus dynamic\">"
                    "shared (B)</th><th>occupancy</th><th>verdict</th><th>speedup over default</th></tr>\n";
  json rows = json::array();
  for (std::size_t i = 0; i < std::min(options.top, ok.size()); ++i) {
    const Evaluation& e = *ok[i];
    std::string verdict = "screening";
    if (t.winner && e.key == t.winner->config.key()) verdict = std::string("winner, ") + verdict_name(t.winner->verdict);
    else if (finalists.count(e.key)) verdict = "finalist";
    std::string params;
    for (const auto& [n, v] : e.parameters) params += (params.empty() ? "" : ", ") + n + "=" + v;
    const std::string interval = e.ci_low_ms && e.ci_high_ms
                                     ? fmt::format("{} .. {}", svg::number(*e.ci_low_ms, 5), svg::number(*e.ci_high_ms, 5))
                                     : "not stored";
    const std::string speedup = default_ms > 0 ? svg::number(default_ms / e.median_ms, 3) + "x" : "n/a";
    // Beside the time, what the configuration costs the GPU; "-" where its row kept none.
    const auto& r = e.resources;
    const std::string resources =
        r ? fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td>", r->registers, r->local_bytes,
                        r->shared_bytes(), r->occupancy ? fmt::format("{:.0f}%", *r->occupancy * 100.0) : "-")
          : "<td>-</td><td>-</td><td>-</td><td>-</td>";
    out += fmt::format("<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td></tr>\n",
                       i + 1, html(params), html(e.key), svg::number(e.median_ms, 5), interval, e.samples, resources,
                       verdict, speedup);
    json row = {{"key", e.key}, {"median_ms", e.median_ms}};
    row["ci_ms"] = e.ci_low_ms && e.ci_high_ms ? json::array({*e.ci_low_ms, *e.ci_high_ms}) : json(nullptr);
    row["samples"] = e.samples;
    row["resources"] = r ? json(to_json(*r)) : json(nullptr);
    row["verdict"] = verdict;
    row["speedup_over_default"] = default_ms > 0 ? json(default_ms / e.median_ms) : json(nullptr);
    rows.push_back(row);
  }
  out += "</table>\n";
  out += default_ms > 0 ? fmt::format("<p>Default configuration: {} ms (the tuning run's own measurement).</p>\n",
                                      svg::number(default_ms, 5))
                        : "<p>Speedup over the default: n/a (no default measured with this winner: imported or "
                          "simulated data).</p>\n";
  data["top"] = rows;
  data["default_ms"] = default_ms > 0 ? json(default_ms) : json(nullptr);
  return out;
}

// --- 8. energy ---------------------------------------------------------------------------

std::string energy_chart(const TargetView& t, json& data) {
  std::vector<std::pair<double, double>> pts;
  std::vector<std::string> keys;
  for (const auto& e : t.evaluations)
    if (e.ok() && e.energy_mj && std::isfinite(*e.energy_mj)) {
      pts.emplace_back(e.median_ms, *e.energy_mj);
      keys.push_back(e.key);
    }
  if (pts.empty()) {
    data["energy"] = nullptr;
    return "<p class=\"note\">No energy measured for this target (<code>cutune tune --energy</code> measures it "
           "for every configuration).</p>\n";
  }
  // The Pareto front: no other configuration is both faster and uses less energy.
  std::vector<std::size_t> idx(pts.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return pts[a] < pts[b] || (pts[a] == pts[b] && keys[a] < keys[b]);
  });
  std::vector<std::size_t> front;
  double best_energy = INFINITY;
  for (std::size_t i : idx)
    if (pts[i].second < best_energy) {
      best_energy = pts[i].second;
      front.push_back(i);
    }
  json f = json::array();
  Series all{"configurations", "#4e79a7", pts, Series::Kind::Points, 2.5, 0.5};
  Series line{"Pareto front", "#e15759", {}, Series::Kind::Line};
  for (std::size_t i : front) {
    line.xy.push_back(pts[i]);
    f.push_back({{"key", keys[i]}, {"median_ms", pts[i].first}, {"energy_mj", pts[i].second}});
  }
  data["energy"] = {{"measured", pts.size()}, {"pareto_front", f}};
  std::vector<double> xs, ys;
  for (const auto& [x, y] : pts) xs.push_back(x), ys.push_back(y);
  const auto [x0, x1] = svg::domain(xs, spans_decades(xs));
  const auto [y0, y1] = svg::domain(ys, spans_decades(ys));
  Chart c(kWide, kTall, "Energy against time", "median time (ms)", "energy per launch (mJ)");
  c.subtitle(fmt::format("{} configurations with energy measured; the front: none other is both faster and cheaper",
                         pts.size()));
  c.x_axis(x0, x1, spans_decades(xs));
  c.y_axis(y0, y1, spans_decades(ys));
  c.add(std::move(all));
  c.add(std::move(line));
  return figure(c.render(), "energy", "Energy per launch (NVML) against the median time.");
}

std::string runs_table(const TargetView& t, json& data) {
  std::string out = "<table class=\"runs\">\n<tr><th>run</th><th>strategy</th><th>seed</th><th>configurations</th>"
                    "<th>clock</th><th>wall (s)</th><th>started</th><th>command</th></tr>\n";
  json runs = json::array();
  for (const auto& r : t.runs) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
                       r.id ? std::to_string(r.id) : "none", html(r.strategy), r.seed, r.evaluations.size(),
                       clock_name(r.clock), svg::number(r.wall_s, 4), html(r.started_at), html(r.command));
    runs.push_back({{"id", r.id},
                    {"strategy", r.strategy},
                    {"seed", r.seed},
                    {"command", r.command},
                    {"started_at", r.started_at},
                    {"finished_at", r.finished_at},
                    {"configurations", r.evaluations.size()},
                    {"clock", clock_name(r.clock)},
                    {"wall_s", r.wall_s}});
  }
  data["runs"] = runs;
  return out + "</table>\n";
}

}  // namespace

std::string target_section(const TargetView& t, const ReportOptions& options, json& data) {
  data["kernel"] = t.kernel;
  data["problem"] = t.problem;
  data["gpu_model"] = t.gpu_model;
  data["device"] = t.device_name;
  data["configurations"] = t.evaluations.size();
  if (t.winner)
    data["winner"] = {{"key", t.winner->config.key()},
                      {"median_ms", t.winner->median_ms},
                      {"verdict", verdict_name(t.winner->verdict)},
                      {"run", t.winner->run_id}};
  std::string out;
  out += runs_table(t, data);
  out += "<h3>Best so far, against random search</h3>\n" + best_so_far_charts(t, data);
  out += "<h3>Where the time went</h3>\n" + breakdown_chart(t, data);
  out += "<h3>Distribution and failures</h3>\n" + distribution_charts(t, data);
  out += "<h3>Parameter sensitivity</h3>\n" + sensitivity_charts(t, data);
  out += "<h3>Top configurations</h3>\n" + top_table(t, options, data);
  out += "<h3>Energy against time</h3>\n" + energy_chart(t, data);
  // The stored rows themselves, compactly: key, status, median, cost, end on the run's clock.
  json rows = json::array();
  for (const auto& e : t.evaluations)
    rows.push_back({e.key, e.ok() ? "ok" : status_name(e.status), e.median_ms, e.cost_s(), e.end_s, e.run_id});
  data["evaluations"] = {{"columns", {"key", "status", "median_ms", "cost_s", "elapsed_s", "run"}}, {"rows", rows}};
  return out;
}

}  // namespace cutune::report
