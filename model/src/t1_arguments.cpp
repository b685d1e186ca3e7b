// KernelSpecification.Arguments (what each kernel argument is and how it is filled),
// KernelSpecification.ReferenceArguments (what an output must hold) and cutune.Verification
// (how each output is checked).
#include <fmt/format.h>

#include <algorithm>

#include "t1_sections.hpp"

namespace cutune::detail {

namespace {

ElementType read_element_type(const Loader& L, const std::string& t, const std::string& field) {
  if (const auto type = parse_element_type(t)) return *type;
  if (t == "float16")
    L.fail(field, "'float16' is a vector of 16 floats in T1; numpy's float16 is 'half'");
  L.fail(field, fmt::format("unsupported argument type '{}' (cutune handles int8..uint64, bool, half, bfloat16, float, "
                            "double, float2 and double2 as complex64 and complex128)", t));
}

// MemoryType (Vector or Scalar) and AccessType.
void read_argument_kind(const Loader& L, const json& a, const std::string& field, ArgumentSpec& s) {
  std::string mem = L.string_of(L.require(a, "MemoryType", field), field + ".MemoryType");
  if (mem == "Vector") s.is_vector = true;
  else if (mem == "Scalar") s.is_vector = false;
  else L.fail(field + ".MemoryType", fmt::format("unsupported '{}' (Vector or Scalar)", mem));
  if (a.contains("AccessType")) {
    std::string acc = L.string_of(a["AccessType"], field + ".AccessType");
    if (acc == "ReadOnly") s.access = AccessType::ReadOnly;
    else if (acc == "WriteOnly") s.access = AccessType::WriteOnly;
    else if (acc == "ReadWrite") s.access = AccessType::ReadWrite;
    else L.fail(field + ".AccessType", fmt::format("unknown '{}'", acc));
  }
}

void read_type(const Loader& L, const json& a, const std::string& field, ArgumentSpec& s) {
  s.type = read_element_type(L, L.string_of(L.require(a, "Type", field), field + ".Type"), field + ".Type");
}

// FillType, FillValue, DataSource (a file for BinaryRaw, an expression for Generator) and
// the Size of a vector. A Scalar is its FillValue (a complex one: the real part), or its
// DataSource's bytes.
void read_argument_fill(const Loader& L, const json& a, const std::string& field, ArgumentSpec& s) {
  if (a.contains("FillType")) {
    std::string fill = L.string_of(a["FillType"], field + ".FillType");
    if (fill == "Constant") s.fill = FillType::Constant;
    else if (fill == "Random") s.fill = FillType::Random;
    else if (fill == "BinaryRaw") s.fill = FillType::BinaryRaw;
    else if (fill == "Generator") s.fill = FillType::Generator;
    else if (fill == "Uninitialized") s.fill = FillType::Constant;  // BAT's: any content will do
    else L.fail(field + ".FillType", fmt::format("unsupported '{}' (Constant, Random, BinaryRaw or Generator)", fill));
  }
  s.fill_value = a.contains("FillValue") && !a["FillValue"].is_null()
                     ? L.expression_of(a["FillValue"], field + ".FillValue")
                     : Expression::parse("0");
  // A Scalar may come from a file too: its exact bytes, for the values a FillValue number
  // cannot carry (a complex scalar).
  if (s.fill == FillType::BinaryRaw) {
    s.data_source = L.file.parent_path() / L.string_of(L.require(a, "DataSource", field), field + ".DataSource");
    if (!std::filesystem::is_regular_file(s.data_source))
      L.fail(field + ".DataSource", fmt::format("cannot read '{}'", s.data_source.string()));
  }
  if (s.is_vector && s.fill == FillType::Generator)
    s.generator = L.expression_of(L.require(a, "DataSource", field), field + ".DataSource");
  if (s.is_vector) s.size = L.expression_of(L.require(a, "Size", field), field + ".Size");
}

// Output, and MemType (Constant: Kernel Tuner's cmem_args).
void read_argument_role(const Loader& L, const json& a, const std::string& field, ArgumentSpec& s) {
  if (a.contains("Output")) {
    const auto& o = a["Output"];
    s.output = o.is_boolean() ? o.get<bool>() : (o.is_number() && o.get<double>() != 0);
  }
  if (s.output && !s.is_vector) L.fail(field + ".Output", "only Vector arguments can be outputs");
  if (a.contains("MemType")) {
    const std::string mt = L.string_of(a["MemType"], field + ".MemType");
    if (mt == "Constant") s.constant_memory = true;
    else if (mt != "Global") L.fail(field + ".MemType", fmt::format("unsupported '{}' (Constant or Global)", mt));
  }
  if (s.constant_memory && (s.output || s.access != AccessType::ReadOnly))
    L.fail(field + ".MemType", "a Constant argument must be ReadOnly and not an output");
}

// Variants (Kernel Tuner's Tunable): each its own Type, Size and fill; the argument's kind
// (MemoryType, AccessType, Output, MemType) is the argument's, which a variant may repeat but
// not change: one kernel parameter cannot be a pointer for one configuration and a value for
// another.
void read_variants(const Loader& L, const json& a, const std::string& field, ArgumentSpec& s) {
  const auto& list = L.list_of(a["Variants"], field + ".Variants");
  if (list.empty()) L.fail(field + ".Variants", "is empty (an argument with Variants needs at least one)");
  if (s.constant_memory) L.fail(field + ".Variants", "a Constant (MemType) argument cannot have Variants");
  for (std::size_t v = 0; v < list.size(); ++v) {
    const std::string vf = fmt::format("{}.Variants[{}]", field, v);
    if (!list[v].is_object()) L.fail(vf, "must be an object");
    ArgumentSpec var = s;
    var.variants.clear();
    var.variant_key = list[v].contains("Key") ? L.string_of(list[v]["Key"], vf + ".Key") : std::to_string(v);
    if (list[v].contains("MemoryType") &&
        L.string_of(list[v]["MemoryType"], vf + ".MemoryType") != (s.is_vector ? "Vector" : "Scalar"))
      L.fail(vf + ".MemoryType", fmt::format("is not the argument's ({}): every variant is the same kind",
                                             s.is_vector ? "Vector" : "Scalar"));
    if (list[v].contains("Variants")) L.fail(vf + ".Variants", "variants do not nest (give the selected data)");
    read_type(L, list[v], vf, var);
    read_argument_fill(L, list[v], vf, var);
    s.variants.push_back(std::move(var));
  }
  const ArgumentSpec& first = s.variants.front();
  s.type = first.type;
  s.fill = first.fill;
  s.size = first.size;
  s.fill_value = first.fill_value;
  s.data_source = first.data_source;
  s.generator = first.generator;
}

ArgumentSpec read_argument(const Loader& L, const json& a, std::size_t i) {
  const std::string field = fmt::format("KernelSpecification.Arguments[{}]", i);
  if (!a.is_object()) L.fail(field, "must be an object");
  ArgumentSpec s;
  s.name = a.contains("Name") ? L.string_of(a["Name"], field + ".Name") : fmt::format("arg{}", i);
  if (!a.contains("Variants")) {  // the fields in the order their faults were always reported
    read_type(L, a, field, s);
    read_argument_kind(L, a, field, s);
    read_argument_fill(L, a, field, s);
    read_argument_role(L, a, field, s);
    return s;
  }
  for (const char* own : {"Type", "Size", "FillType", "FillValue", "DataSource"})
    if (a.contains(own)) L.fail(field + "." + own, "is given per variant for an argument with Variants");
  read_argument_kind(L, a, field, s);
  read_argument_role(L, a, field, s);
  read_variants(L, a, field, s);
  return s;
}

// ValidationMethod + ValidationThreshold: AbsoluteDifference and SideBySideComparison give
// an absolute bound, SideBySideRelativeComparison a relative one.
Tolerance read_validation(const Loader& L, const json& r, const std::string& field) {
  const double threshold = L.number_of(L.require(r, "ValidationThreshold", field), field + ".ValidationThreshold");
  if (!(threshold >= 0)) L.fail(field + ".ValidationThreshold", "must not be negative");
  const std::string method = r.contains("ValidationMethod")
                                 ? L.string_of(r["ValidationMethod"], field + ".ValidationMethod")
                                 : "AbsoluteDifference";
  if (method == "AbsoluteDifference" || method == "SideBySideComparison") return {0.0, threshold};
  if (method == "SideBySideRelativeComparison") return {threshold, 0.0};
  L.fail(field + ".ValidationMethod", fmt::format("unknown '{}'", method));
}

// DataSources of a reference whose target has Variants: one file per variant, in order.
std::vector<std::filesystem::path> read_variant_sources(const Loader& L, const json& r, const std::string& field,
                                                        std::size_t variants) {
  const auto& list = L.list_of(L.require(r, "DataSources", field), field + ".DataSources");
  if (list.size() != variants)
    L.fail(field + ".DataSources", fmt::format("has {} files for {} variants", list.size(), variants));
  std::vector<std::filesystem::path> out;
  for (std::size_t v = 0; v < list.size(); ++v) {
    const std::string vf = fmt::format("{}.DataSources[{}]", field, v);
    out.push_back(L.file.parent_path() / L.string_of(list[v], vf));
    if (!std::filesystem::is_regular_file(out.back())) L.fail(vf, fmt::format("cannot read '{}'", out.back().string()));
  }
  return out;
}

ReferenceArgument read_reference_argument(const Loader& L, const json& r, std::size_t i, const Tolerance& tolerance,
                                          std::vector<ArgumentSpec>& arguments) {
  const std::string field = fmt::format("KernelSpecification.ReferenceArguments[{}]", i);
  ReferenceArgument ref;
  ref.name = L.string_of(L.require(r, "Name", field), field + ".Name");
  const std::string target = L.string_of(L.require(r, "TargetName", field), field + ".TargetName");
  const auto it = std::find_if(arguments.begin(), arguments.end(), [&](const ArgumentSpec& a) { return a.name == target; });
  if (it == arguments.end()) L.fail(field + ".TargetName", fmt::format("no argument named '{}'", target));
  if (!it->is_vector) L.fail(field + ".TargetName", fmt::format("'{}' is not a Vector argument", target));
  ref.target = static_cast<std::size_t>(it - arguments.begin());
  it->output = true;  // the reference says what it must hold: it is checked
  const std::string fill = L.string_of(L.require(r, "FillType", field), field + ".FillType");
  if (fill == "Constant" && !it->variants.empty()) {
    L.fail(field + ".FillType", fmt::format("'{}' has Variants: its reference is BinaryRaw, one of DataSources per "
                                            "variant", target));
  } else if (fill == "Constant") {
    ref.fill_value = L.expression_of(L.require(r, "FillValue", field), field + ".FillValue");
  } else if (fill == "BinaryRaw" && !it->variants.empty()) {
    ref.variant_sources = read_variant_sources(L, r, field, it->variants.size());
  } else if (fill == "BinaryRaw") {
    ref.data_source = L.file.parent_path() / L.string_of(L.require(r, "DataSource", field), field + ".DataSource");
    if (!std::filesystem::is_regular_file(ref.data_source))
      L.fail(field + ".DataSource", fmt::format("cannot read '{}'", ref.data_source.string()));
  } else {
    L.fail(field + ".FillType", fmt::format("unsupported '{}' (Constant or BinaryRaw)", fill));
  }
  ref.tolerance = r.contains("ValidationMethod") || r.contains("ValidationThreshold") ? read_validation(L, r, field)
                                                                                       : tolerance;
  return ref;
}

}  // namespace

std::vector<ArgumentSpec> read_arguments(const Loader& L, const json& spec) {
  std::vector<ArgumentSpec> out;
  if (!spec.contains("Arguments")) return out;
  const auto& args = spec["Arguments"];
  if (!args.is_array()) L.fail("KernelSpecification.Arguments", "must be a list");
  for (std::size_t i = 0; i < args.size(); ++i) out.push_back(read_argument(L, args[i], i));
  return out;
}

std::vector<ReferenceArgument> read_reference_arguments(const Loader& L, const json& spec,
                                                        const Tolerance& tolerance,
                                                        std::vector<ArgumentSpec>& arguments) {
  std::vector<ReferenceArgument> out;
  if (!spec.contains("ReferenceArguments")) return out;
  const auto& refs = L.list_of(spec["ReferenceArguments"], "KernelSpecification.ReferenceArguments");
  for (std::size_t i = 0; i < refs.size(); ++i)
    out.push_back(read_reference_argument(L, refs[i], i, tolerance, arguments));
  return out;
}

std::vector<std::pair<std::size_t, VerifyMode>> read_verification(
    const Loader& L, const json& cut, bool has_cpu_reference,
    const std::vector<ReferenceArgument>& reference_arguments, std::vector<ArgumentSpec>& arguments) {
  std::vector<std::pair<std::size_t, VerifyMode>> out;
  if (!cut.contains("Verification")) return out;
  const auto& v = cut["Verification"];
  if (!v.is_object()) L.fail("cutune.Verification", "must be an object: output name -> reference|default|none");
  for (const auto& item : v.items()) {
    // Not a structured binding: clang 14 (the fuzzing build) cannot capture one in a lambda.
    const std::string& name = item.key();
    const json& mode = item.value();
    const std::string field = "cutune.Verification." + name;
    const auto it = std::find_if(arguments.begin(), arguments.end(), [&](const ArgumentSpec& a) { return a.name == name; });
    if (it == arguments.end() || !it->is_vector) L.fail(field, fmt::format("no Vector argument named '{}'", name));
    const auto index = static_cast<std::size_t>(it - arguments.begin());
    const std::string text = L.string_of(mode, field);
    const auto m = parse_verify_mode(text);
    if (!m) L.fail(field, fmt::format("unknown '{}' (reference, default or none)", text));
    const bool has_reference = has_cpu_reference || std::any_of(reference_arguments.begin(), reference_arguments.end(),
                                                                [&](const ReferenceArgument& r) { return r.target == index; });
    if (*m == VerifyMode::Reference && !has_reference)
      L.fail(field, fmt::format("'reference', but neither cutune.Reference nor a ReferenceArguments entry gives '{}' "
                                "one", name));
    if (*m != VerifyMode::None) it->output = true;  // named to be checked: it is an output
    out.emplace_back(index, *m);
  }
  return out;
}

}  // namespace cutune::detail
