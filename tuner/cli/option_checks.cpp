#include "option_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>

namespace cutune::cli {

CLI::Validator whole_number(std::uint64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
        const std::string wanted =
            min == 0 ? "a whole number (0 or more)" : fmt::format("a whole number, at least {}", min);
        if (!digits) return fmt::format("{} is not {}", text, wanted);
        errno = 0;
        const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return fmt::format("{} is more than {}", text, std::numeric_limits<std::uint64_t>::max());
        if (v < min) return fmt::format("{} is not {}", text, wanted);
        return {};
      },
      min == 0 ? "UINT" : fmt::format("UINT>={}", min));
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(v > 0) ||
            v == std::numeric_limits<double>::infinity())
          return fmt::format("{} is not a number of seconds above 0", text);
        return {};
      },
      "SECONDS>0");
}

CLI::Validator directory_exists_for_output() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        namespace fs = std::filesystem;
        const fs::path dir = fs::path(text).parent_path();
        std::error_code ec;
        if (fs::is_directory(text, ec)) return fmt::format("{} is a directory: name a file", text);
        if (dir.empty() || fs::is_directory(dir, ec)) return {};
        if (fs::exists(dir, ec)) return fmt::format("{}: {} is not a directory", text, dir.string());
        return fmt::format("{}: the directory {} does not exist (create it first)", text, dir.string());
      },
      "");
}

}  // namespace cutune::cli
