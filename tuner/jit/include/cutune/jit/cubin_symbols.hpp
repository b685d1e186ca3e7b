#pragma once
// The kernels a cubin holds, read from its ELF symbol table, and the one a C++ name refers
// to: nvcc has no name expressions, so a kernel compiled by it is found by its symbol.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cutune::jit {

struct EntrySymbol {
  std::string symbol;     ///< as the cubin has it: "_ZN2ns1fIfLi4EEEvPT_", or "g" for extern "C"
  std::string demangled;  ///< "void ns::f<float, 4>(float*)"; the symbol itself when not mangled
};

/// The cubin's __global__ functions: FUNC symbols marked as CUDA entries (STO_CUDA_ENTRY), in
/// symbol-table order. Empty for bytes that are not a 64-bit little-endian ELF file.
std::vector<EntrySymbol> cubin_entry_symbols(std::string_view cubin);

/// The entry `name` (a C++ name expression: "k", "ns::k", "f<float, 4>") refers to: the one
/// whose demangled name, without return type and parameters, equals it up to spaces and
/// integer-literal suffixes (4u, 4l); else, for a template name, the only instantiation of that
/// template (a typedef such as `half` for `__half` spells it differently); nullopt otherwise.
std::optional<std::string> find_entry_symbol(const std::vector<EntrySymbol>& entries, std::string_view name);

}  // namespace cutune::jit
