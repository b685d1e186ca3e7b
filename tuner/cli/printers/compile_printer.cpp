#include "compile_printer.hpp"

#include <fmt/format.h>

namespace cutune::cli {

void print_compile_summary(std::ostream& out, const CompileRunSummary& s) {
  out << fmt::format("{}: {} configurations for {} by {}: {} ok, {} failed; {} compiled, {} from the cache, {} "
                     "shared; {} {} workers, {:.2f} s wall, {:.1f} configurations/s, {:.1f} ms per compile\n",
                     s.kernel, s.configs, s.arch, s.compiler_text, s.configs - s.failed, s.failed, s.stats.compiled,
                     s.stats.cache_hits, s.stats.shared, s.workers, s.mode, s.wall_s, s.configs_per_s(),
                     s.compile_ms_mean());
}

nlohmann::ordered_json compile_summary_json(const CompileRunSummary& s) {
  return {{"kernel", s.kernel},
          {"arch", s.arch},
          {"compiler", s.compiler},
          {"configs", s.configs},
          {"failed", s.failed},
          {"unique_compiles", s.stats.compiled},
          {"cache_hits", s.stats.cache_hits},
          {"shared", s.stats.shared},
          {"workers", s.workers},
          {"mode", s.mode},
          {"wall_s", s.wall_s},
          {"configs_per_s", s.configs_per_s()},
          {"compile_ms_mean", s.compile_ms_mean()}};
}

}  // namespace cutune::cli
