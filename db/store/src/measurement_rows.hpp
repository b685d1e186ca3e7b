#pragma once
// The measurements table's row reader, and the kernels' function writer, shared by the store
// and its merge, so that each is done in one place. Private to cutune::db.
#include <filesystem>

#include "cutune/db/store.hpp"
#include "sqlite_handle.hpp"

namespace cutune::db::detail {

/// The columns read_measurement reads, in its order (unqualified: select them from
/// `measurements` alone).
extern const char* const kMeasurementColumns;
/// The measurement in the current row of `st` (selected with kMeasurementColumns first);
/// throws InputError naming `path` and the row for a value that cannot be read.
Measurement read_measurement(const Statement& st, const std::filesystem::path& path);

/// Stores `function` as the kernel's function name where the row has none ("" changes nothing):
/// rows stored before schema 4, or by an import that could not tell, learn it this way.
void learn_kernel_function(sqlite3* db, std::int64_t kernel_id, const std::string& function);

}  // namespace cutune::db::detail
