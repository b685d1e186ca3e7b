#pragma once
// Shape sweeps: `tune --sweep`, `distill` and `select` (sweep_commands.cpp).
#include <CLI/CLI.hpp>
#include <string>

#include "commands.hpp"
#include "cutune/worker/measure_options.hpp"

namespace cutune::cli {

/// --l2, --samples... as the worker's options (commands.cpp); throws InputError.
worker::MeasureOptions measure_options(const MeasureArgs& args);

/// `tune KERNEL --sweep TEXT`: one tuning per shape (model/shape_sweep.hpp has the syntax), in
/// one process and into one DB, each with every option of `tune`. The cubin cache is keyed by
/// content and a configuration's cubin does not depend on the problem, so every shape after
/// the first compiles nothing it compiled before; each shape's strategy starts from a prior of
/// the shapes already stored (--prior auto, the default). Checks the whole sweep first.
int cmd_tune_sweep(const TuneArgs& args, const std::string& sweep, bool allow_large);

struct DistillArgs {
  std::string kernel, sweep, db, gpu, json;
  double bound = 0.05;
  std::size_t top_k = 3;
  int device = 0;
  bool no_measure = false, yes = false;
  MeasureArgs measure;
};
CLI::App* add_distill(CLI::App& app, DistillArgs& args);
/// Measures the cross matrix on the GPU (unless --no-measure), stores it, distills it and
/// stores the selector (export --format wisdom carries it).
int cmd_distill(const DistillArgs& args);

struct SelectArgs {
  std::string kernel, problem, winners, gpu, objective;
  bool no_selectors = false, json = false;
};
CLI::App* add_select(CLI::App& app, SelectArgs& args);
/// What cutune::loader selects for a kernel, problem and GPU model (CPU only): the same code.
int cmd_select(const SelectArgs& args);

}  // namespace cutune::cli
