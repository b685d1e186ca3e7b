// Launch geometry: the thread block (KernelSpecification.LocalSize or Kernel Tuner's block
// size names), the grid (ProblemSize and GridDiv, or GlobalSize), dynamic shared memory,
// and the launch sequence of cutune.Launches.
#include <fmt/format.h>

#include <algorithm>

#include "kernel_source_scan.hpp"
#include "t1_sections.hpp"

namespace cutune::detail {

namespace {

constexpr const char* kAxes[3] = {"X", "Y", "Z"};
constexpr const char* kGridDivNames[3] = {"GridDivX", "GridDivY", "GridDivZ"};

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

ThreadBlock read_local_size(const Loader& L, const json& local, const Space& space,
                            const std::vector<ProblemVariable>& variables) {
  if (!local.is_object()) L.fail("KernelSpecification.LocalSize", "must be an object with X, Y, Z");
  ThreadBlock block;
  for (int d = 0; d < 3; ++d) {
    if (!local.contains(kAxes[d])) {
      block.dimensions[d] = Expression::parse(block.names[d]);
      continue;
    }
    const std::string field = std::string("KernelSpecification.LocalSize.") + kAxes[d];
    block.dimensions[d] = L.expression_of(local[kAxes[d]], field);
    const std::string name = trimmed(block.dimensions[d].text());
    if (is_identifier(name)) block.names[d] = name;
    // A name that is not a parameter is Kernel Tuner's default (256 for x, else 1); an
    // expression must be computable from the parameters and problem variables.
    if (!is_identifier(name))
      for (const auto& n : block.dimensions[d].names())
        if (!space.has_parameter(n) &&
            std::none_of(variables.begin(), variables.end(), [&](const ProblemVariable& v) { return v.name == n; }))
          L.fail(field, fmt::format("\"{}\" names '{}', which is not a tuning parameter", block.dimensions[d].text(), n));
  }
  return block;
}

// interface.py (check_block_size_params_names_list): without block_size_names, the
// parameters spelling block_size_x/y/z in another case are the names, sorted.
ThreadBlock kernel_tuner_block(const Space& space) {
  ThreadBlock block;
  std::vector<std::string> names;
  bool any_default = false;
  for (const auto& par : space.parameters()) {
    const std::string lower = ascii_lower(par.name);
    if (lower == "block_size_x" || lower == "block_size_y" || lower == "block_size_z") {
      any_default = true;
      if (lower != par.name) names.push_back(par.name);
    }
  }
  if (any_default) {
    std::stable_sort(names.begin(), names.end(),
                     [](const std::string& a, const std::string& b) { return ascii_lower(a) < ascii_lower(b); });
    for (std::size_t d = 0; d < names.size() && d < 3; ++d) block.names[d] = names[d];
  }
  for (int d = 0; d < 3; ++d) block.dimensions[d] = Expression::parse(block.names[d]);
  return block;
}

// GridDivX/Y/Z of obj (a list of expressions, or one), replacing the launch's divisors.
void read_grid_div(const Loader& L, const json& obj, const std::string& where, LaunchSpec& l) {
  for (int d = 0; d < 3; ++d) {
    if (!obj.contains(kGridDivNames[d])) continue;
    std::string field = where + "." + kGridDivNames[d];
    const auto& divs = obj[kGridDivNames[d]];
    l.grid_div[d].clear();
    if (divs.is_array()) {
      for (const auto& e : divs) l.grid_div[d].push_back(L.expression_of(e, field));
    } else if (!divs.is_null()) {
      l.grid_div[d].push_back(L.expression_of(divs, field));  // Kernel Tuner takes one str or int too
    }
  }
}

// True for GlobalSizeType "OpenCL" (GlobalSize counts threads), false for "CUDA" or none.
bool global_size_counts_threads(const Loader& L, const json& spec) {
  if (!spec.contains("GlobalSizeType")) return false;
  const std::string type = L.string_of(spec["GlobalSizeType"], "KernelSpecification.GlobalSizeType");
  if (ascii_lower(type) == "opencl") return true;
  if (ascii_lower(type) != "cuda")
    L.fail("KernelSpecification.GlobalSizeType", fmt::format("unknown '{}' (CUDA or OpenCL)", type));
  return false;
}

std::vector<Expression> read_problem_size(const Loader& L, const json& ps) {
  std::vector<Expression> out;
  if (ps.is_array()) {
    if (ps.empty() || ps.size() > 3) L.fail("KernelSpecification.ProblemSize", "must have 1 to 3 entries");
    for (std::size_t i = 0; i < ps.size(); ++i)
      out.push_back(L.expression_of(ps[i], fmt::format("KernelSpecification.ProblemSize[{}]", i)));
  } else {
    out.push_back(L.expression_of(ps, "KernelSpecification.ProblemSize"));
  }
  return out;
}

std::vector<Expression> read_global_size(const Loader& L, const json& global) {
  if (!global.is_object()) L.fail("KernelSpecification.GlobalSize", "must be an object with X, Y, Z");
  std::vector<Expression> out;
  for (int d = 0; d < 3 && global.contains(kAxes[d]); ++d)
    out.push_back(L.expression_of(global[kAxes[d]], std::string("KernelSpecification.GlobalSize.") + kAxes[d]));
  if (out.empty()) L.fail("KernelSpecification.GlobalSize", "has no X");
  return out;
}

// An entry's Grid or Block: 1 to 3 expressions, the missing ones 1.
void read_xyz(const Loader& L, const json& j, const char* key, const std::string& field,
              std::array<Expression, 3>& out) {
  const auto& v = L.list_of(j[key], field + "." + key);
  if (v.empty() || v.size() > 3) L.fail(field + "." + key, "must have 1 to 3 entries");
  for (std::size_t d = 0; d < 3; ++d)
    out[d] = d < v.size() ? L.expression_of(v[d], field + "." + key) : Expression::parse("1");
}

// Names of KernelSpecification.Arguments as indices.
std::vector<std::size_t> launch_arguments(const Loader& L, const json& names, const std::string& field,
                                          const std::vector<ArgumentSpec>& arguments) {
  std::vector<std::size_t> out;
  for (const auto& a : L.list_of(names, field)) {
    std::string name = L.string_of(a, field);
    auto it = std::find_if(arguments.begin(), arguments.end(), [&](const ArgumentSpec& s) { return s.name == name; });
    if (it == arguments.end())
      L.fail(field, fmt::format("'{}' is not in KernelSpecification.Arguments", name));
    out.push_back(static_cast<std::size_t>(it - arguments.begin()));
  }
  return out;
}

LaunchSpec read_launch(const Loader& L, const json& j, std::size_t i, const LaunchSpec& main_launch,
                       const std::vector<ArgumentSpec>& arguments) {
  std::string field = fmt::format("cutune.Launches[{}]", i);
  LaunchSpec l = main_launch;
  l.kernel_name = L.string_of(L.require(j, "KernelName", field), field + ".KernelName");
  if (j.contains("Arguments")) l.arguments = launch_arguments(L, j["Arguments"], field + ".Arguments", arguments);
  if (j.contains("Condition")) l.condition = L.expression_of(j["Condition"], field + ".Condition");
  if (j.contains("ProblemSize")) {
    l.problem_size.clear();
    const auto& ps = j["ProblemSize"];
    if (ps.is_array()) {
      for (const auto& e : ps) l.problem_size.push_back(L.expression_of(e, field + ".ProblemSize"));
    } else {
      l.problem_size.push_back(L.expression_of(ps, field + ".ProblemSize"));
    }
  }
  read_grid_div(L, j, field, l);
  if (j.contains("Grid")) {
    l.grid.emplace();
    read_xyz(L, j, "Grid", field, *l.grid);
  }
  if (j.contains("Block")) read_xyz(L, j, "Block", field, l.block);
  if (j.contains("SharedMemory")) l.shared_bytes = L.expression_of(j["SharedMemory"], field + ".SharedMemory");
  return l;
}

}  // namespace

ThreadBlock read_thread_block(const Loader& L, const json& spec, const Space& space,
                              const std::vector<ProblemVariable>& variables) {
  if (spec.contains("LocalSize")) return read_local_size(L, spec["LocalSize"], space, variables);
  return kernel_tuner_block(space);
}

// BAT's Kernel Tuner runner: with a ProblemSize, Kernel Tuner's grid division; without one,
// GlobalSize is the problem size and the divisors are 1, except that GlobalSizeType "OpenCL"
// counts threads (BAT's CUDA runner divides by the block).
LaunchSpec read_main_launch(const Loader& L, const json& spec, const std::string& kernel_name,
                            const Space& space, const ThreadBlock& block) {
  LaunchSpec launch;
  launch.kernel_name = kernel_name;
  launch.shared_bytes = Expression::parse("0");
  const bool threads_global = global_size_counts_threads(L, spec);
  const bool has_problem_size =
      spec.contains("ProblemSize") && !spec["ProblemSize"].is_null() &&
      !(spec["ProblemSize"].is_array() && spec["ProblemSize"].empty());
  if (has_problem_size || !spec.contains("GlobalSize")) {
    launch.problem_size = read_problem_size(L, L.require(spec, "ProblemSize", "KernelSpecification"));
    // Kernel Tuner's default divisor of a dimension is its block size name when that is a
    // parameter, else 1 (util.get_grid_dimensions).
    for (int d = 0; d < 3; ++d)
      if (space.has_parameter(block.names[d])) launch.grid_div[d] = {Expression::parse(block.names[d])};
    read_grid_div(L, spec, "KernelSpecification", launch);
  } else {
    launch.problem_size = read_global_size(L, spec["GlobalSize"]);
    launch.divide_by_block = threads_global;
  }
  launch.block = block.dimensions;
  if (spec.contains("SharedMemory") && !spec["SharedMemory"].is_null())
    launch.shared_bytes = L.expression_of(spec["SharedMemory"], "KernelSpecification.SharedMemory");
  return launch;
}

std::vector<LaunchSpec> read_launches(const Loader& L, const json& cut, const LaunchSpec& main_launch,
                                      const std::vector<ArgumentSpec>& arguments) {
  if (!cut.contains("Launches")) return {main_launch};
  const auto& ls = L.list_of(cut["Launches"], "cutune.Launches");
  if (ls.empty()) L.fail("cutune.Launches", "is empty");
  std::vector<LaunchSpec> out;
  for (std::size_t i = 0; i < ls.size(); ++i) out.push_back(read_launch(L, ls[i], i, main_launch, arguments));
  return out;
}

}  // namespace cutune::detail
