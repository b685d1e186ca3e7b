#include "text_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "cutune/model/errors.hpp"

namespace cutune::db::detail {

namespace {

std::string inflate_gzip(const std::string& compressed, const std::filesystem::path& path) {
  z_stream zs{};
  // 15 + 32: a zlib or gzip header, detected; concatenated gzip members are read in turn.
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    throw InputError(fmt::format("{}: cannot start zlib", path.string()));
  std::string out;
  char buf[1 << 16];
  std::size_t consumed = 0;
  int rc = Z_OK;
  while (true) {
    const std::size_t left = compressed.size() - consumed;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + consumed));
    zs.avail_in = static_cast<uInt>(std::min<std::size_t>(left, std::numeric_limits<uInt>::max()));
    const uInt avail_before = zs.avail_in;
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    consumed += avail_before - zs.avail_in;
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (consumed >= compressed.size()) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;  // Z_BUF_ERROR: the input ran out inside a member
  }
  const char* msg = zs.msg;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw InputError(fmt::format("{}: corrupt or truncated gzip data ({})", path.string(),
                                 msg ? msg : "unexpected end of the stream"));
  return out;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(fmt::format("{}: cannot read", path.string()));
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b)
    return inflate_gzip(bytes, path);
  return bytes;
}

}  // namespace cutune::db::detail
