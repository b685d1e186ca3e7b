#pragma once
// Checks of option values that CLI11 does not make, or makes with an unreadable message:
// attached to the options where they are declared (->check(...)), so that bad input is one
// line, exit 2, before anything is read or written.
#include <CLI/CLI.hpp>
#include <cstdint>

namespace cutune::cli {

/// A whole number >= `min` for an unsigned option. CLI11 2.1 reads "-1" into an unsigned
/// with strtoull, as 2^64 - 1: `--seed -1` was accepted and `--budget -5` ran the whole space.
CLI::Validator whole_number(std::uint64_t min = 0);
/// Seconds > 0. CLI::PositiveNumber says "not in range 0 to <a 300-digit number>".
CLI::Validator positive_seconds();
/// A file this command will create: its directory must exist. `--db dir/x.db` with `dir`
/// missing was created silently (a typo made a new DB nobody looks at); an export into a
/// missing directory failed naming its temporary file.
CLI::Validator directory_exists_for_output();

}  // namespace cutune::cli
