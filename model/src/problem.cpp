#include "cutune/model/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cutune/model/errors.hpp"

namespace cutune {
namespace {

using json = nlohmann::json;

// Names visible to problem-level expressions: problem variables, ProblemSize, and (for
// geometry and metrics) parameters and extra values.
class MapScope final : public Scope {
 public:
  std::map<std::string, Value, std::less<>> values;
  const Value* lookup(std::string_view name) const override {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

struct Loader {
  std::filesystem::path file;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", file.string(), field, what));
  }

  const json& require(const json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) fail(where, "is not a JSON object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, fmt::format("missing field '{}'", key));
    return *it;
  }

  std::string string_of(const json& j, const std::string& field) const {
    if (!j.is_string()) fail(field, "must be a string");
    return j.get<std::string>();
  }

  Expression expression_of(const json& j, const std::string& field) const {
    std::string text;
    if (j.is_string())
      text = j.get<std::string>();
    else if (j.is_number() || j.is_boolean())
      text = j.dump();
    else
      fail(field, "must be a number or an expression string");
    try {
      return Expression::parse(text);
    } catch (const ExpressionError& e) {
      fail(field, e.what());
    }
  }

  std::int64_t int_of(const json& j, const std::string& field) const {
    if (!j.is_number_integer()) fail(field, "must be an integer");
    return j.get<std::int64_t>();
  }

  double number_of(const json& j, const std::string& field) const {
    if (!j.is_number()) fail(field, "must be a number");
    return j.get<double>();
  }

  const json& list_of(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "must be a list");
    return j;
  }

  Value value_of(const json& j, const std::string& field) const {
    if (j.is_boolean()) return Value(j.get<bool>());
    if (j.is_number_integer()) return Value(j.get<std::int64_t>());
    if (j.is_number_float()) return Value(j.get<double>());
    if (j.is_string()) return Value(j.get<std::string>());
    fail(field, "must be a number, boolean or string");
  }
};

ElementType parse_element_type(const Loader& L, const std::string& t, const std::string& field) {
  static const std::pair<const char*, ElementType> names[] = {
      {"int8", ElementType::Int8},     {"uint8", ElementType::UInt8},
      {"int16", ElementType::Int16},   {"uint16", ElementType::UInt16},
      {"int32", ElementType::Int32},   {"uint32", ElementType::UInt32},
      {"int64", ElementType::Int64},   {"uint64", ElementType::UInt64},
      {"float", ElementType::Float32}, {"float32", ElementType::Float32},
      {"double", ElementType::Float64}, {"float64", ElementType::Float64},
      {"int", ElementType::Int32},     {"uint", ElementType::UInt32},
      {"byte", ElementType::Int8}};
  for (const auto& [name, type] : names)
    if (t == name) return type;
  L.fail(field, fmt::format("unsupported argument type '{}' (cutune handles int8..uint64, float, double)", t));
}

// True when the float is a whole number that int64 holds; casting any other is undefined.
bool is_int64_float(double d) {
  return std::isfinite(d) && std::trunc(d) == d && d >= -9223372036854775808.0 &&
         d < 9223372036854775808.0;
}

// repr() for an error message, cut short: a value an expression built can be huge (a list
// holding one big list many times over prints as terabytes).
std::string short_repr(const Value& v) {
  if (v.is_list()) {
    const ValueList& l = v.as_list();
    if (l.size() > 16 || std::any_of(l.begin(), l.end(), [](const Value& x) { return x.is_list(); }))
      return fmt::format("a list of {} values", l.size());
  }
  std::string r = v.repr();
  if (r.size() > 200) r = r.substr(0, 197) + "...";
  return r;
}

// A parameter's Values converted to its declared Type.
Value convert_to_type(const Loader& L, const Value& v, const std::string& type,
                      const std::string& field) {
  if (type == "int" || type == "uint") {
    if (v.is_int() || v.is_bool()) return Value(v.to_int());
    if (v.is_float() && is_int64_float(v.as_float()))
      return Value(static_cast<std::int64_t>(v.as_float()));
  } else if (type == "float") {
    if (v.is_number()) return v.is_float() ? v : Value(v.to_double());
  } else if (type == "bool") {
    if (v.is_bool()) return v;
    if (v.is_int() && (v.as_int() == 0 || v.as_int() == 1)) return Value(v.as_int() == 1);
  } else if (type == "string") {
    if (v.is_string()) return v;
  } else {
    L.fail(field, fmt::format("unknown Type '{}' (int, uint, float, bool, string)", type));
  }
  L.fail(field, fmt::format("value {} is not of Type {}", short_repr(v), type));
}

std::int64_t eval_int(const Loader& L, const Expression& e, const Scope& scope,
                      const std::string& field) {
  try {
    Value v = e.evaluate(scope);
    if (v.is_float() && !is_int64_float(v.as_float()))
      L.fail(field, fmt::format("\"{}\" is {}, not an integer", e.text(), v.str()));
    return v.to_int();
  } catch (const ExpressionError& ex) {
    L.fail(field, ex.what());
  } catch (const std::bad_variant_access&) {
    L.fail(field, fmt::format("\"{}\" is not a number", e.text()));
  } catch (const std::invalid_argument& ex) {
    L.fail(field, ex.what());
  }
}

// Kernel Tuner's int(eval(divisor)): a float quotient is truncated, not refused.
std::int64_t eval_truncated(const Loader& L, const Expression& e, const Scope& scope, const std::string& field) {
  try {
    Value v = e.evaluate(scope);
    if (v.is_float()) {
      const double t = std::trunc(v.as_float());
      if (!is_int64_float(t)) L.fail(field, fmt::format("\"{}\" is {}, not an integer", e.text(), v.str()));
      return static_cast<std::int64_t>(t);
    }
  } catch (const ExpressionError& ex) {
    L.fail(field, ex.what());
  }
  return eval_int(L, e, scope, field);
}

using TokenSet = std::set<std::string, std::less<>>;

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& x : parts) out += (out.empty() ? "" : separator) + x;
  return out;
}

// A JSON value for a message, cut short.
std::string short_json(const nlohmann::json& j) {
  std::string t = j.dump();
  return t.size() > 60 ? t.substr(0, 57) + "..." : t;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Every maximal run of [A-Za-z0-9_]: a name is used when it is one of them, so `tile`
// matches "tile * 2" but not "tiles" or "max_tile".
void add_identifier_tokens(std::string_view text, TokenSet& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_identifier_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < text.size() && is_identifier_char(text[i])) ++i;
    out.emplace(text.substr(start, i - start));
  }
}

