#pragma once
// Readers of the sections of a T1 file that KernelProblem::load puts together, one call
// per section in the order load reads them (the order decides which of several faults a
// file reports). Each returns what it read; they fail through Loader, naming the field.
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cutune/model/problem.hpp"
#include "cutune/model/space.hpp"
#include "problem_fields.hpp"

namespace cutune::detail {

// ---- ConfigurationSpace (t1_configuration_space.cpp)

struct TuningParameters {
  std::vector<Parameter> parameters;
  /// "<name> Default <value> <why>" for each Default that is not one of its parameter's
  /// Values (or not of its Type, or not a single value): Kernel Tuner has no defaults and
  /// BAT's files carry such ones, so they are reported, and the first value stands in.
  std::vector<std::string> bad_defaults;
  /// Some parameter gives a "Default" (Space::default_named).
  bool named_default = false;
};

/// ConfigurationSpace.TuningParameters: Name, Type, Values (a list or an expression),
/// Default.
TuningParameters read_tuning_parameters(const Loader& L, const json& cs);

/// The space of the parameters under ConfigurationSpace.Conditions (strings, or objects
/// with an Expression).
std::shared_ptr<Space> read_space(const Loader& L, const json& cs, std::vector<Parameter> parameters);

/// Kernel Tuner has no default configuration, so one that is not valid (bad_defaults, or a
/// restriction it breaks) is no reason to refuse the file: the first valid configuration
/// becomes the default, and it is not a named one. Returns the warning that says so, "" when
/// the defaults stand (named when `named`: some parameter gave its Default).
std::string settle_default(const Loader& L, Space& space, const std::vector<std::string>& bad_defaults, bool named);

// ---- launch geometry: KernelSpecification.LocalSize, ProblemSize, GlobalSize, GridDiv,
// SharedMemory, and cutune.Launches (t1_launches.cpp)

struct ThreadBlock {
  /// Kernel Tuner's block_size_names.
  std::array<std::string, 3> names{"block_size_x", "block_size_y", "block_size_z"};
  /// The block's dimensions: names or expressions over parameters and problem variables.
  std::array<Expression, 3> dimensions;
};

/// LocalSize as BAT hands it to Kernel Tuner (block_size_names = its entries that are
/// names), else Kernel Tuner's own names.
ThreadBlock read_thread_block(const Loader& L, const json& spec, const Space& space,
                              const std::vector<ProblemVariable>& variables);

/// The launch of KernelName that KernelSpecification describes (its arguments left empty).
LaunchSpec read_main_launch(const Loader& L, const json& spec, const std::string& kernel_name,
                            const Space& space, const ThreadBlock& block);

/// cutune.Launches, each starting from main_launch; without them, main_launch alone.
std::vector<LaunchSpec> read_launches(const Loader& L, const json& cut, const LaunchSpec& main_launch,
                                      const std::vector<ArgumentSpec>& arguments);

// ---- KernelSpecification.Arguments and what verifies them (t1_arguments.cpp)

std::vector<ArgumentSpec> read_arguments(const Loader& L, const json& spec);

/// KernelSpecification.ReferenceArguments; their targets become outputs. An entry without
/// ValidationMethod takes `tolerance` (cutune.Tolerance).
std::vector<ReferenceArgument> read_reference_arguments(const Loader& L, const json& spec,
                                                        const Tolerance& tolerance,
                                                        std::vector<ArgumentSpec>& arguments);

/// cutune.Verification: output name -> reference, default or none; the arguments it names
/// to be checked become outputs. has_cpu_reference: cutune.Reference is given.
std::vector<std::pair<std::size_t, VerifyMode>> read_verification(
    const Loader& L, const json& cut, bool has_cpu_reference,
    const std::vector<ReferenceArgument>& reference_arguments, std::vector<ArgumentSpec>& arguments);

/// cutune.Configurations (null when absent): rows of value indices from a binary file
/// (uint32, one row per configuration, ConfigurationSpace's order), an optional launch file
/// (uint32 grid x, y, z, shared bytes per row) and optional per-row defines. Fails naming the
/// field on a row out of range, a duplicate, or a file of the wrong size.
std::shared_ptr<const ConfigurationTable> read_configuration_table(const Loader& L, const json& cut,
                                                                   const Space& space);

/// Marks an argument without Variants in bind_variants' answer.
inline constexpr std::size_t kNoVariants = static_cast<std::size_t>(-1);

/// Per argument, its column of the table's variants (kNoVariants for a plain argument).
/// Fails naming the field when an argument with Variants has no column (or no table), a
/// column names no such argument, or a configuration's variant index is out of range.
std::vector<std::size_t> bind_variants(const Loader& L, const ConfigurationTable* table,
                                       const std::vector<ArgumentSpec>& arguments);

}  // namespace cutune::detail
