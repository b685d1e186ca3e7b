#pragma once
// Priors from the store: what the DB measured for the same kernel on other GPUs or problem
// sizes, as search::Prior values (search/include/cutune/search/prior.hpp), so that a tuning
// on a new GPU or size starts from them. Here, not in db/ (which may not include search)
// nor in search/ (which knows no store).
#include <cstdint>
#include <string>
#include <vector>

#include "cutune/db/store.hpp"
#include "cutune/model/objective.hpp"
#include "cutune/search/prior.hpp"

namespace cutune::runner {

/// `--prior`: auto (a matching prior from the DB when search::kPriorByDefault), on (a
/// matching prior from the DB whatever the default), none.
enum class PriorMode { Auto, On, None };
/// Throws InputError naming --prior for anything but auto, on or none.
PriorMode parse_prior_mode(const std::string& text);
/// Whether a prior from the DB is looked for.
bool prior_from_db(PriorMode mode);

/// The store's measurements of kernel `kernel` (by name: an edited source is another kernel
/// id, the same kernel for a prior; stored under either of its names, as a Kernel Tuner cache
/// imported under the function's name is), one Prior per (kernel id, problem, GPU) stored, except
/// the target (`except_*`: the ids of the run being tuned; 0 = none) and, when
/// `except_gpu_model` is given, the target's kernel and problem on every GPU of that model:
/// those measurements a tuning reuses as they are, so they are not a prior to it too. Each
/// measurement's configuration comes from its JSON object (name -> value); its objective is
/// `objective`'s value, lower is better (a failure: none).
std::vector<search::Prior> priors_from_store(const db::Store& store, const search::KernelNames& kernel,
                                             const Objective& objective, std::int64_t except_kernel_id = 0,
                                             std::int64_t except_problem_id = 0, std::int64_t except_device_id = 0,
                                             const std::string& except_gpu_model = "");

}  // namespace cutune::runner
