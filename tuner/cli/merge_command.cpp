#include "merge_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "option_checks.hpp"
#include "cutune/db/store.hpp"
#include "cutune/model/errors.hpp"

namespace cutune::cli {

namespace fs = std::filesystem;

CLI::App* add_merge(CLI::App& app, MergeArgs& args) {
  auto* merge = app.add_subcommand(
      "merge", "Combine cutune DBs (shards run as separate jobs) into one: measurements, runs, winners recomputed");
  merge->add_option("DB", args.inputs, "The DBs to merge, in order: where two hold the same measurement, the "
                                       "output's own comes first, then the first DB named")
      ->required();
  merge->add_option("-o,--output", args.output, "The DB to merge into (created when missing; may be an input)")
      ->required()
      ->check(directory_exists_for_output());
  return merge;
}

int cmd_merge(const MergeArgs& args) {
  // Read-only opens check each input and touch none of them.
  std::vector<db::Store> inputs;
  for (const auto& path : args.inputs) inputs.push_back(db::Store::open(path, /*create=*/false));

  const fs::path out(args.output);
  const bool exists = fs::exists(out);
  // A new DB is built under a temporary name and renamed when complete, so that a failure
  // leaves no half-merged file behind; an existing one takes the merge as one transaction.
  const fs::path target = exists ? out : fs::path(out.string() + fmt::format(".merging-{}", ::getpid()));
  db::Store::MergeStats total;
  try {
    std::optional<db::Store> store(db::Store::open(target, /*create=*/true));
    store->transaction([&] {
      for (const auto& input : inputs) {
        const auto s = store->merge_from(input);
        total.devices_added += s.devices_added;
        total.runs_added += s.runs_added;
        total.measurements_added += s.measurements_added;
        total.measurements_present += s.measurements_present;
        total.winners_written += s.winners_written;
      }
      return true;
    });
    store.reset();  // closes: the WAL is checkpointed into the file before it moves
    if (!exists) fs::rename(target, out);
  } catch (...) {
    if (!exists) {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(target.string() + suffix, ec);
    }
    throw;
  }
  std::cout << fmt::format(
      "merged {} DB(s) into {}: {} runs, {} measurements added ({} already there, kept), {} devices added, "
      "{} winners written\n",
      inputs.size(), out.string(), total.runs_added, total.measurements_added, total.measurements_present,
      total.devices_added, total.winners_written);
  return kOk;
}

}  // namespace cutune::cli
