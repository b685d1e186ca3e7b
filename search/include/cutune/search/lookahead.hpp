#pragma once
// How many configurations the tuning loop keeps proposed ahead of their results: one rule for
// the real loop (tuner/runner) and for the simulation of it (simulation.hpp), so that what
// `cutune score --compile-workers` scores is what `cutune tune` does.
#include <cstddef>

namespace cutune::search {

/// A strategy that does not learn from results: this many in the compile pool at most
/// (bounded memory: cubins of tens of kilobytes each, some megabytes). The start-up's half
/// second then compiles a few hundred configurations ahead, and the GPU waited for compiles
/// 0.1 ms per configuration less on an H100 (results/nvidia-h100-80gb-hbm3/throughput.json).
inline constexpr std::size_t kBlindLookahead = 512;

/// Configurations proposed and not yet handed to a GPU worker (queued for a compile worker,
/// compiling, or compiled and waiting), at most; the GPU workers hold `gpu_slots` more.
/// A strategy that learns gets one per compile worker plus the GPU workers' slots: every
/// compile worker stays busy and a compiled configuration waits for each GPU slot, and no
/// proposal is made further ahead of the results than that. It had 4 per compile worker (48
/// with 12): simulated as the loop runs (12 compile workers, 19 recorded spaces, 20 runs) the
/// default strategy scored 0.919 with this rule against 0.877 with 48, better on 18 of 19
/// spaces; tuned for real on an H100 (6 seeds each, --no-cache) it came within 1% of the
/// recorded optimum sooner on matmul (median 0.99 s against 1.21 s), reduction (0.80 / 0.93)
/// and strided_access (0.69 / 0.73), later on scan (3.20 / 3.09); evaluations per second were
/// level on scan and reduction, 8% fewer on strided_access, whose kernels take microseconds
/// (results/nvidia-h100-80gb-hbm3/lookahead_on_gpu/).
std::size_t proposals_ahead(bool learns, std::size_t compile_workers, std::size_t gpu_slots);

}  // namespace cutune::search