// The targets of the #include "..." lines of `text`. Angle-bracket includes are not
// followed: they are found only on -I paths (system headers, in practice).
std::vector<std::string> local_includes(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto skip_blanks = [&](std::size_t i) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      return i;
    };
    std::size_t i = skip_blanks(0);
    if (i >= line.size() || line[i] != '#') continue;
    i = skip_blanks(i + 1);
    if (line.substr(i, 7) != "include") continue;
    i = skip_blanks(i + 7);
    if (i >= line.size() || line[i] != '"') continue;
    std::size_t close = line.find('"', i + 1);
    if (close == std::string_view::npos) continue;
    out.emplace_back(line.substr(i + 1, close - i - 1));
  }
  return out;
}

// Tokens of `text` (the contents of `file`) and, recursively, of the local headers it
// includes, each resolved against the including file's folder and read once. A missing
// header is skipped: the compile reports it better than the loader could.
void add_source_tokens(const std::filesystem::path& file, std::string_view text,
                       std::set<std::filesystem::path>& seen, TokenSet& out,
                       std::vector<std::pair<std::string, std::string>>& headers) {
  std::error_code ec;
  std::filesystem::path id = std::filesystem::weakly_canonical(file, ec);
  if (ec) id = file.lexically_normal();
  if (!seen.insert(id).second) return;
  add_identifier_tokens(text, out);
  for (const auto& name : local_includes(text)) {
    std::filesystem::path header = file.parent_path() / name;
    std::ifstream in(header, std::ios::binary);
    if (!in) continue;
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string content = ss.str();
    if (std::none_of(headers.begin(), headers.end(), [&](const auto& h) { return h.first == name; }))
      headers.emplace_back(name, content);
    add_source_tokens(header, content, seen, out, headers);
  }
}

}  // namespace

std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::Int8: case ElementType::UInt8: return 1;
    case ElementType::Int16: case ElementType::UInt16: return 2;
    case ElementType::Int32: case ElementType::UInt32: case ElementType::Float32: return 4;
    case ElementType::Int64: case ElementType::UInt64: case ElementType::Float64: return 8;
  }
  return 0;
}

const char* element_type_name(ElementType t) {
  switch (t) {
    case ElementType::Int8: return "int8";
    case ElementType::UInt8: return "uint8";
    case ElementType::Int16: return "int16";
    case ElementType::UInt16: return "uint16";
    case ElementType::Int32: return "int32";
    case ElementType::UInt32: return "uint32";
    case ElementType::Int64: return "int64";
    case ElementType::UInt64: return "uint64";
    case ElementType::Float32: return "float";
    case ElementType::Float64: return "double";
  }
  return "?";
}

bool is_floating(ElementType t) { return t == ElementType::Float32 || t == ElementType::Float64; }

std::string ProblemInstance::key() const {
  std::string k;
  for (const auto& [name, value] : variables) k += fmt::format("{}{}={}", k.empty() ? "" : ",", name, value);
  if (k.empty()) {
    for (auto d : problem_size) k += fmt::format("{}{}", k.empty() ? "" : "x", d);
    k = "ProblemSize=" + k;
  }
  return k;
}

std::string ProblemInstance::json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : variables) j[name] = value;
  j["ProblemSize"] = problem_size;
  return j.dump();
}

