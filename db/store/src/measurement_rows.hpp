#pragma once
// The measurements table's row reader, shared by the store and its merge, so that a row
// becomes a Measurement in one place. Private to cutune::db.
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

}  // namespace cutune::db::detail
