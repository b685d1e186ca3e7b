#pragma once
// What `cutune query` prints of the winners it found: a table for people, or JSON.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"

namespace cutune::cli {

/// The winners as a JSON array, one object each (query --json).
nlohmann::ordered_json winners_json(const std::vector<db::Winner>& winners);

/// The winners as a table: a heading, then a row each, columns as wide as their longest entry.
void print_winner_table(std::ostream& out, const std::vector<db::Winner>& winners);

/// A GPU model key for people: an imported or simulated device whose compute capability
/// the file did not give is keyed "NAME/sm_00"; shown as its name.
std::string gpu_label(const std::string& model_key);

}  // namespace cutune::cli
