// The page: its head and style, one section per target, the across-GPU matrix, --compare,
// and the data as JSON.
#include "cutune/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report_data.hpp"
#include "sections.hpp"
#include "svg_chart.hpp"

namespace cutune::report {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kStyle = R"css(
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { font-size: 24px; } h2 { font-size: 20px; border-bottom: 2px solid #4e79a7; padding-bottom: 4px; margin-top: 40px; }
h3 { font-size: 16px; margin-top: 28px; }
figure { margin: 12px 0; } figcaption { font-size: 12px; color: #555; max-width: 860px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f7; }
td code { font-size: 11px; word-break: break-all; }
.panels { display: flex; flex-wrap: wrap; gap: 8px; }
.panels figure { margin: 0; }
.note { color: #555; }
.faster { background: #d8efd3; } .slower { background: #f6d3d3; }
nav li { margin: 2px 0; }
)css";

std::string anchor(std::size_t i) { return fmt::format("target-{}", i + 1); }

}  // namespace

// --- 6. across GPUs --------------------------------------------------------------------------

std::string across_gpus_section(const db::Store& store, const std::vector<TargetView>& targets, json& data) {
  std::vector<std::pair<std::string, std::string>> done;  // kernel, problem
  std::string out;
  json groups = json::array();
  for (const auto& t : targets) {
    const std::pair kp{t.kernel, t.problem};
    if (std::find(done.begin(), done.end(), kp) != done.end()) continue;
    done.push_back(kp);
    const auto models = medians_by_model(store, t.kernel, t.problem);
    std::vector<const ModelMedians*> with_best;
    for (const auto& m : models)
      if (m.best()) with_best.push_back(&m);
    if (with_best.size() < 2) continue;
    // cell (row r, column c): column's best / row's winner's median on the column: 1 is
    // the column GPU's own optimum, 0.5 half its speed.
    std::vector<std::string> names;
    for (const auto* m : with_best) names.push_back(m->gpu_model);
    svg::Chart c(std::max(860, 300 + 200 * static_cast<int>(with_best.size())), 120 + 46 * static_cast<int>(with_best.size()),
                 fmt::format("{} {}: each GPU's winner on the others", t.kernel, t.problem),
                 "measured on (GPU model)", "");
    c.subtitle("cell: that GPU's best median / the row's winner's median there (1 = its optimum too)");
    c.x_categories(names);
    c.y_categories([&] {
      std::vector<std::string> rows;
      for (const auto& name : names) rows.push_back("winner of " + name);
      return rows;
    }());
    json matrix = json::array();
    for (std::size_t r = 0; r < with_best.size(); ++r) {
      const auto winner = *with_best[r]->best();
      json row = json::array();
      for (std::size_t col = 0; col < with_best.size(); ++col) {
        const ModelMedians& on = *with_best[col];
        const double best = on.best()->second;
        const auto there = on.median(winner.first);
        std::string label, color = "#eee";
        if (there) {
          const double rel = best / *there;
          label = svg::number(rel, 3);
          // Green at 1, through yellow, to red at 0.5 and below.
          const double f = std::clamp((rel - 0.5) / 0.5, 0.0, 1.0);
          const int red = static_cast<int>(std::lround(f < 0.5 ? 230 : 230 - (f - 0.5) * 2 * 140));
          const int green = static_cast<int>(std::lround(f < 0.5 ? 90 + f * 2 * 130 : 220));
          color = fmt::format("#{:02x}{:02x}70", red, green);
          row.push_back(rel);
        } else if (const auto failed = on.failure(winner.first)) {
          label = "failed: " + *failed;
          color = "#c9c9c9";
          row.push_back(*failed);
        } else {
          label = "not measured";
          row.push_back(nullptr);
        }
        const double y = static_cast<double>(r), x = static_cast<double>(col);
        c.rect(x - 0.48, y - 0.45, x + 0.48, y + 0.45, color,
               fmt::format("winner of {} ({}) on {}", names[r], winner.first, names[col]));
        c.text(x, y, label, "middle", 12);
      }
      matrix.push_back({{"winner_of", names[r]}, {"key", winner.first}, {"median_ms", winner.second}, {"relative", row}});
    }
    groups.push_back({{"kernel", t.kernel}, {"problem", t.problem}, {"gpu_models", names}, {"rows", matrix}});
    out += fmt::format("<figure id=\"across-{}\">\n{}<figcaption>Rows: the configuration that wins on a GPU "
                       "model; columns: where it was measured or recorded. What a fallback to another GPU's "
                       "winner costs.</figcaption>\n</figure>\n",
                       groups.size(), c.render());
  }
  data["across_gpus"] = groups;
  if (groups.empty())
    out = "<p class=\"note\">No kernel and problem of this report is measured on two GPU models in the DB.</p>\n";
  return out;
}

// --- 7. --compare ------------------------------------------------------------------------

std::string compare_section(const db::Store& store, const std::vector<TargetView>& targets,
                            const ReportOptions& options, json& data) {
  (void)store;
  const db::Store& other = *options.compare;
  std::string out = fmt::format(
      "<p>This DB against <code>{}</code>. A change is reported when the medians' 95% intervals are apart and "
      "the medians differ by more than {}%; otherwise the two are the same within the noise. A median stored "
      "without its interval (simulations, some imports) counts as an interval of its own width, zero.</p>\n"
      "<table class=\"compare\">\n<tr><th>kernel</th><th>problem</th><th>GPU model</th><th>best here (ms)</th>"
      "<th>best there (ms)</th><th>there / here</th><th>verdict</th><th>configurations in both: faster / slower "
      "/ same</th></tr>\n",
      html(options.compare_label), svg::number(100 * options.change_threshold, 3));
  json rows = json::array();
  std::vector<std::tuple<std::string, std::string, std::string>> seen;
  auto interval = [](const ModelMedians& m, const std::string& key, double median) {
    return m.interval(key).value_or(std::pair{median, median});
  };
  // -1 here faster, +1 here slower, 0 the same within the noise.
  auto verdict = [&](double here, std::pair<double, double> ih, double there, std::pair<double, double> it) {
    const bool apart = ih.second < it.first || it.second < ih.first;
    if (!apart || std::fabs(there / here - 1.0) <= options.change_threshold) return 0;
    return here < there ? -1 : 1;
  };
  for (const auto& t : targets) {
    const std::tuple key{t.kernel, t.problem, t.gpu_model};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    const auto here_models = medians_by_model(store, t.kernel, t.problem);
    const auto there_models = medians_by_model(other, t.kernel, t.problem);
    const ModelMedians* here = nullptr;
    const ModelMedians* there = nullptr;
    for (const auto& m : here_models)
      if (m.gpu_model == t.gpu_model) here = &m;
    for (const auto& m : there_models)
      if (m.gpu_model == t.gpu_model) there = &m;
    json row = {{"kernel", t.kernel}, {"problem", t.problem}, {"gpu_model", t.gpu_model}};
    if (!here || !here->best() || !there || !there->best()) {
      row["verdict"] = !there ? "only here" : "no valid measurement on one side";
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td colspan=\"5\">{}</td></tr>\n", html(t.kernel),
                         html(t.problem), html(t.gpu_model), row["verdict"].get<std::string>());
      rows.push_back(row);
      continue;
    }
    const auto [hk, hm] = *here->best();
    const auto [tk, tm] = *there->best();
    const int v = verdict(hm, interval(*here, hk, hm), tm, interval(*there, tk, tm));
    std::size_t faster = 0, slower = 0, same = 0;
    for (const auto& [k, ms] : here->ok)
      if (const auto o = there->median(k)) {
        const int cv = verdict(ms, interval(*here, k, ms), *o, interval(*there, k, *o));
        (cv < 0 ? faster : cv > 0 ? slower : same)++;
      }
    const char* word = v < 0 ? "faster here" : v > 0 ? "slower here" : "same";
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{} <code>{}</code></td><td>{} <code>{}</code></td>"
        "<td>{}</td><td>{}</td><td>{} / {} / {}</td></tr>\n",
        v < 0 ? "faster" : v > 0 ? "slower" : "", html(t.kernel), html(t.problem), html(t.gpu_model),
        svg::number(hm, 5), html(hk), svg::number(tm, 5), html(tk), svg::number(tm / hm, 4), word, faster, slower,
        same);
    row["here"] = {{"key", hk}, {"median_ms", hm}};
    row["there"] = {{"key", tk}, {"median_ms", tm}};
    row["ratio_there_over_here"] = tm / hm;
    row["verdict"] = word;
    row["configurations"] = {{"faster_here", faster}, {"slower_here", slower}, {"same", same}};
    rows.push_back(row);
  }
  out += "</table>\n";
  data["compare"] = {{"other", options.compare_label}, {"threshold", options.change_threshold}, {"targets", rows}};
  return out;
}

std::string render_report(const db::Store& store, const ReportOptions& options) {
  const auto targets = collect_targets(store, options);
  const std::string db_label = options.db_label.empty() ? store.path().string() : options.db_label;
  json data;
  data["cutune_report"] = 1;
  data["db"] = db_label;
  data["filters"] = {{"kernel", options.kernel},
                     {"problem", options.problem},
                     {"gpu", options.gpu},
                     {"run", options.run ? json(*options.run) : json(nullptr)}};
  std::string body;
  body += fmt::format("<h1>cutune report</h1>\n<p>DB <code>{}</code>: {} target(s) (kernel, problem, device)",
                      html(db_label), targets.size());
  std::vector<std::string> filters;
  if (!options.kernel.empty()) filters.push_back("kernel " + options.kernel);
  if (!options.problem.empty()) filters.push_back("problem " + options.problem);
  if (!options.gpu.empty()) filters.push_back("GPU " + options.gpu);
  if (options.run) filters.push_back(fmt::format("run {}", *options.run));
  if (!filters.empty()) body += html(fmt::format(", filtered to {}", fmt::join(filters, ", ")));
  body += ".</p>\n<nav><ul>\n";
  for (std::size_t i = 0; i < targets.size(); ++i)
    body += fmt::format("<li><a href=\"#{}\">{} · {} · {}</a> ({} configurations)</li>\n", anchor(i),
                        html(targets[i].kernel), html(targets[i].problem), html(targets[i].gpu_model),
                        targets[i].evaluations.size());
  body += "<li><a href=\"#across-gpus\">Across GPUs</a></li>\n";
  if (options.compare) body += "<li><a href=\"#compare\">Compared with another DB</a></li>\n";
  body += "</ul></nav>\n";
  json target_data = json::array();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto& t = targets[i];
    json d;
    body += fmt::format("<section id=\"{}\">\n<h2>{} · {} · {}</h2>\n", anchor(i), html(t.kernel), html(t.problem),
                        html(t.device_name.empty() ? t.gpu_model : t.device_name + " (" + t.gpu_model + ")"));
    body += target_section(t, options, d);
    body += "</section>\n";
    target_data.push_back(std::move(d));
  }
  data["targets"] = std::move(target_data);
  body += "<section id=\"across-gpus\">\n<h2>Across GPUs</h2>\n" + across_gpus_section(store, targets, data) +
          "</section>\n";
  if (options.compare)
    body += "<section id=\"compare\">\n<h2>Compared with another DB</h2>\n" +
            compare_section(store, targets, options, data) + "</section>\n";

  // The data, where a script or a person can read it back. Every "<" (only ever inside a
  // string: a kernel name, a command) is written \u003c, so that nothing in it can end the
  // script element or open a comment there.
  std::string payload;
  for (char ch : data.dump(1)) {
    if (ch == '<') payload += "\\u003c";
    else payload += ch;
  }
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cutune report: "
                     "{}</title>\n<style>{}</style>\n</head>\n<body>\n{}<script type=\"application/json\" "
                     "id=\"cutune-report-data\">\n{}\n</script>\n</body>\n</html>\n",
                     html(db_label), kStyle, body, payload);
}

}  // namespace cutune::report
