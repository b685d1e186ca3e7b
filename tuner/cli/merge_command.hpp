#pragma once
// `cutune merge A.db B.db ... -o ALL.db`: shards of a space, tuned as independent jobs into
// their own DBs, combined into one (db::Store::merge_from says how rows are matched).
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cutune::cli {

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
};
CLI::App* add_merge(CLI::App& app, MergeArgs& args);
/// Every input is opened (read-only) and checked before the output is touched: a file that
/// is not a cutune DB, or has a newer schema, is refused (InputError) with no output created
/// or modified. A new output is written beside its path and renamed into place once
/// complete; an existing one is merged into as one transaction.
int cmd_merge(const MergeArgs& args);

}  // namespace cutune::cli
