#include "cutune/search/lookahead.hpp"

#include <algorithm>

namespace cutune::search {

std::size_t proposals_ahead(bool learns, std::size_t compile_workers, std::size_t gpu_slots) {
  if (!learns) return std::max(kBlindLookahead, gpu_slots);
  return std::max<std::size_t>(compile_workers, 1) + gpu_slots;
}

}  // namespace cutune::search
