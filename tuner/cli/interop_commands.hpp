#pragma once
// Kernel Tuner interoperability on the command line: `cutune import` (a cache or
// T4 file into the store), `cutune export --format cache|t4` (from it), and the T1 writer
// behind `cutune space KERNEL --t1 OUT.json`. Each add_* registers its subcommand's options
// on the app; main() calls the cmd_* when that subcommand was given.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

#include "commands.hpp"

namespace cutune {
class KernelProblem;
struct ProblemInstance;
}  // namespace cutune

namespace cutune::cli {

struct ImportArgs {
  std::string file, db, kernel, problem;
  std::string kernel_name;  ///< without --kernel: the kernel's name where the file has none (T4)
  std::string device_name;  ///< where the file names no device (T4 without metadata.device)
  std::string command;
};
CLI::App* add_import(CLI::App& app, ImportArgs& args);
/// Reads the whole file and checks it (and the named kernel's space) before the store is
/// opened; then stores device, kernel, problem, a run marked as an import of the file, and
/// every entry, in one transaction. Entries already stored are skipped, so importing a file
/// twice stores nothing the second time.
int cmd_import(const ImportArgs& args);

/// `cutune export --format cache|t4|wisdom` (ExportArgs in commands.hpp): cache and t4 write one
/// kernel/problem/GPU's measurements as a Kernel Tuner file; wisdom is cmd_export_wisdom.
CLI::App* add_export(CLI::App& app, ExportArgs& args);
int cmd_export(const ExportArgs& args);

/// The problem as a T1 file Kernel Tuner's tune_kernel_T1 reads: the cutune section left out,
/// problem variables replaced by the instance's values (ProblemSize, argument sizes and
/// fills), KernelFile absolute. Throws InputError when `out` cannot be written.
void write_t1(const KernelProblem& problem, const ProblemInstance& instance, const std::filesystem::path& out);

}  // namespace cutune::cli
