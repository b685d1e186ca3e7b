#pragma once
// Which names the kernel code mentions: identifiers of the kernel file, of the local headers
// it includes and of the compiler options. A tuning parameter the code never names only
// shapes the launch and gets no #define.
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cutune::detail {

using TokenSet = std::set<std::string, std::less<>>;

/// [A-Za-z0-9_]
bool is_identifier_char(char c);
/// A C identifier (ASCII).
bool is_identifier(std::string_view s);
/// s without leading and trailing blanks and tabs.
std::string trimmed(std::string_view s);

/// Every maximal run of [A-Za-z0-9_] in text: a name is used when it is one of them, so
/// `tile` matches "tile * 2" but not "tiles" or "max_tile".
void add_identifier_tokens(std::string_view text, TokenSet& out);

/// Tokens of `text` (the contents of `file`) and, recursively, of the local headers it
/// includes with #include "...", each resolved against the including file's folder and
/// read once; their (name as written, contents) are added to `headers`. A missing header is
/// skipped: the compile reports it better than the loader could.
void add_source_tokens(const std::filesystem::path& file, std::string_view text,
                       std::set<std::filesystem::path>& seen, TokenSet& out,
                       std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace cutune::detail
