#include "report_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/report/report.hpp"

namespace cutune::cli {

namespace fs = std::filesystem;

CLI::App* add_report(CLI::App& app, ReportArgs& args) {
  auto* report = app.add_subcommand(
      "report", "Write one self-contained HTML page with charts (inline SVG) and the data (JSON) of a DB");
  report->add_option("--db", args.db, "SQLite database (default as for tune)");
  report->add_option("--kernel", args.kernel, "Kernel name");
  report->add_option("--problem", args.problem, "Problem key, e.g. n=268435456");
  report->add_option("--gpu", args.gpu, "GPU name or model (substring)");
  report->add_option("--run", args.run, "Only this run's measurements (its id: the page's runs table lists them)")
      ->check(CLI::PositiveNumber);
  report->add_option("--compare", args.compare, "Another cutune DB to compare with, per kernel, problem and GPU");
  report->add_option("--threshold", args.threshold,
                     "With --compare: a change is reported beyond this relative difference, and only when the "
                     "medians' intervals are apart (default 0.05)")
      ->check(CLI::Range(0.0, 10.0));
  report->add_option("-o,--output", args.output, "The HTML file to write")->required();
  return report;
}

int cmd_report(const ReportArgs& args) {
  const fs::path db_path = args.db.empty() ? default_db_path() : fs::path(args.db);
  if (!fs::exists(db_path)) throw InputError(fmt::format("--db {}: no such file", db_path.string()));
  // Read-only: a report writes nothing into the DBs it reads.
  const db::Store store = db::Store::open(db_path, /*create=*/false);
  std::optional<db::Store> other;
  if (!args.compare.empty()) {
    if (!fs::exists(args.compare)) throw InputError(fmt::format("--compare {}: no such file", args.compare));
    other.emplace(db::Store::open(args.compare, /*create=*/false));
  }
  report::ReportOptions o;
  o.kernel = args.kernel;
  o.problem = args.problem;
  o.gpu = args.gpu;
  o.run = args.run;
  o.db_label = db_path.string();
  o.compare = other ? &*other : nullptr;
  o.compare_label = args.compare;
  o.change_threshold = args.threshold;
  const std::string page = report::render_report(store, o);

  const fs::path out(args.output);
  // The page must never replace a DB it reads.
  for (const fs::path& in : {db_path, fs::path(args.compare)}) {
    std::error_code ec;
    if (!in.empty() && fs::exists(out) && fs::equivalent(out, in, ec))
      throw InputError(fmt::format("-o {}: is the DB {} (the report needs a file of its own)", args.output, in.string()));
  }
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw InputError(fmt::format("-o {}: the directory {} does not exist", args.output, dir.string()));
  if (fs::is_directory(out)) throw InputError(fmt::format("-o {}: is a directory", args.output));
  // Written whole under a temporary name and renamed, so that a failure leaves no half page.
  const fs::path tmp = fs::path(out.string() + fmt::format(".writing-{}", ::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw InputError(fmt::format("-o {}: cannot be written in {}", args.output, dir.string()));
    f << page;
    f.close();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError(fmt::format("-o {}: writing failed", args.output));
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(fmt::format("-o {}: cannot be written", args.output));
  }
  std::cout << fmt::format("report: {} ({} KiB)\n", out.string(), (page.size() + 1023) / 1024);
  return kOk;
}

}  // namespace cutune::cli
