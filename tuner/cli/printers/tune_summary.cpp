#include "tune_summary.hpp"

namespace cutune::cli {

std::string TuneSummary::default_key() const {
  return report.default_config ? report.default_config->key() : std::string();
}

double TuneSummary::speedup_over_default() const {
  return report.default_ms > 0 && report.winner_ms > 0 ? report.default_ms / report.winner_ms : 0.0;
}

}  // namespace cutune::cli
