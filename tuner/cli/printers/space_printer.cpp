#include "space_printer.hpp"

#include <fmt/format.h>

#include <vector>

namespace cutune::cli {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string values_text(const Parameter& p) {
  std::vector<std::string> v;
  for (const auto& x : p.values) v.push_back(x.str());
  return "[" + join(v, ", ") + "]";
}

void print_restrictions(std::ostream& out, const Space& s) {
  out << "restrictions:\n";
  if (s.restrictions().empty() && s.block_limit().empty()) out << "  (none)\n";
  for (const auto& r : s.restrictions()) out << "  " << r.expression.text() << '\n';
  if (!s.block_limit().empty()) out << "  " << s.block_limit() << "  (threads per block)\n";
}

}  // namespace

nlohmann::ordered_json space_timing_json(const SpaceTiming& t) {
  nlohmann::ordered_json j;
  j["kernel"] = t.kernel;
  j["cartesian"] = t.cartesian;
  j["valid"] = t.valid;
  j["first_valid"] = t.first_valid;
  j["load_ms"] = t.load_ms;
  j["first_valid_ms"] = t.first_valid_ms;
  j["count_ms"] = t.count_ms;
  j["peak_rss_kib"] = t.peak_rss_kib;
  return j;
}

void print_parameters(std::ostream& out, const Space& space) {
  for (const auto& par : space.parameters())
    out << fmt::format("  {:<22} {}  default {}\n", par.name, values_text(par), par.default_value.str());
}

nlohmann::json space_listing_json(const KernelProblem& p, bool default_first) {
  const Space& s = p.space();
  nlohmann::json j;
  j["parameters"] = nlohmann::json::array();
  for (const auto& par : s.parameters()) j["parameters"].push_back(par.name);
  j["block_size_names"] = p.block_size_names();
  j["max_threads"] = p.max_threads_per_block();
  j["default"] = s.key(s.default_config());
  j["default_first"] = default_first;  // a tuning evaluates it before the strategy
  j["warnings"] = p.warnings();
  j["valid"] = nlohmann::json::array();
  s.for_each_valid([&](const Config& c) {
    j["valid"].push_back(s.key(c));
    return true;
  });
  return j;
}

void print_space_overview(std::ostream& out, const KernelProblem& p, const ProblemInstance& inst,
                          const SpaceOverview& o) {
  const Space& s = p.space();
  out << fmt::format("{} ({}), problem {}\n", p.name(), p.json_file().string(), inst.key());
  out << "parameters:\n";
  print_parameters(out, s);
  print_restrictions(out, s);
  if (!p.resource_restrictions().empty()) {
    // Not counted in the sizes below: they read what only the compile and load tell.
    out << "resource restrictions (checked after compile and load, before launch):\n";
    for (const auto& r : p.resource_restrictions()) out << "  " << r.text() << '\n';
  }
  out << fmt::format("cartesian size: {}\nvalid size:     {} (enumerated in {:.1f} ms)\n", s.cartesian_size(),
                     o.valid, o.enumerate_ms);
  // Why a tuning does or does not evaluate it first: a nameless default that is evaluated first
  // anyway (an output without a reference) had looked named (Kernel Tuner's convolution_correct.py).
  const char* why_default = !o.default_first ? " (named by no Default: a tuning starts with its strategy instead)"
                            : s.default_named() ? ""
                                                : " (named by no Default, but an output without a reference is verified "
                                                  "against its output: a tuning evaluates it first)";
  out << fmt::format("default: {}{}\n", s.key(s.default_config()), why_default);
  std::vector<std::string> names;
  for (const auto& par : s.parameters()) names.push_back(par.name);
  out << fmt::format("first {} valid configurations ({}):\n", o.show, join(names, ","));
  int shown = 0;
  if (o.show > 0) s.for_each_valid([&](const Config& c) {
    LaunchGeometry g = p.geometry(c, inst);
    out << fmt::format("  {:<24} grid ({},{},{}) block ({},{},{})\n", s.key(c), g.grid[0], g.grid[1], g.grid[2],
                       g.block[0], g.block[1], g.block[2]);
    return ++shown < o.show;
  });
}

}  // namespace cutune::cli