KernelProblem KernelProblem::load(const std::filesystem::path& json_file) {
  Loader L{json_file};
  KernelProblem p;
  p.json_file_ = json_file;

  std::ifstream in(json_file);
  if (!in) throw InputError(fmt::format("{}: cannot be read", json_file.string()));
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for a number beyond double (1e400). nlohmann's message
    // starts with "[json.exception.parse_error.101] "; keep the rest.
    std::string what = e.what();
    auto pos = what.find("] ");
    throw InputError(fmt::format("{}: malformed JSON: {}", json_file.string(),
                                 pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  if (!root.is_object()) L.fail("(top level)", "is not a JSON object");

  const json& spec = L.require(root, "KernelSpecification", "(top level)");
  const json& cs = L.require(root, "ConfigurationSpace", "(top level)");
  const json empty = json::object();
  const json& cut = root.contains("cutune") ? root["cutune"] : empty;

  // --- names
  p.kernel_name_ = L.string_of(L.require(spec, "KernelName", "KernelSpecification"),
                               "KernelSpecification.KernelName");
  p.name_ = p.kernel_name_;
  if (root.contains("General")) {
    const json& general = root["General"];
    if (!general.is_object()) L.fail("General", "is not a JSON object");
    if (general.contains("BenchmarkName"))
      p.name_ = L.string_of(general["BenchmarkName"], "General.BenchmarkName");
    if (general.contains("Objective")) {
      p.general_objective_ = L.string_of(general["Objective"], "General.Objective");
      if (p.general_objective_.empty()) L.fail("General.Objective", "is empty");
    }
    if (general.contains("Minimize")) {
      if (!general["Minimize"].is_boolean())
        L.fail("General.Minimize", fmt::format("{} is not true or false", general["Minimize"].dump()));
      p.general_minimize_ = general["Minimize"].get<bool>();
    }
  }
  if (spec.contains("Language")) {
    const std::string language = L.string_of(spec["Language"], "KernelSpecification.Language");
    if (language != "CUDA")
      L.fail("KernelSpecification.Language", fmt::format("'{}' is not supported (cutune compiles CUDA)", language));
  }

  // --- source, relative to the JSON file
  std::string kfile = L.string_of(L.require(spec, "KernelFile", "KernelSpecification"),
                                  "KernelSpecification.KernelFile");
  p.kernel_file_ = json_file.parent_path() / kfile;
  {
    std::ifstream src(p.kernel_file_, std::ios::binary);
    if (!src)
      L.fail("KernelSpecification.KernelFile",
             fmt::format("cannot read '{}'", p.kernel_file_.string()));
    std::ostringstream ss;
    ss << src.rdbuf();
    p.source_ = ss.str();
  }

  if (spec.contains("CompilerOptions")) {
    const auto& opts = spec["CompilerOptions"];
    if (!opts.is_array()) L.fail("KernelSpecification.CompilerOptions", "must be a list");
    for (const auto& o : opts)
      p.compiler_options_.push_back(L.string_of(o, "KernelSpecification.CompilerOptions"));
  }

  // --- problem variables (cutune extension)
  if (cut.contains("ProblemVariables")) {
    const auto& vars = cut["ProblemVariables"];
    if (!vars.is_array()) L.fail("cutune.ProblemVariables", "must be a list");
    for (std::size_t i = 0; i < vars.size(); ++i) {
      std::string field = fmt::format("cutune.ProblemVariables[{}]", i);
      ProblemVariable v;
      v.name = L.string_of(L.require(vars[i], "Name", field), field + ".Name");
      v.default_value = L.int_of(L.require(vars[i], "Default", field), field + ".Default");
      if (vars[i].contains("Min")) v.min_value = L.int_of(vars[i]["Min"], field + ".Min");
      if (vars[i].contains("Max")) v.max_value = L.int_of(vars[i]["Max"], field + ".Max");
      if (v.min_value > v.max_value)
        L.fail(field, fmt::format("Min {} is above Max {}", v.min_value, v.max_value));
      if (v.default_value < v.min_value || v.default_value > v.max_value)
        L.fail(field + ".Default", fmt::format("{} is outside [{}, {}]", v.default_value,
                                               v.min_value, v.max_value));
      p.variables_.push_back(v);
    }
  }

  // --- tuning parameters
  std::vector<Parameter> params;
  const json& tps = L.require(cs, "TuningParameters", "ConfigurationSpace");
  if (!tps.is_array()) L.fail("ConfigurationSpace.TuningParameters", "must be a list");
  MapScope no_names;
  std::vector<std::string> bad_defaults;
  for (std::size_t i = 0; i < tps.size(); ++i) {
    std::string field = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
    Parameter par;
    par.name = L.string_of(L.require(tps[i], "Name", field), field + ".Name");
    field = fmt::format("ConfigurationSpace.TuningParameters[{}] ({})", i, par.name);
    std::string type = tps[i].contains("Type") ? L.string_of(tps[i]["Type"], field + ".Type") : "int";
    const json& values = L.require(tps[i], "Values", field);
    Value list;
    if (values.is_string()) {
      try {
        list = Expression::parse(values.get<std::string>()).evaluate(no_names);
      } catch (const ExpressionError& e) {
        L.fail(field + ".Values", e.what());
      }
    } else if (values.is_array()) {
      ValueList vl;
      for (const auto& v : values) vl.push_back(L.value_of(v, field + ".Values"));
      list = Value(vl);
    } else {
      L.fail(field + ".Values", "must be a list or an expression string");
    }
    if (!list.is_list()) L.fail(field + ".Values", fmt::format("is {}, not a list", list.str()));
    for (const auto& v : list.as_list()) par.values.push_back(convert_to_type(L, v, type, field + ".Values"));
    if (par.values.empty()) L.fail(field + ".Values", "is empty");
    // Kernel Tuner has no defaults and BAT's files carry some that are not among the
    // Values (hotspot's MAX_TFACTOR), or are lists ([0]): say so, and fall back below.
    par.default_value = par.values.front();
    if (tps[i].contains("Default")) {
      const json& d = tps[i]["Default"];
      std::string why;
      if (d.is_array() || d.is_object() || d.is_null()) {
        why = "is not a single value";
      } else {
        try {
          Value v = convert_to_type(L, L.value_of(d, field + ".Default"), type, field + ".Default");
          if (std::find(par.values.begin(), par.values.end(), v) == par.values.end())
            why = "is not one of its Values";
          else
            par.default_value = v;
        } catch (const InputError&) {
          why = "is not of its Type";
        }
      }
      if (!why.empty()) bad_defaults.push_back(fmt::format("{} Default {} {}", par.name, short_json(d), why));
    }
    params.push_back(std::move(par));
  }
  std::vector<std::string> restrictions;
  if (cs.contains("Conditions")) {
    const auto& conds = cs["Conditions"];
    if (!conds.is_array()) L.fail("ConfigurationSpace.Conditions", "must be a list");
    for (std::size_t i = 0; i < conds.size(); ++i) {
      std::string field = fmt::format("ConfigurationSpace.Conditions[{}]", i);
      if (conds[i].is_string())
        restrictions.push_back(conds[i].get<std::string>());
      else
        restrictions.push_back(L.string_of(L.require(conds[i], "Expression", field), field + ".Expression"));
    }
  }
  try {
    p.space_ = std::make_shared<Space>(std::move(params), restrictions);
  } catch (const InputError& e) {
    L.fail("ConfigurationSpace", e.what());
  }

  // --- compile parameters: those the code can see. Computed once here; a name in a
  // comment counts too, which costs at most a redundant #define, never a missing one.
  {
    TokenSet tokens;
    std::set<std::filesystem::path> seen;
    add_source_tokens(p.kernel_file_, p.source_, seen, tokens, p.local_headers_);
    for (const auto& o : p.compiler_options_) add_identifier_tokens(o, tokens);
    for (const auto& par : p.space_->parameters()) {
      bool used = tokens.find(par.name) != tokens.end();
      p.compile_parameter_.push_back(used);
      if (!used) p.launch_only_.push_back(par.name);
    }
    p.code_tokens_ = std::move(tokens);
  }

  // --- the thread block: LocalSize as BAT hands it to Kernel Tuner (block_size_names =
  // its entries that are names), else Kernel Tuner's own names.
  if (spec.contains("LocalSize")) {
    const json& local = spec["LocalSize"];
    if (!local.is_object()) L.fail("KernelSpecification.LocalSize", "must be an object with X, Y, Z");
    const char* axes[3] = {"X", "Y", "Z"};
    for (int d = 0; d < 3; ++d) {
      if (!local.contains(axes[d])) {
        p.main_block_[d] = Expression::parse(p.block_names_[d]);
        continue;
      }
      const std::string field = std::string("KernelSpecification.LocalSize.") + axes[d];
      p.main_block_[d] = L.expression_of(local[axes[d]], field);
      const std::string name = trimmed(p.main_block_[d].text());
      if (is_identifier(name)) p.block_names_[d] = name;
      // A name that is not a parameter is Kernel Tuner's default (256 for x, else 1); an
      // expression must be computable from the parameters and problem variables.
      if (!is_identifier(name))
        for (const auto& n : p.main_block_[d].names())
          if (!p.space_->has_parameter(n) &&
              std::none_of(p.variables_.begin(), p.variables_.end(), [&](const ProblemVariable& v) { return v.name == n; }))
            L.fail(field, fmt::format("\"{}\" names '{}', which is not a tuning parameter", p.main_block_[d].text(), n));
    }
  } else {
    // interface.py (check_block_size_params_names_list): without block_size_names, the
    // parameters spelling block_size_x/y/z in another case are the names, sorted.
    std::vector<std::string> names;
    bool any_default = false;
    for (const auto& par : p.space_->parameters()) {
      const std::string lower = ascii_lower(par.name);
      if (lower == "block_size_x" || lower == "block_size_y" || lower == "block_size_z") {
        any_default = true;
        if (lower != par.name) names.push_back(par.name);
      }
    }
    if (any_default) {
      std::stable_sort(names.begin(), names.end(),
                       [](const std::string& a, const std::string& b) { return ascii_lower(a) < ascii_lower(b); });
      for (std::size_t d = 0; d < names.size() && d < 3; ++d) p.block_names_[d] = names[d];
    }
    for (int d = 0; d < 3; ++d) p.main_block_[d] = Expression::parse(p.block_names_[d]);
  }
  p.apply_block_limit();

  // --- the default: Kernel Tuner has none, so one that is not a valid configuration is
  // no reason to refuse the file: the first valid configuration stands in for it.
  {
    Config def = p.space_->default_config();
    std::string why;
    if (!bad_defaults.empty()) {
      why = join(bad_defaults, "; ");
    } else if (std::string r = p.space_->violated_restriction(def); !r.empty()) {
      why = fmt::format("the Defaults {} break \"{}\"", p.space_->key(def), r);
    }
    if (!why.empty()) {
      Config first;
      if (p.space_->next_valid(first)) {
        p.space_->set_default(first);
        p.warnings_.push_back(fmt::format("{}: ConfigurationSpace.TuningParameters: {}; the default is the first valid "
                                          "configuration, {}", json_file.string(), why, p.space_->key(first)));
      } else {
        p.warnings_.push_back(fmt::format("{}: ConfigurationSpace.TuningParameters: {}; no configuration is valid",
                                          json_file.string(), why));
      }
    }
  }

  // --- problem size and grid division. BAT's Kernel Tuner runner: with a ProblemSize,
  // Kernel Tuner's grid division; without one, GlobalSize is the problem size and the
  // divisors are 1, except that GlobalSizeType "OpenCL" counts threads (BAT's CUDA runner
  // divides by the block).
  LaunchSpec main_launch;
  main_launch.kernel_name = p.kernel_name_;
  main_launch.shared_bytes = Expression::parse("0");
  const char* div_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};
  auto read_grid_div = [&](const json& obj, const std::string& where, LaunchSpec& l) {
    for (int d = 0; d < 3; ++d) {
      if (!obj.contains(div_names[d])) continue;
      std::string field = where + "." + div_names[d];
      const auto& divs = obj[div_names[d]];
      l.grid_div[d].clear();
      if (divs.is_array()) {
        for (const auto& e : divs) l.grid_div[d].push_back(L.expression_of(e, field));
      } else if (!divs.is_null()) {
        l.grid_div[d].push_back(L.expression_of(divs, field));  // Kernel Tuner takes one str or int too
      }
    }
  };
  bool threads_global = false;  // GlobalSizeType OpenCL
  if (spec.contains("GlobalSizeType")) {
    const std::string type = L.string_of(spec["GlobalSizeType"], "KernelSpecification.GlobalSizeType");
    if (ascii_lower(type) == "opencl") threads_global = true;
    else if (ascii_lower(type) != "cuda")
      L.fail("KernelSpecification.GlobalSizeType", fmt::format("unknown '{}' (CUDA or OpenCL)", type));
  }
  const bool has_problem_size =
      spec.contains("ProblemSize") && !spec["ProblemSize"].is_null() &&
      !(spec["ProblemSize"].is_array() && spec["ProblemSize"].empty());
  if (has_problem_size || !spec.contains("GlobalSize")) {
    const json& ps = L.require(spec, "ProblemSize", "KernelSpecification");
    if (ps.is_array()) {
      if (ps.empty() || ps.size() > 3) L.fail("KernelSpecification.ProblemSize", "must have 1 to 3 entries");
      for (std::size_t i = 0; i < ps.size(); ++i)
        p.problem_size_.push_back(L.expression_of(ps[i], fmt::format("KernelSpecification.ProblemSize[{}]", i)));
    } else {
      p.problem_size_.push_back(L.expression_of(ps, "KernelSpecification.ProblemSize"));
    }
    // Kernel Tuner's default divisor of a dimension is its block size name when that is a
    // parameter, else 1 (util.get_grid_dimensions).
    for (int d = 0; d < 3; ++d)
      if (p.space_->has_parameter(p.block_names_[d])) main_launch.grid_div[d] = {Expression::parse(p.block_names_[d])};
    read_grid_div(spec, "KernelSpecification", main_launch);
  } else {
    const json& global = spec["GlobalSize"];
    if (!global.is_object()) L.fail("KernelSpecification.GlobalSize", "must be an object with X, Y, Z");
    const char* axes[3] = {"X", "Y", "Z"};
    for (int d = 0; d < 3 && global.contains(axes[d]); ++d)
      p.problem_size_.push_back(L.expression_of(global[axes[d]], std::string("KernelSpecification.GlobalSize.") + axes[d]));
    if (p.problem_size_.empty()) L.fail("KernelSpecification.GlobalSize", "has no X");
    main_launch.divide_by_block = threads_global;
  }
  main_launch.problem_size = p.problem_size_;
  main_launch.block = p.main_block_;
  if (spec.contains("SharedMemory") && !spec["SharedMemory"].is_null())
    main_launch.shared_bytes = L.expression_of(spec["SharedMemory"], "KernelSpecification.SharedMemory");

  // --- arguments
  if (spec.contains("Arguments")) {
    const auto& args = spec["Arguments"];
    if (!args.is_array()) L.fail("KernelSpecification.Arguments", "must be a list");
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string field = fmt::format("KernelSpecification.Arguments[{}]", i);
      const auto& a = args[i];
      ArgumentSpec s;
      s.name = a.contains("Name") ? L.string_of(a["Name"], field + ".Name") : fmt::format("arg{}", i);
      s.type = parse_element_type(L, L.string_of(L.require(a, "Type", field), field + ".Type"), field + ".Type");
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
      if (s.is_vector && s.fill == FillType::BinaryRaw) {
        s.data_source = json_file.parent_path() /
                        L.string_of(L.require(a, "DataSource", field), field + ".DataSource");
        if (!std::filesystem::is_regular_file(s.data_source))
          L.fail(field + ".DataSource", fmt::format("cannot read '{}'", s.data_source.string()));
      }
      if (s.is_vector && s.fill == FillType::Generator)
        s.generator = L.expression_of(L.require(a, "DataSource", field), field + ".DataSource");
      if (s.is_vector) s.size = L.expression_of(L.require(a, "Size", field), field + ".Size");
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
      p.arguments_.push_back(std::move(s));
    }
  }

  for (std::size_t i = 0; i < p.arguments_.size(); ++i) main_launch.arguments.push_back(i);

  // --- cutune extensions
  if (!cut.is_object()) L.fail("cutune", "must be an object");
  if (cut.contains("Launches")) {
    const auto& ls = L.list_of(cut["Launches"], "cutune.Launches");
    if (ls.empty()) L.fail("cutune.Launches", "is empty");
    for (std::size_t i = 0; i < ls.size(); ++i) {
      std::string field = fmt::format("cutune.Launches[{}]", i);
      const auto& j = ls[i];
      LaunchSpec l = main_launch;
      l.kernel_name = L.string_of(L.require(j, "KernelName", field), field + ".KernelName");
      if (j.contains("Arguments")) {
        l.arguments.clear();
        for (const auto& a : L.list_of(j["Arguments"], field + ".Arguments")) {
          std::string name = L.string_of(a, field + ".Arguments");
          auto it = std::find_if(p.arguments_.begin(), p.arguments_.end(),
                                 [&](const ArgumentSpec& s) { return s.name == name; });
          if (it == p.arguments_.end())
            L.fail(field + ".Arguments", fmt::format("'{}' is not in KernelSpecification.Arguments", name));
          l.arguments.push_back(static_cast<std::size_t>(it - p.arguments_.begin()));
        }
      }
      if (j.contains("Condition")) l.condition = L.expression_of(j["Condition"], field + ".Condition");
      if (j.contains("ProblemSize")) {
        l.problem_size.clear();
        const auto& ps2 = j["ProblemSize"];
        if (ps2.is_array()) {
          for (const auto& e : ps2) l.problem_size.push_back(L.expression_of(e, field + ".ProblemSize"));
        } else {
          l.problem_size.push_back(L.expression_of(ps2, field + ".ProblemSize"));
        }
      }
      read_grid_div(j, field, l);
      auto xyz = [&](const char* key, std::array<Expression, 3>& out) {
        const auto& v = L.list_of(j[key], field + "." + key);
        if (v.empty() || v.size() > 3) L.fail(field + "." + key, "must have 1 to 3 entries");
        for (std::size_t d = 0; d < 3; ++d)
          out[d] = d < v.size() ? L.expression_of(v[d], field + "." + key) : Expression::parse("1");
      };
      if (j.contains("Grid")) {
        l.grid.emplace();
        xyz("Grid", *l.grid);
      }
      if (j.contains("Block")) xyz("Block", l.block);
      if (j.contains("SharedMemory")) l.shared_bytes = L.expression_of(j["SharedMemory"], field + ".SharedMemory");
      p.launches_.push_back(std::move(l));
    }
  } else {
    p.launches_.push_back(std::move(main_launch));
  }
  if (cut.contains("Reference")) p.reference_ = L.string_of(cut["Reference"], "cutune.Reference");
  if (cut.contains("Tolerance")) {
    const auto& t = cut["Tolerance"];
    if (!t.is_object()) L.fail("cutune.Tolerance", "must be an object");
    if (t.contains("Relative")) p.tolerance_.relative = L.number_of(t["Relative"], "cutune.Tolerance.Relative");
    if (t.contains("Absolute")) p.tolerance_.absolute = L.number_of(t["Absolute"], "cutune.Tolerance.Absolute");
    if (p.tolerance_.relative < 0 || p.tolerance_.absolute < 0)
      L.fail("cutune.Tolerance", "must not be negative");
  }
  // After cutune.Tolerance: a ReferenceArgument without ValidationMethod takes it.
  if (spec.contains("ReferenceArguments")) {
    const auto& refs = L.list_of(spec["ReferenceArguments"], "KernelSpecification.ReferenceArguments");
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const std::string field = fmt::format("KernelSpecification.ReferenceArguments[{}]", i);
      const auto& r = refs[i];
      ReferenceArgument ref;
      ref.name = L.string_of(L.require(r, "Name", field), field + ".Name");
      const std::string target = L.string_of(L.require(r, "TargetName", field), field + ".TargetName");
      const auto it = std::find_if(p.arguments_.begin(), p.arguments_.end(),
                                   [&](const ArgumentSpec& a) { return a.name == target; });
      if (it == p.arguments_.end()) L.fail(field + ".TargetName", fmt::format("no argument named '{}'", target));
      if (!it->is_vector) L.fail(field + ".TargetName", fmt::format("'{}' is not a Vector argument", target));
      ref.target = static_cast<std::size_t>(it - p.arguments_.begin());
      it->output = true;  // the reference says what it must hold: it is checked
      const std::string fill = L.string_of(L.require(r, "FillType", field), field + ".FillType");
      if (fill == "Constant") {
        ref.fill_value = L.expression_of(L.require(r, "FillValue", field), field + ".FillValue");
      } else if (fill == "BinaryRaw") {
        ref.data_source = json_file.parent_path() /
                          L.string_of(L.require(r, "DataSource", field), field + ".DataSource");
        if (!std::filesystem::is_regular_file(ref.data_source))
          L.fail(field + ".DataSource", fmt::format("cannot read '{}'", ref.data_source.string()));
      } else {
        L.fail(field + ".FillType", fmt::format("unsupported '{}' (Constant or BinaryRaw)", fill));
      }
      ref.tolerance = p.tolerance_;
      if (r.contains("ValidationMethod") || r.contains("ValidationThreshold")) {
        const double threshold = L.number_of(L.require(r, "ValidationThreshold", field), field + ".ValidationThreshold");
        if (!(threshold >= 0)) L.fail(field + ".ValidationThreshold", "must not be negative");
        const std::string method = r.contains("ValidationMethod")
                                       ? L.string_of(r["ValidationMethod"], field + ".ValidationMethod")
                                       : "AbsoluteDifference";
        if (method == "AbsoluteDifference" || method == "SideBySideComparison") ref.tolerance = {0.0, threshold};
        else if (method == "SideBySideRelativeComparison") ref.tolerance = {threshold, 0.0};
        else L.fail(field + ".ValidationMethod", fmt::format("unknown '{}'", method));
      }
      p.reference_arguments_.push_back(std::move(ref));
    }
  }
  if (cut.contains("Verification")) {  // per output: "reference", "default" or "none"
    const auto& v = cut["Verification"];
    if (!v.is_object()) L.fail("cutune.Verification", "must be an object: output name -> reference|default|none");
    for (const auto& [name, mode] : v.items()) {
      const std::string field = "cutune.Verification." + name;
      const auto it = std::find_if(p.arguments_.begin(), p.arguments_.end(),
                                   [&](const ArgumentSpec& a) { return a.name == name; });
      if (it == p.arguments_.end() || !it->is_vector) L.fail(field, fmt::format("no Vector argument named '{}'", name));
      const auto index = static_cast<std::size_t>(it - p.arguments_.begin());
      const std::string text = L.string_of(mode, field);
      const auto m = parse_verify_mode(text);
      if (!m) L.fail(field, fmt::format("unknown '{}' (reference, default or none)", text));
      const bool has_reference = !p.reference_.empty() || std::any_of(p.reference_arguments_.begin(),
          p.reference_arguments_.end(), [&](const ReferenceArgument& r) { return r.target == index; });
      if (*m == VerifyMode::Reference && !has_reference)
        L.fail(field, fmt::format("'reference', but neither cutune.Reference nor a ReferenceArguments entry gives '{}' "
                                  "one", name));
      if (*m != VerifyMode::None) it->output = true;  // named to be checked: it is an output
      p.verification_.emplace_back(index, *m);
    }
  }
  if (cut.contains("Metrics")) {
    L.list_of(cut["Metrics"], "cutune.Metrics");
    for (std::size_t i = 0; i < cut["Metrics"].size(); ++i) {
      std::string field = fmt::format("cutune.Metrics[{}]", i);
      const auto& m = cut["Metrics"][i];
      p.metrics_.push_back({L.string_of(L.require(m, "Name", field), field + ".Name"),
                            L.expression_of(L.require(m, "Expression", field), field + ".Expression")});
    }
  }

  // Validate the problem-level expressions now, on the default instance, so a typo is
  // reported at load time rather than in the middle of a tuning run.
  ProblemInstance inst = p.instantiate();
  for (const auto& a : p.arguments_) {
    if (a.is_vector && p.argument_size(a, inst) < 0)
      L.fail("KernelSpecification.Arguments", fmt::format("'{}' has a negative size", a.name));
    (void)p.argument_fill(a, inst);
    if (a.generator && p.argument_size(a, inst) > 0) p.generate(a, inst, 0, 1, [](std::int64_t, const Value&) {});
  }
  return p;
}

