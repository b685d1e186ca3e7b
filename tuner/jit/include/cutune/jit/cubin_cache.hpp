#pragma once
// A persistent cache of compile results (NVRTC and nvcc) on disk: cubins keyed by a hash of every
// input that changes them, so a second session of the same space compiles nothing.
#include <filesystem>
#include <optional>
#include <string>

#include "cutune/jit/nvrtc_compiler.hpp"

namespace cutune::jit {

/// 32 hex chars: two independent 64-bit hashes over every input that changes the cubin:
/// source, source_name, kernel_names, options (in order), arch, and the compiler: NVRTC's
/// version, or for nvcc its release and path (nvcc_identity(); nvrtc_version is then unused).
/// Fields are length-prefixed, so ("ab", "c") and ("a", "bc") give different keys.
std::string compile_key(const CompileRequest& request, int nvrtc_version);

/// Entries live under dir/<first 2 hex chars>/<key>.cubin: a binary header (magic, format
/// version, key, ok, compile_ms, payload lengths, payload checksum), then the payloads
/// (error, log, options, cubin, lowered kernel names).
/// Safe to share between threads and processes: nothing mutable is held in memory.
class CubinCache {
 public:
  /// Creates dir (and parents); a failure is not an error here (see put).
  explicit CubinCache(std::filesystem::path dir);

  /// $CUTUNE_CACHE_DIR, else $XDG_CACHE_HOME/cutune/cubins, else
  /// $HOME/.cache/cutune/cubins, else <temp dir>/cutune/cubins.
  static std::filesystem::path default_dir();

  /// A stored result: successful compiles and compile failures (ok=false, error, log)
  /// alike, with the original compile_ms and from_cache=true. nullopt on a miss; a
  /// truncated or corrupt entry (wrong magic, version, key or checksum, short read) is a
  /// miss and is removed.
  std::optional<CompileResult> get(const std::string& key) const;

  /// Atomic: written to a unique temporary file in the same directory, then renamed, so
  /// concurrent processes writing the same key and a crash mid-write never leave a torn
  /// entry. I/O failures (disk full, read-only dir) are swallowed: the cache is an
  /// optimisation, never a reason for a tuning session to fail.
  void put(const std::string& key, const CompileResult& result) const;

  const std::filesystem::path& dir() const { return dir_; }
  /// Where `key`'s entry is (or would be) stored.
  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace cutune::jit
