#include "compile_log.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace cutune::jit::detail {
namespace {

// The names the configuration prefix defines (`#define NAME VALUE` and `constexpr int NAME
// = V;` lines before `#line`); none when the source has no `#line`, i.e. no prefix.
std::vector<std::string> prefix_names(const std::string& source) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start < source.size()) {
    std::size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    const std::string line = source.substr(start, end - start);
    if (line.rfind("#line ", 0) == 0) return names;
    for (const char* lead : {"#define ", "constexpr int "}) {
      if (line.rfind(lead, 0) != 0) continue;
      std::size_t b = std::string_view(lead).size(), e = b;
      while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_')) ++e;
      if (e > b) names.push_back(line.substr(b, e - b));
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

// The log's first error line, for the one-line summary.
std::string first_error_line(const std::string& log) {
  std::size_t pos = log.find(": error");
  if (pos == std::string::npos) pos = log.find("error");
  if (pos == std::string::npos) return {};
  const auto bol = log.rfind('\n', pos);
  std::string line = log.substr(bol == std::string::npos ? 0 : bol + 1);
  return line.substr(0, line.find('\n'));
}

std::vector<std::string> log_lines(const std::string& log) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    out.push_back(log.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// NVRTC only warns when the kernel redefines a macro the prefix defined ("incompatible
// redefinition of macro"), and the kernel then silently runs with its own value under the
// configuration's name: the measurement would belong to another configuration. An error.
std::string redefined_parameter(const std::string& source, const std::string& log) {
  const auto names = prefix_names(source);
  if (names.empty()) return {};
  for (const auto& line : log_lines(log)) {
    static constexpr std::string_view marker = "incompatible redefinition of macro \"";
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    const auto b = at + marker.size(), e = line.find('"', b);
    if (e == std::string::npos) continue;
    if (std::find(names.begin(), names.end(), line.substr(b, e - b)) != names.end()) return trim(line);
  }
  return {};
}

}  // namespace cutune::jit::detail