namespace {
// Kernel Tuner evaluates argument sizes with every tuning parameter bound to its list of
// values, so that "ProblemSize[0] + max(filter_width) - 1" sizes a buffer for any config.
MapScope problem_scope(const ProblemInstance& inst, const Space* parameter_lists = nullptr) {
  MapScope s;
  if (parameter_lists)
    for (const auto& p : parameter_lists->parameters()) s.values[p.name] = Value(p.values);
  for (const auto& [name, value] : inst.variables) s.values[name] = Value(value);
  ValueList ps;
  for (auto d : inst.problem_size) ps.push_back(Value(d));
  s.values["ProblemSize"] = Value(ps);
  return s;
}
}  // namespace

ProblemInstance KernelProblem::instantiate(const std::string& overrides) const {
  Loader L{json_file_};
  ProblemInstance inst;
  for (const auto& v : variables_) inst.variables[v.name] = v.default_value;
  std::string_view text = overrides;
  std::size_t start = 0;
  MapScope none;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string item(text.substr(start, end - start));
    start = end + 1;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError(fmt::format("--problem: '{}' is not name=value", item));
    std::string name = item.substr(0, eq);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    auto var = std::find_if(variables_.begin(), variables_.end(),
                            [&](const ProblemVariable& v) { return v.name == name; });
    if (var == variables_.end()) {
      std::string known;
      for (const auto& v : variables_) known += (known.empty() ? "" : ", ") + v.name;
      throw InputError(fmt::format("--problem: '{}' is not a problem variable of {} (known: {})",
                                   name, name_, known.empty() ? "none" : known));
    }
    std::int64_t value = 0;
    try {
      Value v = Expression::parse(item.substr(eq + 1)).evaluate(none);
      if (!v.is_int()) throw ExpressionError("not an integer");
      value = v.as_int();
    } catch (const ExpressionError&) {
      throw InputError(fmt::format("--problem: {}='{}' is not an integer", name, item.substr(eq + 1)));
    }
    if (value < var->min_value || value > var->max_value)
      throw InputError(fmt::format("--problem: {}={} is outside [{}, {}]", name, value,
                                   var->min_value, var->max_value));
    inst.variables[name] = value;
  }
  // Kernel Tuner lets the problem size name parameters; the instance holds the default
  // configuration's (plan() evaluates it per configuration).
  MapScope scope = problem_scope(inst);
  for (const auto& [name, value] : space_->assignments(space_->default_config()))
    if (!scope.values.count(name)) scope.values[name] = value;
  for (const auto& e : problem_size_)
    inst.problem_size.push_back(eval_int(L, e, scope, "KernelSpecification.ProblemSize"));
  return inst;
}

