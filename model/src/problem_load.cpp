// KernelProblem::load: a T1 file (and cutune's section) read section by section. The order
// of the sections is the order in which faults are found, so a file with several reports
// the same one from run to run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "kernel_source_scan.hpp"
#include "problem_fields.hpp"
#include "t1_sections.hpp"

namespace cutune {

namespace {

using detail::json;
using detail::Loader;

json read_document(const Loader& L) {
  std::ifstream in(L.file);
  if (!in) throw InputError(fmt::format("{}: cannot be read", L.file.string()));
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for a number beyond double (1e400). nlohmann's message
    // starts with "[json.exception.parse_error.101] "; keep the rest.
    std::string what = e.what();
    auto pos = what.find("] ");
    throw InputError(fmt::format("{}: malformed JSON: {}", L.file.string(),
                                 pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  if (!root.is_object()) L.fail("(top level)", "is not a JSON object");
  return root;
}

struct General {
  std::string name;       // BenchmarkName, else the kernel's name
  std::string objective;  // "" when absent
  std::optional<bool> minimize;
};

General read_general(const Loader& L, const json& root, const std::string& kernel_name) {
  General out{kernel_name, "", std::nullopt};
  if (!root.contains("General")) return out;
  const json& general = root["General"];
  if (!general.is_object()) L.fail("General", "is not a JSON object");
  if (general.contains("BenchmarkName")) out.name = L.string_of(general["BenchmarkName"], "General.BenchmarkName");
  if (general.contains("Objective")) {
    out.objective = L.string_of(general["Objective"], "General.Objective");
    if (out.objective.empty()) L.fail("General.Objective", "is empty");
  }
  if (general.contains("Minimize")) {
    if (!general["Minimize"].is_boolean())
      L.fail("General.Minimize", fmt::format("{} is not true or false", general["Minimize"].dump()));
    out.minimize = general["Minimize"].get<bool>();
  }
  return out;
}

void check_language(const Loader& L, const json& spec) {
  if (!spec.contains("Language")) return;
  const std::string language = L.string_of(spec["Language"], "KernelSpecification.Language");
  if (language != "CUDA")
    L.fail("KernelSpecification.Language", fmt::format("'{}' is not supported (cutune compiles CUDA)", language));
}

// KernelFile, relative to the JSON file, and its text.
std::pair<std::filesystem::path, std::string> read_kernel_file(const Loader& L, const json& spec) {
  const std::string name = L.string_of(L.require(spec, "KernelFile", "KernelSpecification"),
                                       "KernelSpecification.KernelFile");
  std::filesystem::path file = L.file.parent_path() / name;
  std::ifstream src(file, std::ios::binary);
  if (!src) L.fail("KernelSpecification.KernelFile", fmt::format("cannot read '{}'", file.string()));
  std::ostringstream ss;
  ss << src.rdbuf();
  return {std::move(file), ss.str()};
}

std::vector<std::string> read_compiler_options(const Loader& L, const json& spec) {
  std::vector<std::string> out;
  if (!spec.contains("CompilerOptions")) return out;
  const auto& opts = spec["CompilerOptions"];
  if (!opts.is_array()) L.fail("KernelSpecification.CompilerOptions", "must be a list");
  for (const auto& o : opts) out.push_back(L.string_of(o, "KernelSpecification.CompilerOptions"));
  return out;
}

ProblemVariable read_problem_variable(const Loader& L, const json& j, std::size_t i) {
  const std::string field = fmt::format("cutune.ProblemVariables[{}]", i);
  ProblemVariable v;
  v.name = L.string_of(L.require(j, "Name", field), field + ".Name");
  v.default_value = L.int_of(L.require(j, "Default", field), field + ".Default");
  if (j.contains("Min")) v.min_value = L.int_of(j["Min"], field + ".Min");
  if (j.contains("Max")) v.max_value = L.int_of(j["Max"], field + ".Max");
  if (v.min_value > v.max_value) L.fail(field, fmt::format("Min {} is above Max {}", v.min_value, v.max_value));
  if (v.default_value < v.min_value || v.default_value > v.max_value)
    L.fail(field + ".Default", fmt::format("{} is outside [{}, {}]", v.default_value, v.min_value, v.max_value));
  return v;
}

std::vector<ProblemVariable> read_problem_variables(const Loader& L, const json& cut) {
  std::vector<ProblemVariable> out;
  if (!cut.contains("ProblemVariables")) return out;
  const auto& vars = cut["ProblemVariables"];
  if (!vars.is_array()) L.fail("cutune.ProblemVariables", "must be a list");
  for (std::size_t i = 0; i < vars.size(); ++i) out.push_back(read_problem_variable(L, vars[i], i));
  return out;
}

Tolerance read_tolerance(const Loader& L, const json& cut) {
  Tolerance out;
  if (!cut.contains("Tolerance")) return out;
  const auto& t = cut["Tolerance"];
  if (!t.is_object()) L.fail("cutune.Tolerance", "must be an object");
  if (t.contains("Relative")) out.relative = L.number_of(t["Relative"], "cutune.Tolerance.Relative");
  if (t.contains("Absolute")) out.absolute = L.number_of(t["Absolute"], "cutune.Tolerance.Absolute");
  if (out.relative < 0 || out.absolute < 0) L.fail("cutune.Tolerance", "must not be negative");
  return out;
}

std::vector<Metric> read_metrics(const Loader& L, const json& cut) {
  std::vector<Metric> out;
  if (!cut.contains("Metrics")) return out;
  const auto& metrics = L.list_of(cut["Metrics"], "cutune.Metrics");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string field = fmt::format("cutune.Metrics[{}]", i);
    const auto& m = metrics[i];
    out.push_back({L.string_of(L.require(m, "Name", field), field + ".Name"),
                   L.expression_of(L.require(m, "Expression", field), field + ".Expression")});
  }
  return out;
}

// cutune.ResourceRestrictions: each name must be a resource, a tuning parameter or a problem
// variable, and no parameter or variable may take a resource's name (which would it read?).
std::vector<Expression> read_resource_restrictions(const Loader& L, const json& cut, const Space& space,
                                                   const std::vector<ProblemVariable>& variables) {
  std::vector<Expression> out;
  if (!cut.contains("ResourceRestrictions")) return out;
  const auto& list = L.list_of(cut["ResourceRestrictions"], "cutune.ResourceRestrictions");
  const auto& resources = resource_names();
  auto is_resource = [&](const std::string& n) { return std::find(resources.begin(), resources.end(), n) != resources.end(); };
  auto is_variable = [&](const std::string& n) {
    return std::any_of(variables.begin(), variables.end(), [&](const ProblemVariable& v) { return v.name == n; });
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("cutune.ResourceRestrictions[{}]", i);
    if (!list[i].is_string()) L.fail(field, "must be a string (a Python expression)");
    Expression e = L.expression_of(list[i], field);
    for (const std::string& n : e.names()) {
      const bool other = space.has_parameter(n) || is_variable(n);
      if (is_resource(n) && other)
        L.fail(field, fmt::format("'{}' is both a resource and a parameter or problem variable", n));
      if (!is_resource(n) && !other)
        L.fail(field, fmt::format("'{}' is not a resource ({}), a tuning parameter or a problem variable", n,
                                  fmt::join(resources, ", ")));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// cutune.Compiler ("auto", "nvrtc", "nvcc") and cutune.Lang (Kernel Tuner's lang).
void read_compile_choice(const Loader& L, const json& cut, Compiler& compiler, KernelLang& lang) {
  if (cut.contains("Compiler")) {
    const std::string text = L.string_of(cut["Compiler"], "cutune.Compiler");
    const auto c = parse_compiler(text);
    if (!c) L.fail("cutune.Compiler", fmt::format("'{}' is not auto, nvrtc or nvcc", text));
    compiler = *c;
  }
  if (cut.contains("Lang")) {
    const std::string text = L.string_of(cut["Lang"], "cutune.Lang");
    const auto l = parse_kernel_lang(text);
    if (!l) L.fail("cutune.Lang", fmt::format("'{}' is not CUDA, CuPy, NVCUDA or PyCUDA", text));
    lang = *l;
  }
}

// The names the code can see: identifiers of the kernel file, its local headers and the
// compiler options. A name in a comment counts too, which costs at most a redundant
// #define, never a missing one.
struct CodeNames {
  detail::TokenSet tokens;
  std::vector<std::pair<std::string, std::string>> local_headers;
  std::vector<bool> compile_parameter;  // per parameter of the space
  std::vector<std::string> launch_only;
};

CodeNames scan_code(const std::filesystem::path& kernel_file, const std::string& source,
                    const std::vector<std::string>& compiler_options, const Space& space) {
  CodeNames out;
  std::set<std::filesystem::path> seen;
  detail::add_source_tokens(kernel_file, source, seen, out.tokens, out.local_headers);
  for (const auto& o : compiler_options) detail::add_identifier_tokens(o, out.tokens);
  for (const auto& par : space.parameters()) {
    const bool used = out.tokens.find(par.name) != out.tokens.end();
    out.compile_parameter.push_back(used);
    if (!used) out.launch_only.push_back(par.name);
  }
  return out;
}

// Validates the problem-level expressions on the default instance, so that a typo is
// reported at load time rather than in the middle of a tuning run.
void check_default_instance(const Loader& L, const KernelProblem& p) {
  ProblemInstance inst = p.instantiate();
  for (const auto& a : p.data()) {  // every variant too
    if (a.is_vector && p.argument_size(a, inst) < 0)
      L.fail("KernelSpecification.Arguments", fmt::format("'{}' has a negative size", a.name));
    (void)p.argument_fill(a, inst);
    if (a.generator && p.argument_size(a, inst) > 0) p.generate(a, inst, 0, 1, [](std::int64_t, const Value&) {});
  }
}

}  // namespace

KernelProblem KernelProblem::load(const std::filesystem::path& json_file) {
  const Loader L{json_file};
  const json root = read_document(L);
  const json& spec = L.require(root, "KernelSpecification", "(top level)");
  const json& cs = L.require(root, "ConfigurationSpace", "(top level)");
  const json empty = json::object();
  const json& cut = root.contains("cutune") ? root["cutune"] : empty;

  // General and the kernel.
  KernelProblem p;
  p.json_file_ = json_file;
  p.kernel_name_ = L.string_of(L.require(spec, "KernelName", "KernelSpecification"), "KernelSpecification.KernelName");
  General general = read_general(L, root, p.kernel_name_);
  p.name_ = std::move(general.name);
  p.general_objective_ = std::move(general.objective);
  p.general_minimize_ = general.minimize;
  check_language(L, spec);
  std::tie(p.kernel_file_, p.source_) = read_kernel_file(L, spec);
  p.compiler_options_ = read_compiler_options(L, spec);
  p.variables_ = read_problem_variables(L, cut);

  // ConfigurationSpace; which parameters the code names; the thread block, whose
  // dimensions limit the space; the default configuration in that space.
  detail::TuningParameters tuning = detail::read_tuning_parameters(L, cs);
  p.space_ = detail::read_space(L, cs, std::move(tuning.parameters));
  CodeNames code = scan_code(p.kernel_file_, p.source_, p.compiler_options_, *p.space_);
  p.code_tokens_ = std::move(code.tokens);
  p.local_headers_ = std::move(code.local_headers);
  p.compile_parameter_ = std::move(code.compile_parameter);
  p.launch_only_ = std::move(code.launch_only);
  const detail::ThreadBlock block = detail::read_thread_block(L, spec, *p.space_, p.variables_);
  p.block_names_ = block.names;
  p.main_block_ = block.dimensions;
  p.apply_block_limit();
  p.table_ = detail::read_configuration_table(L, cut, *p.space_);
  if (p.table_) {  // the space is what Python enumerated, nothing else
    std::shared_ptr<const ConfigurationTable> table = p.table_;
    p.space_->set_membership([table](const Config& c) { return table->row(c).has_value(); });
  }
  if (std::string warning = detail::settle_default(L, *p.space_, tuning.bad_defaults, tuning.named_default); !warning.empty())
    p.warnings_.push_back(std::move(warning));

  // KernelSpecification: the launch and its arguments.
  LaunchSpec main_launch = detail::read_main_launch(L, spec, p.kernel_name_, *p.space_, block);
  p.problem_size_ = main_launch.problem_size;
  p.arguments_ = detail::read_arguments(L, spec);
  for (std::size_t i = 0; i < p.arguments_.size(); ++i) main_launch.arguments.push_back(i);

  // cutune's own fields (ReferenceArguments is T1's, but takes cutune.Tolerance). A cutune
  // that is not an object read as absent until here.
  if (!cut.is_object()) L.fail("cutune", "must be an object");
  p.launches_ = detail::read_launches(L, cut, main_launch, p.arguments_);
  if (cut.contains("Reference")) p.reference_ = L.string_of(cut["Reference"], "cutune.Reference");
  p.tolerance_ = read_tolerance(L, cut);
  p.reference_arguments_ = detail::read_reference_arguments(L, spec, p.tolerance_, p.arguments_);
  p.verification_ = detail::read_verification(L, cut, !p.reference_.empty(), p.reference_arguments_, p.arguments_);
  p.metrics_ = read_metrics(L, cut);
  p.resource_restrictions_ = read_resource_restrictions(L, cut, *p.space_, p.variables_);
  read_compile_choice(L, cut, p.compiler_, p.lang_);
  p.variant_column_ = detail::bind_variants(L, p.table_.get(), p.arguments_);
  p.index_data();
  if (p.has_variants() && !p.reference_.empty())
    L.fail("cutune.Reference", "a CPU reference reads plain arguments; this problem has arguments with Variants");

  check_default_instance(L, p);
  return p;
}

}  // namespace cutune
