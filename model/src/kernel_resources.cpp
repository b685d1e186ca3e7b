#include "cutune/model/kernel_resources.hpp"

#include <algorithm>

namespace cutune {

void KernelResources::combine(const KernelResources& o) {
  registers = std::max(registers, o.registers);
  local_bytes = std::max(local_bytes, o.local_bytes);
  static_shared_bytes = std::max(static_shared_bytes, o.static_shared_bytes);
  dynamic_shared_bytes = std::max(dynamic_shared_bytes, o.dynamic_shared_bytes);
  const_bytes = std::max(const_bytes, o.const_bytes);
  // The kernel that allows the fewest threads, and the launch that fills the SM least.
  if (o.max_threads_per_block > 0)
    max_threads_per_block = max_threads_per_block > 0 ? std::min(max_threads_per_block, o.max_threads_per_block)
                                                      : o.max_threads_per_block;
  block_threads = std::max(block_threads, o.block_threads);
  if (!o.occupancy || (occupancy && *occupancy <= *o.occupancy)) return;
  occupancy = o.occupancy;
  active_blocks_per_sm = o.active_blocks_per_sm;
}

const std::vector<std::string>& resource_names() {
  static const std::vector<std::string> names{
      "registers",   "local_bytes",           "static_shared_bytes", "dynamic_shared_bytes", "shared_bytes",
      "const_bytes", "max_threads_per_block", "block_threads",       "active_blocks_per_sm", "occupancy"};
  return names;
}

std::vector<std::pair<std::string, Value>> resource_values(const KernelResources& r) {
  auto opt_int = [](const std::optional<int>& v) { return v ? Value(std::int64_t{*v}) : Value(); };
  return {{"registers", Value(std::int64_t{r.registers})},
          {"local_bytes", Value(r.local_bytes)},
          {"static_shared_bytes", Value(r.static_shared_bytes)},
          {"dynamic_shared_bytes", Value(r.dynamic_shared_bytes)},
          {"shared_bytes", Value(r.shared_bytes())},
          {"const_bytes", Value(r.const_bytes)},
          {"max_threads_per_block", Value(std::int64_t{r.max_threads_per_block})},
          {"block_threads", Value(std::int64_t{r.block_threads})},
          {"active_blocks_per_sm", opt_int(r.active_blocks_per_sm)},
          {"occupancy", r.occupancy ? Value(*r.occupancy) : Value()}};
}

nlohmann::ordered_json to_json(const KernelResources& r) {
  nlohmann::ordered_json j{{"registers", r.registers},
                           {"local_bytes", r.local_bytes},
                           {"static_shared_bytes", r.static_shared_bytes},
                           {"dynamic_shared_bytes", r.dynamic_shared_bytes},
                           {"const_bytes", r.const_bytes},
                           {"max_threads_per_block", r.max_threads_per_block},
                           {"block_threads", r.block_threads}};
  if (r.active_blocks_per_sm) j["active_blocks_per_sm"] = *r.active_blocks_per_sm;
  if (r.occupancy) j["occupancy"] = *r.occupancy;
  return j;
}

std::optional<KernelResources> kernel_resources_of(const nlohmann::ordered_json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto regs = j.find("registers");
  if (regs == j.end() || !regs->is_number_integer()) return std::nullopt;
  auto integer = [&](const char* key) -> std::optional<std::int64_t> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
  };
  KernelResources r;
  r.registers = static_cast<int>(regs->get<std::int64_t>());
  r.local_bytes = integer("local_bytes").value_or(0);
  r.static_shared_bytes = integer("static_shared_bytes").value_or(0);
  r.dynamic_shared_bytes = integer("dynamic_shared_bytes").value_or(0);
  r.const_bytes = integer("const_bytes").value_or(0);
  r.max_threads_per_block = static_cast<int>(integer("max_threads_per_block").value_or(0));
  r.block_threads = static_cast<int>(integer("block_threads").value_or(0));
  if (const auto a = integer("active_blocks_per_sm")) r.active_blocks_per_sm = static_cast<int>(*a);
  if (const auto it = j.find("occupancy"); it != j.end() && it->is_number()) r.occupancy = it->get<double>();
  return r;
}

}  // namespace cutune