std::vector<std::string> KernelProblem::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& l : launches_)
    if (std::find(names.begin(), names.end(), l.kernel_name) == names.end()) names.push_back(l.kernel_name);
  return names;
}

std::vector<PlannedLaunch> KernelProblem::plan(const Config& config, const ProblemInstance& instance) const {
  Loader L{json_file_};
  MapScope scope = problem_scope(instance);
  scope.values["block_size_x"] = Value(256);  // Kernel Tuner's defaults when not tuned
  scope.values["block_size_y"] = Value(1);
  scope.values["block_size_z"] = Value(1);
  for (int d = 0; d < 3; ++d)
    if (!scope.values.count(block_names_[d])) scope.values[block_names_[d]] = Value(d == 0 ? 256 : 1);
  for (auto& [name, value] : space_->assignments(config)) scope.values[name] = value;
  std::vector<PlannedLaunch> out;
  for (const auto& l : launches_) {
    const std::string where = "launch of " + l.kernel_name;
    if (l.condition) {
      try {
        if (!l.condition->evaluate(scope).truthy()) continue;
      } catch (const ExpressionError& e) {
        L.fail(where + " Condition", e.what());
      }
    }
    LaunchGeometry g;
    for (int d = 0; d < 3; ++d) {
      std::int64_t b = eval_int(L, l.block[d], scope, where + " block size");
      if (b < 1) L.fail(where, fmt::format("block dimension {} is {}", d, b));
      g.block[d] = static_cast<std::uint32_t>(b);
      std::int64_t grid = 1;
      if (l.grid) {
        grid = eval_int(L, (*l.grid)[d], scope, where + " Grid");
      } else {
        std::int64_t size = d < static_cast<int>(l.problem_size.size())
                                ? eval_int(L, l.problem_size[d], scope, where + " ProblemSize")
                                : 1;
        std::int64_t div = l.divide_by_block ? static_cast<std::int64_t>(g.block[d]) : 1;
        for (const auto& e : l.grid_div[d]) {
          if (__builtin_mul_overflow(div, eval_truncated(L, e, scope, where + " grid divisor"), &div))
            L.fail(where, fmt::format("grid divisor of dimension {} overflows 64 bits", d));
        }
        if (div < 1) L.fail(where, fmt::format("grid divisor of dimension {} is {}", d, div));
        grid = size <= 0 ? 0 : (size - 1) / div + 1;  // ceil(size / div), without overflow
      }
      grid = std::max<std::int64_t>(1, grid);
      if (grid > (d == 0 ? 2147483647LL : 65535LL))
        L.fail(where, fmt::format("grid dimension {} needs {} blocks, more than CUDA allows", d, grid));
      g.grid[d] = static_cast<std::uint32_t>(grid);
    }
    std::int64_t shared = eval_int(L, l.shared_bytes, scope, where + " SharedMemory");
    if (shared < 0 || shared > (1 << 30)) L.fail(where, fmt::format("SharedMemory {} is out of range", shared));
    g.dynamic_shared_bytes = static_cast<std::uint32_t>(shared);
    out.push_back({&l, g});
  }
  return out;
}

