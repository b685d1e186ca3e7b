// Tests of the persistent compile cache: keys over every input of a compile,
// round trips of results and failures, corrupt entries as misses, and a cache that cannot
// write never failing the caller. CPU only: NVRTC needs no GPU.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cutune/jit/cubin_cache.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using cutune::jit::compile_key;
using cutune::jit::CompileRequest;
using cutune::jit::CompileResult;
using cutune::jit::CubinCache;
using cutune::testing::TempPath;

namespace {

CompileRequest base_request() {
  CompileRequest r;
  r.source = "#define block_size_x 128\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n";
  r.source_name = "k.cu";
  r.kernel_names = {"k"};
  r.options = {"-std=c++17", "-DCUTUNE_INT32=1"};
  r.arch = "sm_90";
  return r;
}

CompileResult fake_ok() {
  CompileResult r;
  r.ok = true;
  r.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff', '\x01', '\0'};  // NULs and high bytes on purpose
  r.log = "warning: something harmless";
  r.compile_ms = 123.25;
  r.full_options = {"-std=c++17", "", "--gpu-architecture=sm_90"};
  return r;
}

CompileResult fake_failure() {
  CompileResult r;
  r.ok = false;
  r.error = "NVRTC: NVRTC_ERROR_COMPILATION: k.cu(3): error: identifier \"oops\" is undefined";
  r.log = "k.cu(3): error: identifier \"oops\" is undefined\n\n1 error detected";
  r.compile_ms = 45.5;
  r.full_options = {"-std=c++17", "--gpu-architecture=sm_90"};
  return r;
}

void check_same(const CompileResult& got, const CompileResult& want) {
  CHECK(got.ok == want.ok);
  CHECK(got.cubin == want.cubin);
  CHECK(got.log == want.log);
  CHECK(got.error == want.error);
  CHECK(got.compile_ms == want.compile_ms);
  CHECK(got.full_options == want.full_options);
  CHECK(got.from_cache);
}

std::string key_of(const CompileRequest& r, int version = 12080) { return compile_key(r, version); }

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

}  // namespace

