// The source cutune compiles for a configuration, with Kernel Tuner's prefix of defines
// (util.prepare_kernel_string), and the -D form of a configuration for display.
#include <fmt/format.h>

#include <algorithm>

#include "cutune/model/problem.hpp"
#include "kernel_source_scan.hpp"
#include "problem_fields.hpp"
#include "problem_scope.hpp"

namespace cutune {

using detail::eval_int;
using detail::is_identifier_char;
using detail::Loader;
using detail::MapScope;
using detail::problem_scope;
using detail::trimmed;

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

std::string KernelProblem::configured_source(const Config& config, const ProblemInstance& instance) const {
  // Kernel Tuner's defines, in its order (a dict: a later assignment to a name keeps the
  // name's first place): grid_size_x/y/z, the block size names, the parameters, kernel_tuner.
  const auto params = space_->assignments(config);
  std::vector<std::pair<std::string, std::string>> defines;
  if (table_ && !table_->define_names.empty()) {
    // Kernel Tuner's `defines` given: the prefix is exactly those, as Python computed them.
    if (auto row = table_->row(config)) {
      for (std::size_t i = 0; i < table_->define_names.size(); ++i)
        defines.emplace_back(table_->define_names[i], table_->define_values[*row][i]);
      return prefixed_source(defines);
    }
  }
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
  return prefixed_source(defines);
}

std::string KernelProblem::prefixed_source(const std::vector<std::pair<std::string, std::string>>& defines) const {
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
