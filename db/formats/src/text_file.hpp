#pragma once
// Whole-file reads for the format readers; gzip-compressed files (.json.gz, recognised by
// their magic bytes, whatever their name) are inflated through zlib.
#include <filesystem>
#include <string>

namespace cutune::db::detail {

/// The file's bytes, inflated when they are gzip. Throws InputError naming the path when
/// the file cannot be read or its gzip stream is corrupt or truncated.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace cutune::db::detail
