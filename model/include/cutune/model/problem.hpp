#pragma once
// A tuning problem as Kernel Tuner's T1 format describes it (KernelSpecification +
// ConfigurationSpace), plus cutune's "cutune" section for what T1 lacks: named problem
// variables, the CPU reference, the verification tolerance and the metrics.
// Built-in templates and user T1 files load through this one path (ARCHITECTURE.md, 4).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cutune/model/compiler.hpp"
#include "cutune/model/expression.hpp"
#include "cutune/model/kernel_resources.hpp"
#include "cutune/model/space.hpp"

namespace cutune {

/// Element types of kernel arguments: every numpy dtype Kernel Tuner passes to a CUDA kernel
/// (bool travels as uint8, as Kernel Tuner's PyCUDA backend sends it). Float16 is IEEE
/// binary16 (numpy float16, CUDA __half), BFloat16 ml_dtypes' bfloat16 (__nv_bfloat16),
/// Complex64/128 numpy's complex64/complex128 (CUDA float2/double2, cuComplex): storage types
/// in element_types.hpp.
enum class ElementType {
  Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64,
  Float16, BFloat16, Complex64, Complex128
};
std::size_t element_size(ElementType t);
/// The alignment numpy gives the type (a complex is aligned as its parts: complex128 is 16
/// bytes aligned to 8). The kernel's own parameter layout (CUDA aligns double2 to 16) is the
/// driver's business: cuLaunchKernel copies each parameter from its pointer.
std::size_t element_alignment(ElementType t);
/// T1 spelling: "float", "int32", "half", "double2" (complex128), ...; "bfloat16" is cutune's.
const char* element_type_name(ElementType t);
/// The element type a T1 "Type" names; nullopt for one cutune does not handle. T1's
/// float2/double2 are read as complex64/complex128 (Kernel Tuner pairs those dtypes with
/// those CUDA types); numpy's names are accepted too, except "float16", which in T1 is a
/// vector of 16 floats.
std::optional<ElementType> parse_element_type(const std::string& name);
bool is_floating(ElementType t);  ///< float16, bfloat16, float32, float64
bool is_complex(ElementType t);

/// Constant: FillValue. Random: uniform, scaled by FillValue. BinaryRaw: the elements from
/// DataSource (a file relative to the JSON, raw little-endian values of the Type).
/// Generator: DataSource is an expression of the element index `i` (BAT's arg_handler
/// evaluates it per element, e.g. "i" or "i % 7 * 0.5").
enum class FillType { Constant, Random, BinaryRaw, Generator };
enum class AccessType { ReadOnly, WriteOnly, ReadWrite };

struct ArgumentSpec {
  std::string name;
  ElementType type = ElementType::Float32;
  bool is_vector = true;  ///< Vector (device buffer) or Scalar (by value)
  AccessType access = AccessType::ReadOnly;
  FillType fill = FillType::Constant;
  std::optional<Expression> size;  ///< element count (vectors); over problem variables
  Expression fill_value;           ///< constant, or the scale of Random fills; may be an expression
  bool output = false;             ///< compared against the reference
  /// "MemType": "Constant" (Kernel Tuner's cmem_args): also copied into the kernel's
  /// __constant__ symbol of the same name before each configuration runs.
  bool constant_memory = false;
  std::filesystem::path data_source;  ///< BinaryRaw: the file, resolved against the JSON's folder
  std::optional<Expression> generator;  ///< Generator: over `i` (and the problem)
  /// Kernel Tuner's Tunable argument (T1 "Variants"): several data for this one kernel
  /// argument, each with its own element type, size and fill, all uploaded once as Kernel
  /// Tuner uploads them; cutune.Configurations says which one each configuration passes
  /// (KernelProblem::data_for). The argument's own type, size and fill are its first
  /// variant's. Empty for a plain argument.
  std::vector<ArgumentSpec> variants;
  /// A variant's key: the Tunable's key (a precision name, a parameter value) as text.
  std::string variant_key;
};

struct ProblemVariable {
  std::string name;
  std::int64_t default_value = 0;
  std::int64_t min_value = 1;
  std::int64_t max_value = INT64_MAX;
};

struct Tolerance {
  double relative = 1e-6;
  double absolute = 0.0;
};

/// KernelSpecification.ReferenceArguments: what an output argument must hold after a run,
/// so that a T1 problem without a CPU reference is verified against known answers rather
/// than against the default configuration's output.
struct ReferenceArgument {
  std::string name;
  std::size_t target = 0;  ///< index into KernelProblem::arguments() (TargetName); made an output
  /// FillType "Constant": every element is fill_value. "BinaryRaw": the elements, in the
  /// target's type and the host's byte order, from data_source (relative to the JSON file).
  Expression fill_value;
  std::filesystem::path data_source;  ///< empty for Constant
  /// A target with Variants: "DataSources", one BinaryRaw file per variant, each in that
  /// variant's type (Kernel Tuner compares the answer with whichever variant ran).
  std::vector<std::filesystem::path> variant_sources;
  /// ValidationMethod + ValidationThreshold: AbsoluteDifference and SideBySideComparison
  /// give an absolute bound, SideBySideRelativeComparison a relative one; without them the
  /// problem's tolerance.
  Tolerance tolerance;
};

/// How an output is verified (cutune.Verification in the problem file, `tune --verify`):
/// against its reference (cutune.Reference's CPU result or a ReferenceArguments entry),
/// against the default configuration's output, or not at all.
enum class VerifyMode { Reference, Default, None };
std::optional<VerifyMode> parse_verify_mode(const std::string& text);  ///< "reference", "default", "none"
const char* verify_mode_name(VerifyMode mode);

/// A derived figure such as GB/s: `expression` over problem variables, tuning parameters,
/// `time` (ms), `time_s` and the metrics before it (by name).
struct Metric {
  std::string name;
  Expression expression;
};

/// The items of a --problem text, "n=2**24,m=7", as (name, value) in the order given.
/// `check_name` (when set) sees each name before its value is evaluated, so that an unknown
/// name is reported as such. Throws InputError naming the item for one that is not
/// name=value, a name given twice (n=100,n=200 would otherwise silently keep one), or a value
/// that is not an integer expression, saying why: "ZeroDivisionError: division by zero",
/// "OverflowError: ...", a syntax error, or a float.
std::vector<std::pair<std::string, std::int64_t>> parse_problem_assignments(
    const std::string& text, const std::function<void(const std::string&)>& check_name = {});
/// The canonical key of a --problem text for a kernel cutune does not load (an import without
/// --kernel): "m=7,n=2**24" -> "m=7,n=16777216", as ProblemInstance::key writes it; also
/// "ProblemSize=4096x4096", the key of a problem known by its sizes only.
std::string problem_key_of(const std::string& text);

/// Problem variables as a problem's key names them: {k: 1024, m: 4096} -> "k=1024,m=4096"; ""
/// for none.
std::string variables_key(const std::map<std::string, std::int64_t>& variables);

/// Values of the problem variables for one tuning instance, plus derived sizes.
struct ProblemInstance {
  std::map<std::string, std::int64_t> variables;  ///< name -> value
  std::vector<std::int64_t> problem_size;         ///< ProblemSize, evaluated (1 to 3 dims)
  /// Canonical text, e.g. "n=268435456": a DB key.
  std::string key() const;
  /// JSON object text, e.g. {"n":268435456}.
  std::string json() const;
};

struct LaunchGeometry {
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t dynamic_shared_bytes = 0;
};

/// One kernel launch of a configuration's launch sequence: cutune.Launches, or by default
/// the single launch of KernelSpecification.KernelName with every argument. The whole
/// sequence is what is verified and timed (reduce-then-scan, two-pass reductions).
struct LaunchSpec {
  std::string kernel_name;
  std::vector<std::size_t> arguments;             ///< indices into KernelProblem::arguments()
  std::optional<Expression> condition;            ///< over the parameters; none = always
  std::vector<Expression> problem_size;           ///< per dimension
  std::array<std::vector<Expression>, 3> grid_div;
  std::optional<std::array<Expression, 3>> grid;  ///< explicit grid; overrides the two above
  std::array<Expression, 3> block;
  Expression shared_bytes;                        ///< dynamic shared memory
  /// GlobalSizeType "OpenCL" (BAT): problem_size counts threads, so the grid is
  /// ceil(problem_size / block) in every dimension (grid_div is then empty).
  bool divide_by_block = false;
};

struct PlannedLaunch {
  const LaunchSpec* spec = nullptr;
  LaunchGeometry geometry;
};

/// cutune.Configurations: the valid configurations as the user's own Python enumerated them
/// (Kernel Tuner's restrictions, evaluated by Python), with what Python computed for each:
/// the launch (grid and dynamic shared memory, from problem_size, grid divisors and smem_args
/// that may be Python callables) and the #define prefix (Kernel Tuner's `defines`). The space
/// becomes exactly these configurations.
struct ConfigurationTable {
  std::vector<Config> configs;  ///< sorted, distinct
  /// Per row of `configs`: grid x, y, z and dynamic shared bytes; empty when not given.
  std::vector<std::array<std::uint32_t, 4>> launch;
  std::vector<std::string> define_names;              ///< empty: no per-configuration defines
  std::vector<std::vector<std::string>> define_values;  ///< per row, one per define name
  /// Arguments with Variants (VariantArguments), and per row the variant index of each.
  std::vector<std::string> variant_names;
  std::vector<std::vector<std::uint32_t>> variants;
  /// The row of `config`, or nullopt when it is not listed.
  std::optional<std::size_t> row(const Config& config) const;
};

class KernelProblem {
 public:
  /// Loads a T1 JSON file (cutune section optional). Throws InputError naming the file
  /// and the field on any problem; the kernel source is read relative to the JSON file.
  static KernelProblem load(const std::filesystem::path& json_file);