TEST_CASE("cubin cache: the key is 32 hex chars, stable, and changes with every input", "[jit][cache]") {
  const CompileRequest base = base_request();
  const std::string k = key_of(base);
  REQUIRE(k.size() == 32);
  CHECK(k.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(key_of(base_request()) == k);

  std::vector<std::pair<const char*, std::string>> variants;
  auto add = [&](const char* what, auto change, int version = 12080) {
    CompileRequest r = base_request();
    change(r);
    variants.emplace_back(what, key_of(r, version));
  };
  add("source", [](CompileRequest& r) { r.source.replace(r.source.find("128"), 3, "256"); });
  add("source_name", [](CompileRequest& r) { r.source_name = "k2.cu"; });
  add("a kernel name", [](CompileRequest& r) { r.kernel_names = {"k2"}; });
  add("a second kernel name", [](CompileRequest& r) { r.kernel_names.push_back("k"); });
  add("an option", [](CompileRequest& r) { r.options[1] = "-DCUTUNE_INT32=0"; });
  add("option order", [](CompileRequest& r) { std::swap(r.options[0], r.options[1]); });
  add("an added empty option", [](CompileRequest& r) { r.options.push_back(""); });
  add("arch", [](CompileRequest& r) { r.arch = "sm_80"; });
  add("NVRTC version", [](CompileRequest&) {}, 12090);
  add("a local header", [](CompileRequest& r) { r.headers = {{"x.cuh", "#define X 1"}}; });
  add("a local header's contents", [](CompileRequest& r) { r.headers = {{"x.cuh", "#define X 2"}}; });
  // Field boundaries cannot move: ("ab", "c") and ("a", "bc") differ, everywhere.
  add("options split differently", [](CompileRequest& r) { r.options = {"-std=c++1", "7-DCUTUNE_INT32=1"}; });
  add("options joined", [](CompileRequest& r) { r.options = {"-std=c++17-DCUTUNE_INT32=1"}; });
  add("source/name boundary", [](CompileRequest& r) {
    r.source += "k";
    r.source_name = ".cu";
  });

  for (std::size_t i = 0; i < variants.size(); ++i) {
    INFO(variants[i].first);
    CHECK(variants[i].second != k);
    CHECK(variants[i].second.size() == 32);
    for (std::size_t j = 0; j < i; ++j) {
      INFO("vs " << variants[j].first);
      CHECK(variants[i].second != variants[j].second);
    }
  }
}

TEST_CASE("cubin cache: put then get returns the result, failures included", "[jit][cache]") {
  TempPath tmp("cutune_test_cubin_cache");
  CubinCache cache(tmp.path() / "nested" / "cubins");
  CHECK(fs::is_directory(cache.dir()));
  const std::string k_ok = key_of(base_request());
  CompileRequest failing = base_request();
  failing.source += "oops;\n";
  const std::string k_fail = key_of(failing);

  CHECK_FALSE(cache.get(k_ok).has_value());  // a miss on an absent key

  cache.put(k_ok, fake_ok());
  cache.put(k_fail, fake_failure());
  CHECK(cache.entry_path(k_ok) == cache.dir() / k_ok.substr(0, 2) / (k_ok + ".cubin"));
  CHECK(fs::is_regular_file(cache.entry_path(k_ok)));

  auto got = cache.get(k_ok);
  REQUIRE(got.has_value());
  check_same(*got, fake_ok());
  auto failed = cache.get(k_fail);
  REQUIRE(failed.has_value());
  check_same(*failed, fake_failure());
  CHECK(failed->cubin.empty());

  // Overwriting a key replaces the entry and leaves no temporary file behind.
  CompileResult again = fake_ok();
  again.compile_ms = 7.0;
  cache.put(k_ok, again);
  CHECK(cache.get(k_ok)->compile_ms == 7.0);
  CHECK(count_files(cache.dir()) == 2);

  // Keys are file names: anything but compile_key's hex is refused, not a path.
  cache.put("../escape", fake_ok());
  CHECK_FALSE(cache.get("../escape").has_value());
  CHECK_FALSE(fs::exists(cache.dir().parent_path() / "escape.cubin"));
}

TEST_CASE("cubin cache: truncated, garbage and misplaced entries are misses and are removed",
          "[jit][cache]") {
  TempPath tmp("cutune_test_cubin_cache");
  CubinCache cache(tmp.path());
  const std::string k = key_of(base_request());
  const fs::path entry = cache.entry_path(k);

  auto overwrite = [&](const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  };
  auto stored_bytes = [&]() {
    cache.put(k, fake_ok());
    std::ifstream in(entry, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string good = stored_bytes();
  REQUIRE(good.size() > 60);

  SECTION("truncated, at several lengths") {
    for (std::size_t len : {std::size_t{0}, std::size_t{5}, std::size_t{30}, good.size() - 1}) {
      INFO("length " << len);
      overwrite(entry, good.substr(0, len));
      CHECK_FALSE(cache.get(k).has_value());
      CHECK_FALSE(fs::exists(entry));
    }
  }
  SECTION("garbage") {
    overwrite(entry, std::string(4096, 'x'));
    CHECK_FALSE(cache.get(k).has_value());
    CHECK_FALSE(fs::exists(entry));
  }
  SECTION("a flipped byte in the cubin") {
    std::string bad = good;
    bad[bad.size() - 3] ^= 0x20;
    overwrite(entry, bad);
    CHECK_FALSE(cache.get(k).has_value());
    CHECK_FALSE(fs::exists(entry));
  }
  SECTION("trailing bytes") {
    overwrite(entry, good + "x");
    CHECK_FALSE(cache.get(k).has_value());
    CHECK_FALSE(fs::exists(entry));
  }
  SECTION("another key's entry under this key's name") {
    CompileRequest other = base_request();
    other.arch = "sm_80";
    const std::string k2 = key_of(other);
    fs::create_directories(cache.entry_path(k2).parent_path());
    overwrite(cache.entry_path(k2), good);
    CHECK_FALSE(cache.get(k2).has_value());
    CHECK_FALSE(fs::exists(cache.entry_path(k2)));
    CHECK(cache.get(k).has_value());  // the real one is untouched
  }
}

TEST_CASE("cubin cache: a real NVRTC cubin comes back byte-identical", "[jit][cache]") {
  TempPath tmp("cutune_test_cubin_cache");
  CubinCache cache(tmp.path());
  const CompileRequest req = base_request();
  const CompileResult compiled = cutune::jit::compile(req);
  INFO(compiled.log);
  REQUIRE(compiled.ok);
  REQUIRE_FALSE(compiled.cubin.empty());
  CHECK_FALSE(compiled.from_cache);

  const std::string k = compile_key(req, cutune::jit::nvrtc_version());
  cache.put(k, compiled);
  auto got = cache.get(k);
  REQUIRE(got.has_value());
  CHECK(got->cubin == compiled.cubin);
  CHECK(got->full_options == compiled.full_options);
  CHECK(got->log == compiled.log);
  CHECK(got->compile_ms == compiled.compile_ms);
  CHECK(got->from_cache);
  // A second cache object on the same folder (a second session) sees it too.
  CHECK(CubinCache(tmp.path()).get(k).has_value());
}

TEST_CASE("cubin cache: concurrent writers of one key leave one whole entry", "[jit][cache]") {
  TempPath tmp("cutune_test_cubin_cache");
  CubinCache cache(tmp.path());
  const std::string k = key_of(base_request());
  CompileResult big = fake_ok();
  big.cubin.assign(1 << 20, '\x5a');
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 10; ++i) cache.put(k, big);
    });
  for (auto& w : writers) w.join();
  auto got = cache.get(k);
  REQUIRE(got.has_value());
  CHECK(got->cubin == big.cubin);
  CHECK(count_files(cache.dir()) == 1);  // no temporary files left
}

