#include "kernel_source_scan.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cutune::detail {

namespace {

// The targets of the #include "..." lines of `text`. Angle-bracket includes are not
// followed: they are found only on -I paths (system headers, in practice).
std::vector<std::string> local_includes(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto skip_blanks = [&](std::size_t i) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      return i;
    };
    std::size_t i = skip_blanks(0);
    if (i >= line.size() || line[i] != '#') continue;
    i = skip_blanks(i + 1);
    if (line.substr(i, 7) != "include") continue;
    i = skip_blanks(i + 7);
    if (i >= line.size() || line[i] != '"') continue;
    std::size_t close = line.find('"', i + 1);
    if (close == std::string_view::npos) continue;
    out.emplace_back(line.substr(i + 1, close - i - 1));
  }
  return out;
}

}  // namespace

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), is_identifier_char);
}

void add_identifier_tokens(std::string_view text, TokenSet& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_identifier_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < text.size() && is_identifier_char(text[i])) ++i;
    out.emplace(text.substr(start, i - start));
  }
}

void add_source_tokens(const std::filesystem::path& file, std::string_view text,
                       std::set<std::filesystem::path>& seen, TokenSet& out,
                       std::vector<std::pair<std::string, std::string>>& headers) {
  std::error_code ec;
  std::filesystem::path id = std::filesystem::weakly_canonical(file, ec);
  if (ec) id = file.lexically_normal();
  if (!seen.insert(id).second) return;
  add_identifier_tokens(text, out);
  for (const auto& name : local_includes(text)) {
    std::filesystem::path header = file.parent_path() / name;
    std::ifstream in(header, std::ios::binary);
    if (!in) continue;
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string content = ss.str();
    if (std::none_of(headers.begin(), headers.end(), [&](const auto& h) { return h.first == name; }))
      headers.emplace_back(name, content);
    add_source_tokens(header, content, seen, out, headers);
  }
}

}  // namespace cutune::detail