  const std::string& name() const { return name_; }
  const std::string& kernel_name() const { return kernel_name_; }
  const std::filesystem::path& json_file() const { return json_file_; }
  const std::filesystem::path& kernel_file() const { return kernel_file_; }
  const std::string& source() const { return source_; }
  const Space& space() const { return *space_; }
  const std::vector<std::string>& compiler_options() const { return compiler_options_; }
  /// cutune.Compiler (default auto); `--compiler` replaces it (set_compiler).
  Compiler compiler() const { return compiler_; }
  void set_compiler(Compiler c) { compiler_ = c; }
  /// cutune.Lang, Kernel Tuner's `lang` (default CUDA): KernelLang::CuPy compiles in CuPy's environment.
  KernelLang lang() const { return lang_; }
  const std::vector<ArgumentSpec>& arguments() const { return arguments_; }
  const std::vector<ProblemVariable>& variables() const { return variables_; }
  const std::string& reference() const { return reference_; }  ///< "" = none
  const Tolerance& tolerance() const { return tolerance_; }
  /// KernelSpecification.ReferenceArguments (empty: none).
  const std::vector<ReferenceArgument>& reference_arguments() const { return reference_arguments_; }
  const std::vector<Metric>& metrics() const { return metrics_; }
  /// cutune.ResourceRestrictions: Python expressions over the tuning parameters, the problem
  /// variables and what the compiled configuration costs the GPU (resource_names():
  /// registers, local_bytes, shared_bytes, occupancy...). Checked once the configuration is
  /// compiled and loaded, before anything is launched; one that does not hold makes the
  /// configuration a `constraints` failure, its resources recorded.
  const std::vector<Expression>& resource_restrictions() const { return resource_restrictions_; }
  /// "" when every resource restriction holds for `config` costing `resources`; else one line
  /// naming the first that does not, with the values it read ("registers=72 local_bytes=0"),
  /// or why it could not be evaluated.
  std::string violated_resource_restriction(const ProblemInstance& instance, const Config& config,
                                            const KernelResources& resources) const;
  /// cutune.Verification: (argument index, mode), in file order (empty: none given).
  const std::vector<std::pair<std::size_t, VerifyMode>>& verification() const { return verification_; }
  /// Things the file says that Kernel Tuner tolerates and cutune worked around (a Default
  /// outside its Values or breaking a restriction): one line each, naming file, field and
  /// value. The CLI prints them to stderr once.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Kernel Tuner's block_size_names for x, y, z: LocalSize's entries where they are names,
  /// else block_size_x/y/z (and, without LocalSize, the upper-case spellings Kernel Tuner
  /// accepts for them). The prefix defines these to the block's dimensions.
  const std::array<std::string, 3>& block_size_names() const { return block_names_; }
  /// The block dimensions as LocalSize gives them (names or expressions over parameters).
  const std::array<Expression, 3>& block_dimensions() const { return main_block_; }
  /// The thread-block limit of the valid space (Kernel Tuner's max_threads): 1024 until a
  /// device says otherwise, which every CUDA GPU since Fermi allows.
  std::int64_t max_threads_per_block() const { return max_threads_; }
  /// Sets the limit to the device's value and prunes the space with it. The space is copied
  /// first: copies of this problem keep theirs.
  void set_max_threads_per_block(std::int64_t max_threads);