TEST_CASE("cubin cache: a location that cannot be written never throws", "[jit][cache]") {
  TempPath tmp("cutune_test_cubin_cache");
  fs::create_directories(tmp.path());
  const std::string k = key_of(base_request());

  SECTION("a folder under a regular file cannot be created") {
    std::ofstream(tmp.path() / "file") << "not a folder";
    std::optional<CubinCache> cache;
    REQUIRE_NOTHROW(cache.emplace(tmp.path() / "file" / "cubins"));
    CHECK_NOTHROW(cache->put(k, fake_ok()));
    CHECK_FALSE(cache->get(k).has_value());
  }
  SECTION("a read-only folder") {
    const fs::path ro = tmp.path() / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    CubinCache cache(ro);
    CHECK_NOTHROW(cache.put(k, fake_ok()));
    // root ignores the mode bits, so the put may succeed; where it did not, a miss.
    if (::geteuid() != 0) CHECK_FALSE(cache.get(k).has_value());
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_CASE("cubin cache: default_dir follows CUTUNE_CACHE_DIR, then XDG_CACHE_HOME, then HOME",
          "[jit][cache]") {
  // Saves and restores the three variables, so other tests see the real environment.
  struct Saved {
    const char* name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  for (const char* name : {"CUTUNE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* v = std::getenv(name);
    saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
  }

  ::setenv("CUTUNE_CACHE_DIR", "/somewhere/cubins", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/someone", 1);
  CHECK(CubinCache::default_dir() == fs::path("/somewhere/cubins"));
  ::unsetenv("CUTUNE_CACHE_DIR");
  CHECK(CubinCache::default_dir() == fs::path("/xdg/cutune/cubins"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the XDG spec says
  CHECK(CubinCache::default_dir() == fs::path("/home/someone/.cache/cutune/cubins"));
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(CubinCache::default_dir() == fs::path("/home/someone/.cache/cutune/cubins"));

  for (const auto& s : saved) {
    if (s.value)
      ::setenv(s.name, s.value->c_str(), 1);
    else
      ::unsetenv(s.name);
  }
}