LaunchGeometry KernelProblem::geometry(const Config& config, const ProblemInstance& instance) const {
  auto launches = plan(config, instance);
  if (launches.empty())
    Loader{json_file_}.fail("cutune.Launches", fmt::format("no launch's Condition holds for {}", space_->key(config)));
  return launches.front().geometry;
}

std::int64_t KernelProblem::argument_size(const ArgumentSpec& arg, const ProblemInstance& instance) const {
  if (!arg.is_vector || !arg.size) return 1;
  return eval_int(Loader{json_file_}, *arg.size, problem_scope(instance, space_.get()),
                  fmt::format("argument '{}' Size", arg.name));
}

Value KernelProblem::fill_number(const Expression& e, const std::string& what, const ProblemInstance& instance) const {
  MapScope scope = problem_scope(instance, space_.get());
  try {
    Value v = e.evaluate(scope);
    if (!v.is_number()) Loader{json_file_}.fail(what, "is not a number");
    return v;
  } catch (const ExpressionError& err) {
    Loader{json_file_}.fail(what, err.what());
  }
}

void KernelProblem::generate(const ArgumentSpec& arg, const ProblemInstance& instance, std::int64_t begin,
                             std::int64_t end, const std::function<void(std::int64_t, const Value&)>& sink) const {
  if (!arg.generator) return;
  MapScope scope = problem_scope(instance, space_.get());
  const std::string what = fmt::format("argument '{}' DataSource", arg.name);
  for (std::int64_t i = begin; i < end; ++i) {
    scope.values["i"] = Value(i);
    try {
      Value v = arg.generator->evaluate(scope);
      if (!v.is_number()) Loader{json_file_}.fail(what, fmt::format("\"{}\" is {}, not a number", arg.generator->text(), short_repr(v)));
      sink(i, v);
    } catch (const ExpressionError& err) {
      Loader{json_file_}.fail(what, err.what());
    }
  }
}

