#pragma once
// `cutune run KERNEL [--config k=v,...] [--problem P] [--device N] [--compiler C] --outputs DIR`:
// one configuration run once, unverified and untimed (Kernel Tuner's run_kernel), every
// argument's contents after the run written to DIR (what the Python package's run_kernel
// returns):
//   DIR/outputs.json  {"kernel", "config", "problem", "device", "compiler", "compile_ms",
//                      "arguments": [{"name", "type" (T1), "dtype" (numpy), "vector",
//                                     "count", "bytes", "file"}, ...]}
//   DIR/<i>.bin       argument i's bytes, little-endian, as numpy's tofile writes them
#include <string>

namespace CLI {
class App;
}

namespace cutune::cli {

struct RunArgs {
  std::string kernel, problem, config, compiler, outputs;
  int device = 0;
};
CLI::App* add_run(CLI::App& app, RunArgs& args);
/// Exit 0 with the files written; 1 when the configuration did not compile or run (the
/// message says which, nothing written); InputError for bad input; NoDriver without a GPU.
int cmd_run(const RunArgs& args);

}  // namespace cutune::cli
