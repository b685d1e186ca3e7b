#pragma once
// What a compiled configuration costs the GPU: its registers, local memory (where spills
// go), shared and constant memory, and the theoretical occupancy those allow at the block
// size and dynamic shared memory it launches with. Read by the GPU worker from the driver
// (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor) once the module is
// loaded, before anything is launched; kept with the measurement, shown beside its time, and
// readable by name in cutune.ResourceRestrictions.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutune/model/value.hpp"

namespace cutune {

/// One configuration's resources. A configuration of several launches (T1 KernelSpecification
/// lists, Conditions) reports its most demanding kernel: the largest of each amount and the
/// lowest occupancy, as the launch that limits it is what a restriction means to exclude.
struct KernelResources {
  int registers = 0;                      ///< per thread (CU_FUNC_ATTRIBUTE_NUM_REGS)
  std::int64_t local_bytes = 0;           ///< local memory per thread: spills and stack arrays
  std::int64_t static_shared_bytes = 0;   ///< __shared__ declared in the kernel, per block
  std::int64_t dynamic_shared_bytes = 0;  ///< the launch's dynamic shared memory, per block
  std::int64_t const_bytes = 0;           ///< user __constant__ memory
  int max_threads_per_block = 0;          ///< the kernel's limit (its registers may lower the device's)
  int block_threads = 0;                  ///< threads per block of the launch
  /// Resident blocks per SM at this block size and shared memory (the occupancy API); none
  /// when it could not be asked (a launch refused before it).
  std::optional<int> active_blocks_per_sm;
  /// Theoretical occupancy: resident warps over the SM's most warps, 0..1.
  std::optional<double> occupancy;

  std::int64_t shared_bytes() const { return static_shared_bytes + dynamic_shared_bytes; }
  /// Merges another launch's resources in (the rule above).
  void combine(const KernelResources& other);
  friend bool operator==(const KernelResources&, const KernelResources&) = default;
};

/// The names a resource restriction may read, in order: registers, local_bytes,
/// static_shared_bytes, dynamic_shared_bytes, shared_bytes (static plus dynamic), const_bytes,
/// max_threads_per_block, block_threads, active_blocks_per_sm, occupancy.
const std::vector<std::string>& resource_names();
/// (name, value) for each of resource_names(); an unknown amount is None.
std::vector<std::pair<std::string, Value>> resource_values(const KernelResources& r);

/// {"registers":32,...}: the fields under the names above (shared_bytes not repeated; unknown
/// ones left out). How the store and the reports write them.
nlohmann::ordered_json to_json(const KernelResources& r);
/// Read back from to_json's form; nullopt for something that is not an object with at least
/// `registers` as an integer (rows of versions that kept no resources).
std::optional<KernelResources> kernel_resources_of(const nlohmann::ordered_json& j);

}  // namespace cutune