void KernelProblem::apply_block_limit() {
  // Kernel Tuner's MaxProdConstraint covers the block_size_names that are parameters.
  std::vector<Expression> dims;
  for (int d = 0; d < 3; ++d) {
    if (!space_->has_parameter(block_names_[d]) || trimmed(main_block_[d].text()) != block_names_[d]) continue;
    if (std::any_of(dims.begin(), dims.end(), [&](const Expression& e) { return e.text() == block_names_[d]; })) continue;
    dims.push_back(Expression::parse(block_names_[d]));
  }
  space_->set_block_limit(dims, max_threads_);
}

void KernelProblem::set_max_threads_per_block(std::int64_t max_threads) {
  if (max_threads < 1) throw InputError(fmt::format("max threads per block {} is not positive", max_threads));
  if (max_threads == max_threads_) return;
  max_threads_ = max_threads;
  space_ = std::make_shared<Space>(*space_);
  apply_block_limit();
}

Value KernelProblem::argument_fill(const ArgumentSpec& arg, const ProblemInstance& instance) const {
  return fill_number(arg.fill_value, fmt::format("argument '{}' FillValue", arg.name), instance);
}

Value KernelProblem::reference_fill(const ReferenceArgument& ref, const ProblemInstance& instance) const {
  return fill_number(ref.fill_value, fmt::format("reference argument '{}' FillValue", ref.name), instance);
}

const Tolerance& KernelProblem::tolerance_of(std::size_t argument) const {
  for (const auto& r : reference_arguments_)
    if (r.target == argument) return r.tolerance;
  return tolerance_;
}

