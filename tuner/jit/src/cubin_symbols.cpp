#include "cutune/jit/cubin_symbols.hpp"

#include <cxxabi.h>
#include <elf.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace cutune::jit {
namespace {

// A CUDA entry function's symbol carries this bit in st_other (readelf shows "[<other>: 10]"
// on the kernels of an nvcc cubin and on nothing else).
constexpr unsigned char kStoCudaEntry = 0x10;

template <class T>
bool read_at(std::string_view data, std::uint64_t offset, T& out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, data.data() + offset, sizeof(T));
  return true;
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Spaces out, and integer literals without their suffix: the demangler writes an unsigned
// template argument as "4u" where the kernel name says "4".
std::string normalized(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) && (out.empty() || !word_char(out.back()))) {
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) out.push_back(text[i++]);
      std::size_t e = i;
      while (e < text.size() && (text[e] == 'u' || text[e] == 'U' || text[e] == 'l' || text[e] == 'L')) ++e;
      if (e == text.size() || !word_char(text[e])) i = e;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  if (!out.empty() && out.front() == '&') out.erase(0, 1);
  return out;
}

// "void ns::f<float, 4>(float*)" -> "ns::f<float, 4>": kernels return void, and the
// parameter list is the last balanced (...) group.
std::string function_name(const std::string& demangled) {
  std::string s = demangled;
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      else if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  return s;
}

std::string without_template_arguments(const std::string& name) {
  const auto lt = name.find('<');
  return lt == std::string::npos ? name : name.substr(0, lt);
}

}  // namespace

std::vector<EntrySymbol> cubin_entry_symbols(std::string_view cubin) {
  std::vector<EntrySymbol> out;
  Elf64_Ehdr eh{};
  if (!read_at(cubin, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
    return out;
  auto section = [&](std::uint64_t i, Elf64_Shdr& sh) {
    return i < eh.e_shnum && read_at(cubin, eh.e_shoff + i * sizeof(Elf64_Shdr), sh);
  };
  for (std::uint64_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr symtab{}, strtab{};
    if (!section(i, symtab) || symtab.sh_type != SHT_SYMTAB || !section(symtab.sh_link, strtab)) continue;
    if (symtab.sh_entsize != sizeof(Elf64_Sym) || strtab.sh_offset > cubin.size()) continue;
    const std::string_view names = cubin.substr(strtab.sh_offset, std::min<std::uint64_t>(strtab.sh_size, cubin.size() - strtab.sh_offset));
    for (std::uint64_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      if (!read_at(cubin, symtab.sh_offset + k * sizeof(Elf64_Sym), sym)) break;
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & kStoCudaEntry) || sym.st_name >= names.size())
        continue;
      const auto end = names.find('\0', sym.st_name);
      std::string symbol(names.substr(sym.st_name, end == std::string_view::npos ? std::string_view::npos : end - sym.st_name));
      out.push_back({symbol, demangle(symbol)});
    }
  }
  return out;
}

std::optional<std::string> find_entry_symbol(const std::vector<EntrySymbol>& entries, std::string_view name) {
  const std::string wanted = normalized(name);
  for (const auto& e : entries)
    if (normalized(function_name(e.demangled)) == wanted) return e.symbol;
  if (wanted.find('<') == std::string::npos) return std::nullopt;
  const std::string base = without_template_arguments(wanted);
  std::optional<std::string> only;
  for (const auto& e : entries) {
    const std::string n = normalized(function_name(e.demangled));
    if (n.find('<') == std::string::npos || without_template_arguments(n) != base) continue;
    if (only) return std::nullopt;  // two instantiations: the name must say which
    only = e.symbol;
  }
  return only;
}

}  // namespace cutune::jit