  /// Problem variables from "n=1000,m=7" (others default); throws InputError for an
  /// unknown name, a non-integer, or a value outside [min, max].
  ProblemInstance instantiate(const std::string& overrides = "") const;

  const std::vector<LaunchSpec>& launches() const { return launches_; }
  /// cutune.Configurations, or null when the file has none.
  const ConfigurationTable* configuration_table() const { return table_.get(); }
  /// The distinct kernel names of all launches, first-use order.
  std::vector<std::string> kernel_names() const;
  /// The launches whose Condition holds for `config`, with their geometry, Kernel Tuner's
  /// way: block from LocalSize / block_size_names (x 256, y and z 1 for a name that is not a
  /// parameter), grid = ceil(problem_size / prod(grid_div)), where problem_size may name
  /// parameters; without a ProblemSize, GlobalSize (blocks, or threads for GlobalSizeType
  /// OpenCL). Throws InputError when a grid exceeds CUDA's limits or an expression fails.
  std::vector<PlannedLaunch> plan(const Config& config, const ProblemInstance& instance) const;
  /// The geometry of the first planned launch.
  LaunchGeometry geometry(const Config& config, const ProblemInstance& instance) const;

  /// Number of elements of a vector argument / the value of a scalar one.
  std::int64_t argument_size(const ArgumentSpec& arg, const ProblemInstance& instance) const;
  Value argument_fill(const ArgumentSpec& arg, const ProblemInstance& instance) const;
  /// A Generator argument's elements [begin, end): its DataSource evaluated with `i` bound
  /// to the element index (and the problem in scope, as for Size), each passed to `sink`.
  /// Throws InputError naming the argument when the expression fails or is not a number.
  void generate(const ArgumentSpec& arg, const ProblemInstance& instance, std::int64_t begin, std::int64_t end,
                const std::function<void(std::int64_t, const Value&)>& sink) const;
  /// The FillValue of a Constant reference argument.
  Value reference_fill(const ReferenceArgument& ref, const ProblemInstance& instance) const;
  /// The tolerance an output is checked with: its ReferenceArgument's, else the problem's.
  const Tolerance& tolerance_of(std::size_t argument) const;

