// cutune export --format wisdom: the stored winners as a deployment file for cutune::loader.
// Reads the DB only; the file is written atomically.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "cutune/formats/wisdom.hpp"

namespace cutune::cli {

int cmd_export_wisdom(const ExportArgs& a) {
  const std::filesystem::path path = a.db.empty() ? default_db_path() : std::filesystem::path(a.db);
  const db::Store store = db::Store::open(path, /*create=*/false);
  const auto entries = db::wisdom_from_store(store, {a.kernel, a.gpu, a.problem, a.objective});
  // Selectors are per kernel and GPU model, not per problem: a --problem filter keeps them all.
  const auto selectors = store.selectors({a.kernel, a.gpu, "", a.objective});
  db::write_wisdom(a.output, entries, selectors);
  std::cerr << fmt::format("cutune: {} winner{}{} written to {}\n", entries.size(), entries.size() == 1 ? "" : "s",
                           selectors.empty() ? std::string()
                                             : fmt::format(" and {} selector{}", selectors.size(),
                                                           selectors.size() == 1 ? "" : "s"),
                           a.output);
  return kOk;
}

}  // namespace cutune::cli
