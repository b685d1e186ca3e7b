#include "cutune/jit/cubin_cache.hpp"

#include "cutune/jit/nvcc_compiler.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string_view>
#include <system_error>

namespace cutune::jit {
namespace fs = std::filesystem;
namespace {

// Two 64-bit hashes fed the same bytes. FNV-1a (as the runner's content_hash) only moves
// information upwards; the second multiplies and folds the high half back down per byte
// and ends in a murmur3 avalanche, so a collision of one says nothing about the other.
class KeyHasher {
 public:
  void bytes(std::string_view data) {
    for (unsigned char c : data) {
      fnv_ = (fnv_ ^ c) * 1099511628211ULL;
      mix_ = (mix_ ^ c) * 0x9E3779B97F4A7C15ULL;
      mix_ ^= mix_ >> 29;
    }
  }
  void u64(std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    bytes(std::string_view(b, 8));
  }
  // Length first, so field boundaries cannot move: ("ab","c") != ("a","bc").
  void field(std::string_view s) {
    u64(s.size());
    bytes(s);
  }
  std::string hex() const {
    std::uint64_t m = mix_;
    m ^= m >> 33;
    m *= 0xFF51AFD7ED558CCDULL;
    m ^= m >> 33;
    m *= 0xC4CEB9FE1A85EC53ULL;
    m ^= m >> 33;
    return fmt::format("{:016x}{:016x}", fnv_, m);
  }

 private:
  std::uint64_t fnv_ = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  std::uint64_t mix_ = 0x2545F4914F6CDD1DULL;    // any odd constant unrelated to the above
};

// Payload checksum: FNV-1a 64, enough to tell a flipped or zeroed block from a cubin.
std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 14695981039346656037ULL) {
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ULL;
  return h;
}

constexpr char kMagic[8] = {'C', 'U', 'T', 'C', 'U', 'B', 'I', 'N'};
// Bump when the layout changes: an old entry is then a corrupt one, a miss, and removed.
// 2: the lowered kernel names travel with the cubin (C++ kernels are found by them).
constexpr std::uint32_t kFormatVersion = 2;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// Reads little-endian fields from a buffer; any read past the end sets `short_read`.
struct Reader {
  std::string_view data;
  std::size_t pos = 0;
  bool short_read = false;

  std::uint64_t uint(int size) {
    if (data.size() - pos < static_cast<std::size_t>(size)) {
      short_read = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < size; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[pos + static_cast<std::size_t>(i)])) << (8 * i);
    pos += static_cast<std::size_t>(size);
    return v;
  }
  std::string_view bytes(std::uint64_t n) {
    if (data.size() - pos < n) {
      short_read = true;
      return {};
    }
    std::string_view s = data.substr(pos, static_cast<std::size_t>(n));
    pos += static_cast<std::size_t>(n);
    return s;
  }
};