  /// What the GPU holds: each plain argument, and each variant of an argument with Variants,
  /// in argument order (Kernel Tuner uploads every variant once). Without variants, arguments()
  /// itself (the same objects: host data points at them).
  const std::vector<ArgumentSpec>& data() const { return variants_ ? data_ : arguments_; }
  /// The argument (index into arguments()) that data()[d] belongs to.
  std::size_t argument_of_data(std::size_t d) const { return data_argument_.at(d); }
  /// The first index into data() of `argument`'s data (its only one when it has no variants).
  std::size_t first_data_of(std::size_t argument) const { return first_data_.at(argument); }
  bool has_variants() const { return variants_; }
  /// The index into data() that `config` passes as `argument`: the argument's own, or the
  /// variant cutune.Configurations gives for the configuration. Throws InputError naming
  /// the configuration when an argument has variants and the table has no row for it.
  std::size_t data_for(const Config& config, std::size_t argument) const;
  /// The same for a row of the configuration table.
  std::size_t data_for_row(std::size_t row, std::size_t argument) const;

  /// General.Objective ("" when absent) and General.Minimize (BAT's fields, none when absent):
  /// what they name is decided by search::resolve_objective (a metric, or time).
  const std::string& general_objective() const { return general_objective_; }
  std::optional<bool> general_minimize() const { return general_minimize_; }

  /// Metric values for a measured time, in order; `config` binds the tuning parameters.
  /// Throws InputError naming the metric when one fails to evaluate.
  std::vector<std::pair<std::string, double>> evaluate_metrics(const ProblemInstance& instance,
                                                               double time_s,
                                                               const Config* config = nullptr) const;

