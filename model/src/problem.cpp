// A loaded problem at run time: its instances (problem variables and sizes), the launches
// of a configuration with their geometry, argument sizes and fills, and metrics. Loading is
// in problem_load.cpp, the source cutune compiles in kernel_tuner_prefix.cpp.
#include "cutune/model/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cutune/model/errors.hpp"
#include "kernel_source_scan.hpp"
#include "problem_fields.hpp"
#include "problem_scope.hpp"

namespace cutune {

using detail::eval_int;
using detail::eval_truncated;
using detail::Loader;
using detail::MapScope;
using detail::problem_scope;
using detail::short_repr;
using detail::trimmed;

std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::Int8: case ElementType::UInt8: return 1;
    case ElementType::Int16: case ElementType::UInt16: case ElementType::Float16: case ElementType::BFloat16: return 2;
    case ElementType::Int32: case ElementType::UInt32: case ElementType::Float32: return 4;
    case ElementType::Int64: case ElementType::UInt64: case ElementType::Float64: case ElementType::Complex64: return 8;
    case ElementType::Complex128: return 16;
  }
  return 0;
}

std::size_t element_alignment(ElementType t) {
  if (t == ElementType::Complex64) return 4;
  if (t == ElementType::Complex128) return 8;
  return element_size(t);
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
    case ElementType::Float16: return "half";
    case ElementType::BFloat16: return "bfloat16";
    case ElementType::Complex64: return "float2";
    case ElementType::Complex128: return "double2";
  }
  return "?";
}

std::optional<ElementType> parse_element_type(const std::string& name) {
  static const std::pair<const char*, ElementType> names[] = {
      {"int8", ElementType::Int8},          {"uint8", ElementType::UInt8},
      {"int16", ElementType::Int16},        {"uint16", ElementType::UInt16},
      {"int32", ElementType::Int32},        {"uint32", ElementType::UInt32},
      {"int64", ElementType::Int64},        {"uint64", ElementType::UInt64},
      {"float", ElementType::Float32},      {"float32", ElementType::Float32},
      {"double", ElementType::Float64},     {"float64", ElementType::Float64},
      {"int", ElementType::Int32},          {"uint", ElementType::UInt32},
      {"byte", ElementType::Int8},          {"bool", ElementType::UInt8},
      {"half", ElementType::Float16},       {"bfloat16", ElementType::BFloat16},
      {"float2", ElementType::Complex64},   {"complex64", ElementType::Complex64},
      {"double2", ElementType::Complex128}, {"complex128", ElementType::Complex128}};
  for (const auto& [n, type] : names)
    if (name == n) return type;
  return std::nullopt;
}

bool is_floating(ElementType t) {
  return t == ElementType::Float32 || t == ElementType::Float64 || t == ElementType::Float16 ||
         t == ElementType::BFloat16;
}

bool is_complex(ElementType t) { return t == ElementType::Complex64 || t == ElementType::Complex128; }

std::string variables_key(const std::map<std::string, std::int64_t>& variables) {
  std::string k;
  for (const auto& [name, value] : variables) k += fmt::format("{}{}={}", k.empty() ? "" : ",", name, value);
  return k;
}

std::string ProblemInstance::key() const {
  std::string k = variables_key(variables);
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

std::vector<std::pair<std::string, std::int64_t>> parse_problem_assignments(
    const std::string& text, const std::function<void(const std::string&)>& check_name) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  std::size_t start = 0;
  MapScope none;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(fmt::format("--problem: '{}' is not name=value", item));
    const std::string name = trimmed(item.substr(0, eq));
    const std::string value_text = item.substr(eq + 1);
    if (name.empty()) throw InputError(fmt::format("--problem: '{}' has no name before '='", item));
    for (const auto& [seen, v] : out)
      if (seen == name)
        throw InputError(fmt::format("--problem: {} is given twice ({}={} and {}={}): give it once", name, name, v,
                                     name, trimmed(value_text)));
    if (check_name) check_name(name);
    Value v;
    try {
      v = Expression::parse(value_text).evaluate(none);
    } catch (const ExpressionError& e) {
      // The evaluator's message starts with the expression's text, which the item already
      // shows: keep what went wrong (division by zero, overflow, a syntax error).
      std::string why = e.what();
      if (const auto colon = why.find("': "); colon != std::string::npos) why = why.substr(colon + 3);
      throw InputError(fmt::format("--problem: {}='{}': {}", name, trimmed(value_text), why));
    }
    if (!v.is_int())
      throw InputError(fmt::format("--problem: {}='{}' is not an integer (it is {})", name, trimmed(value_text),
                                   v.str()));
    out.emplace_back(name, v.as_int());
  }
  return out;
}

