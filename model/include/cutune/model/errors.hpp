#pragma once
// Error kinds that cross layer boundaries. The CLI maps InputError to exit code 2 with
// its one-line message; everything else is a bug or an environment failure (exit 1).
#include <stdexcept>
#include <string>

namespace cutune {

/// Bad user input: a file, field, name or value that does not make sense. what() is one
/// line that names the offending file/field/value.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cutune