  /// The configuration as -D options (-Dname=value, bools as 0/1), for display.
  std::vector<std::string> defines(const Config& config) const;
  /// The source cutune compiles for a configuration: "#define name value" lines for the
  /// compile parameters only, then "#line 1" and the kernel file. Defines in the source
  /// text, as Kernel Tuner does, not -D options: NVRTC's built-in headers are read before
  /// the source, and a -D of a common parameter name (`mode`, seen in tests) rewrites
  /// their declarations.
  /// The prefix is Kernel Tuner's (util.prepare_kernel_string): grid_size_x/y/z, the block
  /// size names, every parameter and `kernel_tuner 1`, parameters named *loop_unroll_factor*
  /// as `constexpr int` (value 0 removes their `#pragma unroll` lines instead), but only
  /// names the code mentions. The grid is the instance's (this overload: the default one).
  std::string configured_source(const Config& config) const;
  std::string configured_source(const Config& config, const ProblemInstance& instance) const;

  /// Parameters the compiled code cannot see, in the space's order: their names occur
  /// nowhere in the kernel file, the local headers it includes, or the CompilerOptions.
  /// They only shape the launch (GridDiv, Block, Grid expressions, evaluated on the host),
  /// so configured_source leaves them out: configurations that differ only in them give
  /// identical source, hence one compile-cache key and one cubin.
  const std::vector<std::string>& launch_only_parameters() const { return launch_only_; }
  /// True when `name` is a parameter whose name occurs, as a whole identifier, in the code
  /// (comments included: a conservative scan, not a preprocessor) and so gets a #define.
  bool is_compile_parameter(const std::string& name) const;
  /// The local headers the kernel file includes with #include "...", recursively: (name as
  /// written, contents), read once at load. They go to NVRTC with the source (it has no
  /// idea where the kernel file lives) and so into the compile-cache key.
  const std::vector<std::pair<std::string, std::string>>& local_headers() const { return local_headers_; }

 private:
  /// "#define name value" lines (loop_unroll_factor names as Kernel Tuner writes them), "#line 1"
  /// and the kernel source.
  std::string prefixed_source(const std::vector<std::pair<std::string, std::string>>& defines) const;
  /// True when `name` occurs as an identifier in the code, its local headers or the options.
  bool mentions(std::string_view name) const;
  /// Prunes the space with max_threads_ over the block dimensions that are parameters.
  void apply_block_limit();
  /// Lays out data() from the arguments (their roles, settled by ReferenceArguments and
  /// cutune.Verification, carried into each variant).
  void index_data();
  /// A FillValue expression over the problem (and the parameter lists), which must give a number.
  Value fill_number(const Expression& e, const std::string& what, const ProblemInstance& instance) const;

  std::string name_, kernel_name_;
  std::filesystem::path json_file_, kernel_file_;
  std::string source_;
  std::shared_ptr<Space> space_;
  std::vector<std::string> compiler_options_;
  Compiler compiler_ = Compiler::Auto;
  KernelLang lang_ = KernelLang::Cuda;
  std::vector<ArgumentSpec> arguments_;
  bool variants_ = false;         ///< some argument has Variants: data_ lays them out
  std::vector<ArgumentSpec> data_;
  std::vector<std::size_t> data_argument_, first_data_;
  std::vector<std::size_t> variant_column_;  ///< per argument: its column of the table's variants
  std::vector<ProblemVariable> variables_;
  std::vector<Expression> problem_size_;
  std::vector<LaunchSpec> launches_;
  std::string reference_;
  Tolerance tolerance_;
  std::vector<ReferenceArgument> reference_arguments_;
  std::vector<Metric> metrics_;
  std::vector<Expression> resource_restrictions_;
  std::string general_objective_;
  std::optional<bool> general_minimize_;
  std::vector<std::pair<std::size_t, VerifyMode>> verification_;
  std::vector<std::string> launch_only_;
  std::vector<std::pair<std::string, std::string>> local_headers_;
  std::vector<bool> compile_parameter_;  ///< per parameter of the space, in its order
  std::set<std::string, std::less<>> code_tokens_;  ///< identifiers of the code and options
  std::vector<std::string> warnings_;
  std::array<std::string, 3> block_names_{"block_size_x", "block_size_y", "block_size_z"};
  std::array<Expression, 3> main_block_;
  std::int64_t max_threads_ = 1024;
  std::shared_ptr<const ConfigurationTable> table_;
};

}  // namespace cutune
