// Fuzz target: the Kernel Tuner file readers: one input is read as a
// cache file (every generation, open or closed, NaN/Infinity) and as T4 results; each either
// reads or fails with InputError. What reads is mapped as `cutune import` maps it, and a
// cache's entries are written back with Kernel Tuner's line layout, which must read back to
// the same number of entries. A crash, undefined behaviour, another exception or a hang is a
// finding. See README.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cutune/formats/kt_cache.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/t4.hpp"
#include "cutune/model/errors.hpp"

namespace kt = cutune::db::kt;

namespace {
/// An entry's configuration as `cutune import` takes it without a kernel's space.
cutune::ResultConfig config_of(const kt::KtEntry& e) { return {e.key, cutune::parameter_values(e.params)}; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const kt::KtCache cache = kt::parse_cache(text, "fuzz.json");
    std::string again = kt::format_cache_header(cache);
    for (const auto& e : cache.entries) {
      (void)kt::measurement_of_entry(e, config_of(e), "2026-01-01T00:00:00.000Z");
      try {
        again += kt::format_cache_line(e);
      } catch (const std::invalid_argument&) {
        return 0;  // an extra field named like one of Kernel Tuner's: entry_to_json refuses it
      }
    }
    if (kt::parse_cache(again, "again.json").entries.size() != cache.entries.size()) {
      std::fprintf(stderr, "a written cache read back with another number of entries\n");
      std::abort();
    }
  } catch (const cutune::InputError&) {
  }
  try {
    const kt::T4Results t4 = kt::parse_t4(text, "fuzz_t4.json");
    for (const auto& e : t4.entries) (void)kt::entry_of_measurement(kt::measurement_of_entry(e, config_of(e), ""));
  } catch (const cutune::InputError&) {
  }
  return 0;
}
