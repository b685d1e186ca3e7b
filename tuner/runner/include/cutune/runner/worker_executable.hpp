#pragma once
// Where the worker processes come from (`cutune-worker compile`, `cutune-worker gpu`).
#include <string>

namespace cutune::runner {

/// The path of the worker executable: $CUTUNE_WORKER, else `cutune-worker` beside the
/// running executable (an installed or staged `cutune`), else the one in the build tree
/// this library was built in (the tests).
std::string worker_executable();

}  // namespace cutune::runner