std::vector<std::pair<std::string, double>> KernelProblem::evaluate_metrics(
    const ProblemInstance& instance, double time_s, const Config* config) const {
  // Kernel Tuner's process_metrics: each metric sees the tuning parameters, the measured
  // `time` in milliseconds (its unit) and the metrics before it, by name.
  MapScope scope = problem_scope(instance);
  if (config)
    for (auto& [name, value] : space_->assignments(*config)) scope.values[name] = std::move(value);
  scope.values["time"] = Value(time_s * 1e3);
  scope.values["time_s"] = Value(time_s);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& m : metrics_) {
    try {
      const double v = m.expression.evaluate(scope).to_double();
      out.emplace_back(m.name, v);
      scope.values[m.name] = Value(v);
    } catch (const std::exception& e) {
      Loader{json_file_}.fail("cutune.Metrics " + m.name, e.what());
    }
  }
  return out;
}

std::vector<std::string> KernelProblem::defines(const Config& config) const {
  std::vector<std::string> out;
  for (const auto& [name, value] : space_->assignments(config)) {
    std::string text = value.is_bool() ? (value.as_bool() ? "1" : "0") : value.str();
    out.push_back(fmt::format("-D{}={}", name, text));
  }
  return out;
}

bool KernelProblem::is_compile_parameter(const std::string& name) const {
  const auto& params = space_->parameters();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name) return compile_parameter_[i];
  return false;
}

std::string KernelProblem::configured_source(const Config& config) const {
  return configured_source(config, instantiate());
}

namespace {
// Kernel Tuner's str() of a define's value, with its replace_param_occurrences for strings
// and its escaping of newlines. Booleans stay 1/0, as cutune has always defined them (Kernel
// Tuner would write True, which the preprocessor reads as 0).
std::string define_text(const Value& v, const std::vector<std::pair<std::string, Value>>& params) {
  std::string text;
  if (v.is_bool()) {
    text = v.as_bool() ? "1" : "0";
  } else if (v.is_string()) {
    const std::string& in = v.as_string();
    std::size_t i = 0;
    while (i < in.size()) {
      std::size_t j = i;
      const bool ident = is_identifier_char(in[i]);
      while (j < in.size() && is_identifier_char(in[j]) == ident) ++j;
      std::string_view part(in.data() + i, j - i);
      auto it = ident ? std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == part; })
                      : params.end();
      text += it == params.end() ? std::string(part) : it->second.str();
      i = j;
    }
  } else {
    text = v.str();
  }
  std::string escaped;
  for (char c : text) {
    if (c == '\n') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// re.sub(r"\n\s*#pragma\s+unroll\s+" + name, "\n", source): what Kernel Tuner does to the
// source for a loop_unroll_factor parameter of value 0 (the compiler then picks).
std::string remove_unroll_pragmas(const std::string& source, const std::string& name) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  std::string out;
  std::size_t i = 0;
  while (i < source.size()) {
    if (source[i] == '\n') {
      std::size_t j = i + 1;
      while (j < source.size() && space(source[j])) ++j;
      // \s* is greedy but backtracks: the pragma must start after some run of blanks; the
      // longest run ends at a non-blank, which is the only place "#" can be.
      if (source.compare(j, 7, "#pragma") == 0) {
        std::size_t k = j + 7, k0 = k;
        while (k < source.size() && space(source[k])) ++k;
        if (k > k0 && source.compare(k, 6, "unroll") == 0) {
          std::size_t m = k + 6, m0 = m;
          while (m < source.size() && space(source[m])) ++m;
          if (m > m0 && source.compare(m, name.size(), name) == 0) {
            out += '\n';
            i = m + name.size();
            continue;
          }
        }
      }
    }
    out += source[i++];
  }
  return out;
}
}  // namespace

std::string KernelProblem::configured_source(const Config& config, const ProblemInstance& instance) const {
  // Kernel Tuner's defines, in its order (a dict: a later assignment to a name keeps the
  // name's first place): grid_size_x/y/z, the block size names, the parameters, kernel_tuner.
  const auto params = space_->assignments(config);
  std::vector<std::pair<std::string, std::string>> defines;
  auto define = [&](const std::string& name, std::string value) {
    auto it = std::find_if(defines.begin(), defines.end(), [&](const auto& d) { return d.first == name; });
    if (it == defines.end()) defines.emplace_back(name, std::move(value));
    else it->second = std::move(value);
  };
  const bool grid_used = mentions("grid_size_x") || mentions("grid_size_y") || mentions("grid_size_z");
  if (grid_used) {
    // Only computed when the code reads it: it depends on the instance, and planning is not free.
    std::array<std::uint32_t, 3> grid{1, 1, 1};
    auto launches = plan(config, instance);
    if (!launches.empty()) grid = launches.front().geometry.grid;
    const char* names[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
    for (int d = 0; d < 3; ++d) define(names[d], std::to_string(grid[d]));
  }
  // Kernel Tuner's threads: params.get(name, 256 / 1 / 1); an expression is evaluated.
  for (int d = 0; d < 3; ++d) {
    const std::string& name = block_names_[d];
    if (!mentions(name)) continue;
    auto p = std::find_if(params.begin(), params.end(), [&](const auto& x) { return x.first == name; });
    if (trimmed(main_block_[d].text()) == name) {
      define(name, p != params.end() ? define_text(p->second, params) : (d == 0 ? "256" : "1"));
    } else {
      MapScope scope = problem_scope(instance);
      for (const auto& [n, v] : params) scope.values[n] = v;
      define(name, std::to_string(eval_int(Loader{json_file_}, main_block_[d], scope, "KernelSpecification.LocalSize")));
    }
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!compile_parameter_[i]) continue;  // launch-only: must not split the cubin cache
    define(params[i].first, define_text(params[i].second, params));
  }
  if (mentions("kernel_tuner")) define("kernel_tuner", "1");

  std::string out, source = source_;
  for (const auto& [name, value] : defines) {
    if (name.find("loop_unroll_factor") != std::string::npos) {
      // CUDA's #pragma unroll needs a constant integer expression, not a macro (util.py).
      if (value == "0") source = remove_unroll_pragmas(source, name);
      else out += fmt::format("constexpr int {} = {};\n", name, value);
    } else {
      out += fmt::format("#define {} {}\n", name, value);
    }
  }
  out += fmt::format("#line 1 \"{}\"\n", kernel_file_.filename().string());
  out += source;
  return out;
}

bool KernelProblem::mentions(std::string_view name) const { return code_tokens_.find(name) != code_tokens_.end(); }

}  // namespace cutune