// Keys are file names: only what compile_key produces (hex), never a path.
bool valid_key(const std::string& key) {
  if (key.size() < 3 || key.size() > 128) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Options cannot contain NUL (NVRTC takes C strings), so each one ends in one.
std::string join_options(const std::vector<std::string>& options) {
  std::string out;
  for (const auto& o : options) {
    out += o;
    out.push_back('\0');
  }
  return out;
}

std::vector<std::string> split_options(std::string_view joined) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < joined.size()) {
    std::size_t end = joined.find('\0', start);
    if (end == std::string_view::npos) end = joined.size();
    out.emplace_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string serialize(const std::string& key, const CompileResult& r) {
  std::string options = join_options(r.full_options);
  std::string lowered = join_options(r.lowered_names);
  std::string_view cubin(r.cubin.data(), r.cubin.size());
  std::uint64_t checksum =
      fnv1a(lowered, fnv1a(cubin, fnv1a(options, fnv1a(r.log, fnv1a(r.error, fnv1a(key))))));
  std::uint64_t ms_bits = 0;
  static_assert(sizeof(ms_bits) == sizeof(r.compile_ms));
  std::memcpy(&ms_bits, &r.compile_ms, sizeof ms_bits);

  std::string out(kMagic, sizeof kMagic);
  put_u32(out, kFormatVersion);
  put_u32(out, static_cast<std::uint32_t>(key.size()));
  out.push_back(r.ok ? '\1' : '\0');
  put_u64(out, ms_bits);
  put_u64(out, r.error.size());
  put_u64(out, r.log.size());
  put_u64(out, options.size());
  put_u64(out, cubin.size());
  put_u64(out, lowered.size());
  put_u64(out, checksum);
  out += key;
  out += r.error;
  out += r.log;
  out += options;
  out.append(cubin.data(), cubin.size());
  out += lowered;
  return out;
}

std::optional<CompileResult> deserialize(const std::string& key, std::string_view data) {
  Reader in{data};
  std::string_view magic = in.bytes(sizeof kMagic);
  if (in.short_read || magic != std::string_view(kMagic, sizeof kMagic)) return std::nullopt;
  if (in.uint(4) != kFormatVersion) return std::nullopt;
  std::uint64_t key_size = in.uint(4);
  std::uint64_t ok = in.uint(1);
  std::uint64_t ms_bits = in.uint(8);
  std::uint64_t error_size = in.uint(8), log_size = in.uint(8), options_size = in.uint(8),
                cubin_size = in.uint(8), lowered_size = in.uint(8), checksum = in.uint(8);
  std::string_view stored_key = in.bytes(key_size);
  std::string_view error = in.bytes(error_size), log = in.bytes(log_size),
                   options = in.bytes(options_size), cubin = in.bytes(cubin_size),
                   lowered = in.bytes(lowered_size);
  // Exactly the declared payloads, no more: trailing bytes mean a different writer.
  if (in.short_read || in.pos != data.size() || ok > 1 || stored_key != key) return std::nullopt;
  if (fnv1a(lowered, fnv1a(cubin, fnv1a(options, fnv1a(log, fnv1a(error, fnv1a(stored_key)))))) != checksum)
    return std::nullopt;

  CompileResult r;
  r.ok = ok == 1;
  r.cubin.assign(cubin.begin(), cubin.end());
  r.error = std::string(error);
  r.log = std::string(log);
  r.full_options = split_options(options);
  r.lowered_names = split_options(lowered);
  std::memcpy(&r.compile_ms, &ms_bits, sizeof ms_bits);
  r.from_cache = true;
  return r;
}

// A name no other writer (thread, process, or host sharing the folder) picks: pid, a
// per-process counter and random bits, so O_EXCL never has to be retried in practice.
fs::path temporary_name(const fs::path& final_path) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fs::path(final_path.string() +
                  fmt::format(".tmp.{}.{}.{:016x}", ::getpid(), counter++, rng()));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::string compile_key(const CompileRequest& request, int nvrtc_version) {
  KeyHasher h;
  h.field("cutune compile key v1");  // a new key scheme must not meet old entries
  h.field(request.source);
  h.field(request.source_name);
  h.u64(request.kernel_names.size());
  for (const auto& k : request.kernel_names) h.field(k);
  h.u64(request.options.size());
  for (const auto& o : request.options) h.field(o);
  h.field(request.arch);
  h.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(nvrtc_version)));
  h.u64(request.headers.size());
  for (const auto& [name, content] : request.headers) {
    h.field(name);
    h.field(content);
  }
  // NVRTC's keys stay as they were before nvcc (caches keep their entries); another
  // compiler's name and, for nvcc, its release and path, follow.
  if (request.compiler != Compiler::Nvrtc) {
    h.field(compiler_name(request.compiler));
    if (request.compiler == Compiler::Nvcc) h.field(nvcc_identity());
  }
  return h.hex();
}

CubinCache::CubinCache(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);  // failure shows up as misses; see put
}

fs::path CubinCache::default_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string d = env("CUTUNE_CACHE_DIR"); !d.empty()) return d;
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (fs::path x = env("XDG_CACHE_HOME"); !x.empty() && x.is_absolute()) return x / "cutune" / "cubins";
  if (std::string home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "cutune" / "cubins";
  std::error_code ec;
  return fs::temp_directory_path(ec) / "cutune" / "cubins";
}

fs::path CubinCache::entry_path(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".cubin");
}

std::optional<CompileResult> CubinCache::get(const std::string& key) const {
  if (!valid_key(key)) return std::nullopt;
  const fs::path path = entry_path(key);
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    in.seekg(0, std::ios::end);
    std::streamoff size = in.tellg();
    if (size < 0) return std::nullopt;
    in.seekg(0, std::ios::beg);
    data.resize(static_cast<std::size_t>(size));
    in.read(data.data(), size);
    if (in.gcount() != size) data.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  }
  auto result = deserialize(key, data);
  if (!result) {
    // Renames are atomic, so this is a crash of the machine, a foreign file or an older
    // format, never a write in progress: drop it and let the caller compile afresh.
    std::error_code ec;
    fs::remove(path, ec);
  }
  return result;
}

void CubinCache::put(const std::string& key, const CompileResult& result) const {
  if (!valid_key(key)) return;
  const fs::path path = entry_path(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;
  const std::string data = serialize(key, result);
  const fs::path tmp = temporary_name(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = write_all(fd, data);
  // No fsync: after a power loss the entry may be short or zeroed, which get() detects
  // (length, checksum) and treats as a miss; syncing every compile would cost more.
  ok = ::close(fd) == 0 && ok;
  if (ok) fs::rename(tmp, path, ec);  // atomic replace; a concurrent writer of the key stored the same cubin
  if (!ok || ec) fs::remove(tmp, ec);
}

}  // namespace cutune::jit