std::string problem_key_of(const std::string& text) {
  ProblemInstance inst;
  // "ProblemSize=4096x4096": the key of a problem named by its sizes only (key() above), as
  // an import of a cache stores it, so a T4 file of the same space can be stored beside it.
  if (const std::string prefix = "ProblemSize="; text.rfind(prefix, 0) == 0) {
    std::size_t start = prefix.size();
    while (start <= text.size()) {
      std::size_t end = text.find('x', start);
      if (end == std::string::npos) end = text.size();
      const std::string dim = text.substr(start, end - start);
      const bool digits = !dim.empty() && dim.size() < 19 &&
                          std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoll(dim) < 1)
        throw InputError(fmt::format("--problem {}: '{}' is not a size (ProblemSize=AxBxC, each at least 1)", text,
                                     dim));
      inst.problem_size.push_back(std::stoll(dim));
      start = end + 1;
    }
    return inst.key();
  }
  for (const auto& [name, value] : parse_problem_assignments(text)) inst.variables[name] = value;
  return inst.key();
}

ProblemInstance KernelProblem::instantiate(const std::string& overrides) const {
  Loader L{json_file_};
  ProblemInstance inst;
  for (const auto& v : variables_) inst.variables[v.name] = v.default_value;
  const auto variable = [&](const std::string& name) {
    return std::find_if(variables_.begin(), variables_.end(), [&](const ProblemVariable& v) { return v.name == name; });
  };
  const auto known_variable = [&](const std::string& name) {
    if (variable(name) != variables_.end()) return;
    std::string known;
    for (const auto& v : variables_) known += (known.empty() ? "" : ", ") + v.name;
    throw InputError(fmt::format("--problem: '{}' is not a problem variable of {} (known: {})", name, name_,
                                 known.empty() ? "none" : known));
  };
  for (const auto& [name, value] : parse_problem_assignments(overrides, known_variable)) {
    const auto var = variable(name);
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
  // The main launch's grid and shared memory as Python computed them (cutune.Configurations).
  std::optional<std::size_t> row;
  if (table_ && !table_->launch.empty()) row = table_->row(config);
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
      if (row && &l == &launches_.front()) {
        grid = table_->launch[*row][d];
      } else if (l.grid) {
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
    std::int64_t shared = row && &l == &launches_.front() ? std::int64_t{table_->launch[*row][3]}
                                                          : eval_int(L, l.shared_bytes, scope, where + " SharedMemory");
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

void KernelProblem::index_data() {
  data_.clear();
  data_argument_.clear();
  first_data_.clear();
  variants_ = std::any_of(arguments_.begin(), arguments_.end(), [](const ArgumentSpec& a) { return !a.variants.empty(); });
  for (std::size_t a = 0; a < arguments_.size(); ++a) {
    first_data_.push_back(data_argument_.size());
    const ArgumentSpec& arg = arguments_[a];
    if (arg.variants.empty()) {
      if (variants_) data_.push_back(arg);
      data_argument_.push_back(a);
      continue;
    }
    for (ArgumentSpec v : arg.variants) {
      v.output = arg.output;
      v.access = arg.access;
      data_.push_back(std::move(v));
      data_argument_.push_back(a);
    }
  }
  variant_column_.resize(arguments_.size(), static_cast<std::size_t>(-1));
}

std::size_t KernelProblem::data_for_row(std::size_t row, std::size_t argument) const {
  const std::size_t first = first_data_.at(argument);
  if (arguments_[argument].variants.empty()) return first;
  return first + table_->variants.at(row).at(variant_column_[argument]);
}

std::size_t KernelProblem::data_for(const Config& config, std::size_t argument) const {
  if (arguments_.at(argument).variants.empty()) return first_data_.at(argument);
  const auto row = table_ ? table_->row(config) : std::nullopt;
  if (!row)
    throw InputError(fmt::format("{}: configuration {} is not in cutune.Configurations, which says the variant of "
                                 "'{}' each configuration passes", json_file_.string(), space_->key(config),
                                 arguments_[argument].name));
  return data_for_row(*row, argument);
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

std::string KernelProblem::violated_resource_restriction(const ProblemInstance& instance, const Config& config,
                                                         const KernelResources& resources) const {
  if (resource_restrictions_.empty()) return "";
  MapScope scope = problem_scope(instance);
  for (auto& [name, value] : space_->assignments(config)) scope.values[name] = std::move(value);
  for (auto& [name, value] : resource_values(resources)) scope.values[name] = std::move(value);
  for (const Expression& r : resource_restrictions_) {
    std::string read;  // the resources it read, as the message shows them
    for (const std::string& n : r.names()) {
      const auto& all = resource_names();
      if (std::find(all.begin(), all.end(), n) == all.end()) continue;
      read += fmt::format("{}{}={}", read.empty() ? "" : " ", n, scope.values.at(n).repr());
    }
    try {
      if (!r.evaluate(scope).truthy())
        return fmt::format("{} violates the resource restriction \"{}\"", read, r.text());
    } catch (const std::exception& e) {
      return fmt::format("the resource restriction \"{}\" could not be evaluated ({}): {}", r.text(), read, e.what());
    }
  }
  return "";
}

}  // namespace cutune
