// Kernel Tuner's formats: cache files of every generation (read), Kernel Tuner's own line
// layout (written, byte for byte, resumable after a crash), T4 results 1.0.0 and 1.1.0, KTT's
// results (read), and the Python text forms they depend on (float repr, str(), json.dumps).
//
// Some checks call python3 (the reference for json.dumps layout and for Kernel Tuner's
// cache repair) and python3's jsonschema (schema validation); without them those checks
// WARN that they were skipped, visibly, and the rest still runs.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cutune/formats/kt_cache.hpp"
#include "cutune/formats/kt_interop.hpp"
#include "cutune/formats/ktt.hpp"
#include "cutune/formats/python_json.hpp"
#include "cutune/formats/python_repr.hpp"
#include "cutune/formats/t4.hpp"
#include "cutune/model/errors.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cutune::InputError;
using cutune::Status;
using nlohmann::ordered_json;
using namespace cutune::db;
using namespace cutune::db::kt;

namespace {

using cutune::testing::material;
fs::path kt_dir() { return material("formats/kernel_tuner"); }
fs::path data_dir() { return cutune::testing::test_data_dir() / "kt_formats"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// The message of the InputError `f` throws, or a marker when it throws none.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

/// Checks that an InputError message is one line naming the file and the field.
void check_one_line(const std::string& msg, const std::string& file, const std::string& field) {
  INFO(msg);
  CHECK(msg.find('\n') == std::string::npos);
  CHECK_THAT(msg, Contains(file));
  CHECK_THAT(msg, Contains(field));
}

struct Py {
  int status = -1;
  std::string out;
};

/// Runs `python3 SCRIPT ARGS...` (stdout and stderr together).
Py run_python(const std::string& script, const std::vector<std::string>& args = {}) {
  cutune::testing::TempPath script_path("cutune-test-kt-py");
  spit(script_path.path(), script);
  std::string cmd = "python3 '" + script_path.path().string() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  Py r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool python_has(const std::string& module) {
  static std::map<std::string, bool> known;
  if (auto it = known.find(module); it != known.end()) return it->second;
  const bool ok = run_python("import " + module + "\n").status == 0;
  if (!ok) {
    std::cerr << "WARNING: python3 with '" << module
              << "' is not available: the checks that need it are SKIPPED\n";
  }
  return known[module] = ok;
}

KtCacheHeader test_header() {
  KtCacheHeader h;
  h.device_name = "NVIDIA H100 80GB HBM3";
  h.kernel_name = "matmul";
  h.problem_size = ordered_json::array({4096, 2});
  h.tune_params_keys = {"block_size_x", "use_shmem", "alg", "factor"};
  h.tune_params = ordered_json::object();
  h.tune_params["block_size_x"] = ordered_json::array({64, 128, 256});
  h.tune_params["use_shmem"] = ordered_json::array({true, false});
  h.tune_params["alg"] = ordered_json::array({"a", "b\u00e9"});
  h.tune_params["factor"] = ordered_json::array({1.0, 2.45, 1e-05});
  h.objective = ordered_json::array({"time"});
  return h;
}

/// Entry i of a deterministic sequence covering every status and value type.
KtEntry test_entry(int i) {
  const auto h = test_header();
  KtEntry e;
  e.params["block_size_x"] = h.tune_params["block_size_x"][static_cast<std::size_t>(i % 3)];
  e.params["use_shmem"] = h.tune_params["use_shmem"][static_cast<std::size_t>((i / 3) % 2)];
  e.params["alg"] = h.tune_params["alg"][static_cast<std::size_t>((i / 6) % 2)];
  e.params["factor"] = h.tune_params["factor"][static_cast<std::size_t>((i / 12) % 3)];
  e.key = config_key(e.params, h.tune_params_keys);
  static const Status kStatuses[] = {Status::Ok,          Status::Compile, Status::Ok,
                                     Status::Runtime,     Status::Ok,      Status::Constraints,
                                     Status::Correctness, Status::Ok,      Status::Timeout};
  e.status = kStatuses[i % 9];
  if (e.status == Status::Ok) {
    e.times_ms = {0.1 * (i + 1), 0.25 + i, 1.0 / 3.0, 2.0};
    e.time_ms = kt_mean(e.times_ms);
  } else {
    e.error = kt_error_name(e.status);
  }
  e.compile_time_ms = 100.5 + i;
  e.verification_time_ms = i % 2 ? 0.0 : 1.25;
  e.benchmark_time_ms = e.status == Status::Ok ? 3.5 : 0.0;
  e.strategy_time_ms = 0.0;
  e.framework_time_ms = 1.0 / (i + 3);
  e.timestamp = "2026-11-22 10:00:0" + std::to_string(i % 10) + ".123456+00:00";
  e.extra["cutune_median"] = 0.25 + i;
  e.extra["cutune_ci_low"] = i % 4 == 0 ? std::numeric_limits<double>::quiet_NaN() : 0.2;
  e.extra["cutune_note"] = "caf\u00e9 \"quoted\"";
  e.extra["cutune_stats"] = {{"n", i}, {"ok", true}};
  return e;
}

std::vector<std::size_t> find_all(const std::string& hay, const std::string& needle) {
  std::vector<std::size_t> out;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
    out.push_back(p);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Python text forms

TEST_CASE("python_float_repr matches Python's repr(float)", "[kt_formats]") {
  // Computed with: python3 -c 'print(repr(x))' (Python 3.11.7).
  struct Case {
    double x;
    const char* repr;
  };
  const Case cases[] = {
      {0x0.0p+0, "0.0"},
      {-0x0.0p+0, "-0.0"},
      {0x1.0000000000000p+0, "1.0"},
      {-0x1.0000000000000p+0, "-1.0"},
      {0x1.399999999999ap+1, "2.45"},
      {0x1.999999999999ap-4, "0.1"},
      {0x1.3333333333334p-2, "0.30000000000000004"},
      {0x1.5555555555555p-2, "0.3333333333333333"},
      {0x1.5555555555555p-1, "0.6666666666666666"},
      {0x1.4f8b588e368f1p-17, "1e-05"},
      {0x1.f75104d551d6ap-17, "1.5000000000000002e-05"},
      {0x1.a36e2eb1c432dp-14, "0.0001"},
      {0x1.02e4b6ce5dc68p-13, "0.00012345"},
      {0x1.a36e2eb1c432cp-14, "9.999999999999999e-05"},
      {0x1.1c37937e08000p+53, "1e+16"},
      {0x1.c6bf526340000p+49, "1000000000000000.0"},
      {0x1.1c37937e07fffp+53, "9999999999999998.0"},
      {0x1.18b54f22aeb03p+50, "1234567890123456.8"},
      {0x1.5ee2a2eb5a5c4p+53, "1.2345678901234568e+16"},
      {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
      {0x1.1eb2d66005835p+997, "1.5e+300"},
      {0x0.0000000000001p-1022, "5e-324"},
      {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
      {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
      {0x1.9000000000000p+6, "100.0"},
      {0x1.0f0cf064dd592p+73, "1e+22"},
      {0x1.b1ae4d6e2ef50p+69, "1e+21"},
      {0x1.0000000000000p-1, "0.5"},
      {0x1.f00abed000000p+1, "3.8753279224038124"},
      {-0x1.0c6f7a0b5ed8dp-22, "-2.5e-07"},
      {0x1.81cd6c8b43958p+13, "12345.678"},
      {0x1.b8f45df300000p+8, "440.9545585513115"},
      {0x1.4db595db6db6ep-5, "0.04073600071881499"},
      {0x1.249ad2594c37dp+332, "1e+100"},
      {0x1.ec00000000000p+6, "123.0"},
      {0x1.ad7f29abcaf48p-24, "1e-07"},
      {0x1.6ce789e774eecp-15, "4.35e-05"},
      {0x1.0000000000000p+16, "65536.0"},
      {0x1.0000000000000p+53, "9007199254740992.0"},
      {0x1.0000000000001p+53, "9007199254740994.0"},
      {0x1.0000000000001p+0, "1.0000000000000002"},
      {-0x1.56e1fc2f8f359p-997, "-1e-300"},
      {0x1.80d43de9cc603p-31, "7e-10"},
      {0x1.0000000000000p-20, "9.5367431640625e-07"},
      {0x1.38a388a43c000p+53, "1.1e+16"},
      {0x1.0624dd2f1a9fcp-10, "0.001"},
      {0x1.0624dd2f1a9fdp-10, "0.0010000000000000002"},
      {0x1.a36e2eb1c432dp-15, "5e-05"},
      {-0x1.e240c00000000p+16, "-123456.75"},
      {0x1.1c37937e07fffp+53, "9999999999999998.0"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.repr);
    CHECK(python_float_repr(c.x) == c.repr);
  }
}

TEST_CASE("python_str and python_repr match Python's str() and repr()", "[kt_formats]") {
  // Computed with python3: str(json.loads(text)), repr(json.loads(text)).
  struct Case {
    const char* json;
    const char* str;
    const char* repr;
  };
  const Case cases[] = {
      {"true", "True", "True"},
      {"false", "False", "False"},
      {"null", "None", "None"},
      {"128", "128", "128"},
      {"-5", "-5", "-5"},
      {"2.45", "2.45", "2.45"},
      {"1.0", "1.0", "1.0"},
      {"1e+16", "1e+16", "1e+16"},
      {"\"alg_2\"", "alg_2", "'alg_2'"},
      {"[1, \"a\", true, null, 2.5]", "[1, 'a', True, None, 2.5]", "[1, 'a', True, None, 2.5]"},
      {"{\"a\": 1.0, \"b\": [false]}", "{'a': 1.0, 'b': [False]}", "{'a': 1.0, 'b': [False]}"},
      {"\"it's\"", "it's", "\"it's\""},
      {"\"a\\\"b\"", "a\"b", "'a\"b'"},
      {"\"a'b\\\"c\"", "a'b\"c", "'a\\'b\"c'"},
      {"\"tab\\there\"", "tab\there", "'tab\\there'"},
      {"[]", "[]", "[]"},
      {"{}", "{}", "{}"},
      {"18446744073709551615", "18446744073709551615", "18446744073709551615"},
      {"-9223372036854775808", "-9223372036854775808", "-9223372036854775808"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.json);
    const ordered_json v = parse_python_json(c.json, "case");
    CHECK(python_str(v) == c.str);
    CHECK(python_repr(v) == c.repr);
  }
}

TEST_CASE("config_key builds Kernel Tuner's keys", "[kt_formats]") {
  ordered_json params = {{"block_size_x", 128}, {"test_string", "alg_2"}, {"test_single", 15},
                         {"test_bool", true},   {"test_mixed", 2.45}};
  CHECK(config_key(params, {"block_size_x", "test_string", "test_single", "test_bool",
                            "test_mixed"}) == "128,alg_2,15,True,2.45");
  CHECK(config_key(params, {"test_mixed", "block_size_x"}) == "2.45,128");
  CHECK(config_key({ordered_json(1.0), ordered_json(false), ordered_json(1e-05)}) ==
        "1.0,False,1e-05");
  CHECK_THROWS_AS(config_key(params, {"nope"}), std::invalid_argument);
}

TEST_CASE("dump_python_json matches json.dumps byte for byte", "[kt_formats]") {
  ordered_json obj = ordered_json::object();
  obj["s"] = "caf\u00e9 \U0001F600 \x01 \x7f / \\ \" \n\t\r\b\f";
  obj["n"] = ordered_json::array({1, -2, 3.5, 1e-07, 1e22, std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(), -0.0});
  obj["e"] = ordered_json::array();
  obj["o"] = ordered_json::object();
  obj["nested"] = {{"a", ordered_json::array({{{"b", nullptr}, {"c", true}}})}, {"d", "x"}};
  obj["big"] = 18446744073709551615ULL;
  // python3: json.dumps(obj), json.dumps(obj, indent=""), json.dumps(obj, indent="  ").
  CHECK(dump_python_json(obj) ==
        "{\"s\": \"caf\\u00e9 \\ud83d\\ude00 \\u0001 \\u007f / \\\\ \\\" \\n\\t\\r\\b\\f\", \"n\": "
        "[1, -2, 3.5, 1e-07, 1e+22, NaN, Infinity, -Infinity, -0.0], \"e\": [], \"o\": {}, "
        "\"nested\": {\"a\": [{\"b\": null, \"c\": true}], \"d\": \"x\"}, \"big\": "
        "18446744073709551615}");
  CHECK(dump_python_json_indented(obj, "") ==
        "{\n\"s\": \"caf\\u00e9 \\ud83d\\ude00 \\u0001 \\u007f / \\\\ \\\" \\n\\t\\r\\b\\f\",\n"
        "\"n\": [\n1,\n-2,\n3.5,\n1e-07,\n1e+22,\nNaN,\nInfinity,\n-Infinity,\n-0.0\n],\n\"e\": "
        "[],\n\"o\": {},\n\"nested\": {\n\"a\": [\n{\n\"b\": null,\n\"c\": true\n}\n],\n\"d\": "
        "\"x\"\n},\n\"big\": 18446744073709551615\n}");
  CHECK(dump_python_json_indented(obj, "  ") ==
        "{\n  \"s\": \"caf\\u00e9 \\ud83d\\ude00 \\u0001 \\u007f / \\\\ \\\" \\n\\t\\r\\b\\f\",\n"
        "  \"n\": [\n    1,\n    -2,\n    3.5,\n    1e-07,\n    1e+22,\n    NaN,\n    Infinity,\n"
        "    -Infinity,\n    -0.0\n  ],\n  \"e\": [],\n  \"o\": {},\n  \"nested\": {\n    \"a\": "
        "[\n      {\n        \"b\": null,\n        \"c\": true\n      }\n    ],\n    \"d\": "
        "\"x\"\n  },\n  \"big\": 18446744073709551615\n}");
  // And back: the parser reads what the writer wrote, NaN and surrogate pairs included.
  const ordered_json back = parse_python_json(dump_python_json(obj), "back");
  CHECK(dump_python_json(back) == dump_python_json(obj));
  CHECK(back["s"] == obj["s"]);
}

TEST_CASE("parse_python_json reads what json.loads reads", "[kt_formats]") {
  const auto v = parse_python_json(
      "{\"a\": NaN, \"b\": Infinity, \"c\": -Infinity, \"d\": \"NaN Infinity\", "
      "\"e\": [1, 1.5, 1E2, -0, 0.0, 123456789012345678901234567890], \"f\": \"\\ud83d\\ude00\\u00e9\","
      " \"g\": \"\\ud800\", \"a\": 2}",
      "t.json");
  CHECK(v["a"] == 2);  // a repeated key: its first place, its last value (a Python dict)
  CHECK(v.begin().key() == "a");
  CHECK(std::isinf(v["b"].get<double>()));
  CHECK(v["c"].get<double>() < 0);
  CHECK(std::isinf(v["c"].get<double>()));
  CHECK(v["d"] == "NaN Infinity");
  CHECK(v["e"][0].is_number_integer());
  CHECK(v["e"][1].is_number_float());
  CHECK(v["e"][2].get<double>() == 100.0);
  CHECK(v["e"][5].is_number_float());
  CHECK(v["f"] == "\U0001F600\u00e9");
  CHECK(dump_python_json(v["g"]) == "\"\\ud800\"");  // a lone surrogate survives
  const auto nan = parse_python_json("[NaN]", "n");
  CHECK(std::isnan(nan[0].get<double>()));

  for (const char* bad : {"{\"a\": nan}", "{\"a\": -Inf}", "{\"a\": 01}", "{\"a\": 1.}",
                          "{\"a\": \"x\ny\"}", "{\"a\": 1,}", "{\"a\": 1} x", "[1, 2", "",
                          "{'a': 1}", "{\"a\": \"\\x\"}"}) {
    CAPTURE(bad);
    const std::string msg = input_error([&] { parse_python_json(bad, "bad.json"); });
    INFO(msg);
    CHECK_THAT(msg, Contains("bad.json: line 1, column"));
    CHECK_THAT(msg, Contains("malformed JSON"));
    CHECK(msg.find('\n') == std::string::npos);
  }
  CHECK_THAT(input_error([] { parse_python_json("{\n\"a\": 1,\n\"b\": tru }", "x.json"); }),
             Contains("x.json: line 3, column 6"));
  // Deep nesting is an error, not a stack overflow.
  CHECK_THAT(input_error([] { parse_python_json(std::string(100000, '['), "deep.json"); }),
             Contains("nested too deeply"));
}

TEST_CASE("kt_mean is numpy's np.average", "[kt_formats]") {
  // /tmp/ktvenv (numpy 2.4.6): np.average([((i*2654435761) % 1000003)/997.0*1.37 ...]).hex()
  const std::pair<std::size_t, double> cases[] = {
      {3, 0x1.25ec90fb9804bp+9},   {7, 0x1.24dc648ade046p+9},   {8, 0x1.55abcaa203050p+9},
      {9, 0x1.4ff3cf63aecbfp+9},   {31, 0x1.77229a01295e6p+9},  {32, 0x1.71081dd0f06b6p+9},
      {33, 0x1.7434773ea8416p+9},  {127, 0x1.6406abdcc5dc5p+9}, {128, 0x1.630481c787f47p+9},
      {129, 0x1.644da2e62e6b9p+9}, {200, 0x1.58219c67b8d8ep+9}, {1000, 0x1.5990a0743ec6cp+9},
      {9000, 0x1.57f2453166d3cp+9}, {100001, 0x1.5791a0e642411p+9},
  };
  for (const auto& [n, want] : cases) {
    std::vector<double> a(n);
    for (std::size_t i = 0; i < n; ++i)
      a[i] = static_cast<double>((static_cast<std::uint64_t>(i) * 2654435761ULL) % 1000003ULL) /
             997.0 * 1.37;
    CAPTURE(n);
    CHECK(kt_mean(a) == want);
  }
  CHECK(std::isnan(kt_mean({})));
}

TEST_CASE("kt_timestamp is str(datetime.now(timezone.utc))", "[kt_formats]") {
  using namespace std::chrono;
  // 2023-12-22 09:54:05.502007 UTC
  const system_clock::time_point t{microseconds{1703238845502007LL}};
  CHECK(kt_timestamp(t) == "2023-12-22 09:54:05.502007+00:00");
  CHECK(kt_timestamp(system_clock::time_point{seconds{1703238845}}) == "2023-12-22 09:54:05+00:00");
  CHECK(kt_timestamp().size() == std::string("2023-12-22 09:54:05.502007+00:00").size());
}

// ---------------------------------------------------------------------------------------
// Reading

TEST_CASE("every Kernel Tuner example cache file reads", "[kt_formats][material]") {
  SECTION("test_cache_file.json: pretty-printed, one int parameter") {
    const auto c = read_cache(kt_dir() / "examples" / "test_cache_file.json");
    CHECK(c.file_state == KtFileState::Closed);
    CHECK(c.device_name == "NVIDIA RTX A4000");
    CHECK(c.kernel_name == "vector_add");
    CHECK(c.problem_size == 100);
    CHECK(c.objective.is_null());
    CHECK(c.objectives().empty());
    REQUIRE(c.entries.size() == 15);
    const auto& e = c.entries.front();
    CHECK(e.key == "128");
    CHECK(e.params == ordered_json{{"block_size_x", 128}});
    CHECK(e.status == Status::Ok);
    CHECK(e.time_ms == 0.04073600071881499);
    CHECK(e.times_ms.size() == 7);
    CHECK(e.compile_time_ms == 440.9545585513115);
    CHECK(e.verification_time_ms == 0.0);
    CHECK(e.framework_time_ms == 0.8587837219238281);
    CHECK(e.timestamp == "2022-12-23 12:11:26.411558+00:00");
    CHECK(e.extra.empty());
    CHECK(c.entries.back().key == "1024");
    CHECK(c.entries.back().time_ms == 0.04114742816558906);
    for (const auto& x : c.entries) CHECK(kt_mean(x.times_ms) == x.time_ms);
  }
  SECTION("strategies/test_cache_file.json: str, bool and float parameters") {
    const auto c = read_cache(kt_dir() / "examples" / "strategies" / "test_cache_file.json");
    CHECK(c.problem_size.is_null());
    CHECK(c.tune_params_keys ==
          std::vector<std::string>{"block_size_x", "test_string", "test_single", "test_bool",
                                   "test_mixed"});
    CHECK(c.tune_params["test_mixed"] == ordered_json::array({"test", 1, true, 2.45}));
    REQUIRE(c.entries.size() == 15);
    CHECK(c.entries.front().key == "128,alg_2,15,True,2.45");
    CHECK(c.entries.front().params["test_bool"] == true);
    CHECK(c.entries.front().params["test_mixed"] == 2.45);
    for (const auto& e : c.entries) CHECK(config_key(e.params, c.tune_params_keys) == e.key);
  }
  SECTION("strategies/test_cache_time_energy.json: line layout, observers and metrics") {
    const auto c = read_cache(kt_dir() / "examples" / "strategies" / "test_cache_time_energy.json");
    CHECK(c.objective == "time");
    CHECK(c.objectives() == std::vector<std::string>{"time"});
    CHECK(c.problem_size == 80000000);
    REQUIRE(c.entries.size() == 15);
    const auto& e = c.entries.front();
    CHECK(e.key == "128,1080");
    CHECK(e.times_ms.size() == 32);
    CHECK(e.extra["temperature"] == 45.0);
    CHECK(e.extra["GFLOPS/W"] == 0.3375457970575376);
    CHECK(e.extra.begin().key() == "temperature");  // file order kept
    CHECK(!e.extra.contains("time"));
    CHECK(c.entries.back().key == "1024,1080");
    for (const auto& x : c.entries) CHECK(config_key(x.params, c.tune_params_keys) == x.key);
  }
  SECTION("proposed/cache/small_cache.json: schema_version") {
    const auto c = read_cache(kt_dir() / "proposed" / "cache" / "small_cache.json");
    CHECK(c.schema_version == std::optional<std::string>("1.0.0"));
    CHECK(c.problem_size == ordered_json::array({4096, 4096}));
    REQUIRE(c.entries.size() == 2);
    CHECK(c.entries[1].key == "16,2");
    CHECK(c.entries[1].time_ms == 4.59481605887413);
    CHECK(c.entries[1].extra["GFLOP/s"] == 1643.101073745685);
  }
}

TEST_CASE("every file under formats/kernel_tuner/examples and data/spaces reads", "[kt_formats][material]") {
  // Whatever is added there later is covered too: a cache file reads with entries; the T1
  // inputs among the examples are refused as caches with a clean one-line error.
  std::size_t caches = 0, t1 = 0, t4 = 0;
  for (const auto& dir : {kt_dir() / "examples", kt_dir() / "proposed" / "cache",
                          material("data/spaces")}) {
    for (const auto& f : fs::recursive_directory_iterator(dir)) {
      const std::string name = f.path().filename().string();
      if (!f.is_regular_file() || name.find(".json") == std::string::npos) continue;
      if (name == "schema.json") continue;  // the proposed cache schema itself
      CAPTURE(f.path().string());
      if (name.find("_T4") != std::string::npos) {
        CHECK(read_t4(f.path()).entries.size() > 0);
        ++t4;
      } else if (name.find("T1") != std::string::npos) {
        check_one_line(input_error([&] { read_cache(f.path()); }), f.path().string(),
                       "cache: missing");
        ++t1;
      } else {
        const auto c = read_cache(f.path());
        CHECK(c.entries.size() > 0);
        CHECK(c.file_state == KtFileState::Closed);
        ++caches;
      }
    }
  }
  CHECK(caches == 8);
  CHECK(t1 == 2);
  CHECK(t4 == 1);
}

TEST_CASE("every recorded space reads, gzip-compressed", "[kt_formats][material]") {
  struct Space {
    const char* file;
    std::size_t entries, compile, runtime;
    const char* device;
    const char* first_key;
    double first_time;
  };
  const Space spaces[] = {
      {"convolution_A100.json.gz", 4362, 6, 155, "NVIDIA A100-PCIE-40GB",
       "16,1,1,1,0,0,0,1,15,15", 3.8753279224038124},
      {"convolution_A4000.json.gz", 4362, 6, 155, "NVIDIA RTX A4000", "16,1,1,1,0,0,0,1,15,15",
       5.900492995977402},
      {"dedispersion_A100.json.gz", 11130, 0, 0, "NVIDIA A100-PCIE-40GB", "1,32,1,1,1,0,0,0",
       73.55395197868347},
      {"dedispersion_A4000.json.gz", 11130, 0, 0, "NVIDIA RTX A4000", "1,32,1,1,1,0,0,0",
       189.2190556526184},
  };
  for (const auto& s : spaces) {
    CAPTURE(s.file);
    const auto c = read_cache(material("data/spaces/" + std::string(s.file)));
    CHECK(c.device_name == s.device);
    CHECK(c.file_state == KtFileState::Closed);
    REQUIRE(c.entries.size() == s.entries);
    CHECK(c.entries.front().key == s.first_key);
    CHECK(c.entries.front().time_ms == s.first_time);
    std::size_t compile = 0, runtime = 0, other = 0, mean_mismatch = 0, key_mismatch = 0;
    for (const auto& e : c.entries) {
      compile += e.status == Status::Compile;
      runtime += e.status == Status::Runtime;
      other += e.status != Status::Ok && e.status != Status::Compile && e.status != Status::Runtime;
      if (e.status == Status::Ok) mean_mismatch += kt_mean(e.times_ms) != e.time_ms;
      else CHECK(std::isnan(e.time_ms));
      key_mismatch += config_key(e.params, c.tune_params_keys) != e.key;
    }
    CHECK(compile == s.compile);
    CHECK(runtime == s.runtime);
    CHECK(other == 0);
    CHECK(mean_mismatch == 0);  // "time" is np.average("times"), bit for bit
    CHECK(key_mismatch == 0);
  }
}

TEST_CASE("every generation's errors map to cutune statuses", "[kt_formats]") {
  SECTION("up to 1.3: \"time\": \"InvalidConfig\" and friends, objective a string") {
    const auto c = read_cache(data_dir() / "old_generation.json");
    REQUIRE(c.entries.size() == 4);
    CHECK(c.objective == "time");
    CHECK(c.entries[0].status == Status::Ok);
    CHECK(c.entries[0].extra["GFLOP/s"] == 214.75);
    CHECK(c.entries[1].status == Status::Constraints);
    CHECK(c.entries[1].error == "InvalidConfig");
    CHECK(std::isnan(c.entries[1].time_ms));
    CHECK(c.entries[2].status == Status::Compile);
    CHECK(c.entries[2].error == "CompilationFailedConfig");
    CHECK(c.entries[2].compile_time_ms == 300.25);
    CHECK(c.entries[3].status == Status::Runtime);
    CHECK(c.entries[3].error == "RuntimeFailedConfig");
    CHECK(c.entries[3].extra["GFLOP/s"] == "RuntimeFailedConfig");
  }
  SECTION("1.5: \"__error__\" strings, no \"time\", objective a list (written by Kernel Tuner)") {
    const auto c = read_cache(data_dir() / "kt150_written.json");
    CHECK(c.file_state == KtFileState::Closed);
    CHECK(c.objective == ordered_json::array({"time"}));
    REQUIRE(c.entries.size() == 5);
    CHECK(c.entries[0].key == "128,True,a,1.0");
    CHECK(c.entries[0].status == Status::Ok);
    CHECK(c.entries[0].time_ms == kt_mean({0.5, 0.25, 0.125}));
    CHECK(c.entries[1].status == Status::Compile);
    CHECK(c.entries[1].key == "256,True,b,2.45");
    CHECK(c.entries[2].status == Status::Runtime);
    CHECK(c.entries[3].status == Status::Constraints);
    CHECK(c.entries[3].error == "InvalidConfig");
    CHECK(!c.entries[3].strategy_time_ms.has_value());  // 1.5 stores none
    CHECK(c.entries[4].time_ms == 1.6875);
    for (const auto& e : c.entries) CHECK(config_key(e.params, c.tune_params_keys) == e.key);
  }
  SECTION("\"__error__\" objects, empty strings, the base class, cutune's finer status") {
    const auto c = read_cache(data_dir() / "error_forms.json");
    REQUIRE(c.entries.size() == 6);
    CHECK(c.problem_size == 1024);
    CHECK(c.entries[0].status == Status::Compile);
    CHECK(c.entries[0].error == "CompilationFailedConfig");
    CHECK(c.entries[1].status == Status::Runtime);  // an ErrorConfig dumped without str()
    CHECK(c.entries[1].error == "ErrorConfig");
    CHECK(c.entries[2].status == Status::Constraints);
    CHECK(c.entries[3].status == Status::Timeout);  // "cutune_status": "timeout"
    CHECK(c.entries[3].error == "RuntimeFailedConfig");
    CHECK(!c.entries[3].extra.contains("cutune_status"));
    CHECK(c.entries[4].status == Status::Runtime);
    CHECK(c.entries[4].error == "ErrorConfig");
    CHECK(c.entries[5].status == Status::Ok);
    CHECK(c.entries[5].extra["observer"] == ordered_json{{"nested", {1, 2}}});
  }
  SECTION("the mapping both ways") {
    CHECK(status_of_kt_error("InvalidConfig") == Status::Constraints);
    CHECK(status_of_kt_error("CompilationFailedConfig") == Status::Compile);
    CHECK(status_of_kt_error("RuntimeFailedConfig") == Status::Runtime);
    CHECK(status_of_kt_error("ErrorConfig") == Status::Runtime);
    CHECK(!status_of_kt_error("time"));
    CHECK(std::string(kt_error_name(Status::Ok)).empty());
    for (Status s : {Status::Compile, Status::Runtime, Status::Correctness, Status::Constraints,
                     Status::Timeout})
      CHECK(status_of_kt_error(kt_error_name(s)).has_value());
  }
}

TEST_CASE("NaN, Infinity and -Infinity read as Python reads them", "[kt_formats]") {
  const auto c = read_cache(data_dir() / "nan_infinity.json");
  REQUIRE(c.entries.size() == 3);
  const auto& a = c.entries[0];
  CHECK(std::isnan(a.time_ms));
  CHECK(a.status == Status::Ok);
  REQUIRE(a.times_ms.size() == 2);
  CHECK(std::isnan(a.times_ms[0]));
  CHECK(std::isinf(a.extra["energy"].get<double>()));
  CHECK(a.extra["energy"].get<double>() < 0);
  CHECK(std::isnan(a.extra["power"].get<double>()));
  CHECK(a.extra["label"] == "NaN and Infinity stay text in a string");
  const auto& b = c.entries[1];
  CHECK(b.time_ms == std::numeric_limits<double>::infinity());
  CHECK(b.times_ms == std::vector<double>{std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity()});
  CHECK(b.extra["label"] == "-Infinity");
  const auto& d = c.entries[2];  // compact, no spaces
  CHECK(d.time_ms == -std::numeric_limits<double>::infinity());
  CHECK(d.compile_time_ms == 100.0);
  CHECK(d.extra["power"] == 1.5e300);
}

TEST_CASE("pretty and line layouts of one cache read the same", "[kt_formats][material]") {
  const fs::path line_file = kt_dir() / "examples" / "strategies" / "test_cache_time_energy.json";
  const std::string text = slurp(line_file);
  // The same document pretty-printed (json.dumps(indent=4) layout) and compact.
  const ordered_json doc = parse_python_json(text, "line");
  const auto line = parse_cache(text, "line");
  const auto pretty = parse_cache(dump_python_json_indented(doc, "    "), "pretty");
  const auto compact = parse_cache(dump_python_json(doc), "compact");
  CHECK(static_cast<const KtCacheHeader&>(line) == static_cast<const KtCacheHeader&>(pretty));
  CHECK(line.entries == pretty.entries);
  CHECK(line.entries == compact.entries);
  // And the pretty example file against its line layout as cutune writes it.
  const auto orig = read_cache(kt_dir() / "examples" / "test_cache_file.json");
  std::string rewritten = format_cache_header(orig);
  for (const auto& e : orig.entries) rewritten += format_cache_line(e);
  const auto again = parse_cache(rewritten, "rewritten");
  CHECK(again.file_state == KtFileState::Open);
  REQUIRE(again.entries.size() == orig.entries.size());
  for (std::size_t i = 0; i < orig.entries.size(); ++i) {
    CHECK(again.entries[i].key == orig.entries[i].key);
    CHECK(again.entries[i].time_ms == orig.entries[i].time_ms);
    CHECK(again.entries[i].times_ms == orig.entries[i].times_ms);
  }
}

TEST_CASE("a file left open by a crash reads every complete entry", "[kt_formats][material]") {
  SECTION("Kernel Tuner 1.5 interrupted: trailing comma") {
    const auto c = read_cache(data_dir() / "kt150_open.json");
    CHECK(c.file_state == KtFileState::Open);
    CHECK(c.entries.size() == 5);
  }
  SECTION("a run that stored nothing: the header only") {
    const auto c = read_cache(data_dir() / "header_only_open.json");
    CHECK(c.file_state == KtFileState::Open);
    CHECK(c.entries.empty());
    CHECK(c.device_name == "NVIDIA H100 80GB HBM3");
  }
  SECTION("a real line-layout file cut at every byte of its entries") {
    const std::string text =
        slurp(kt_dir() / "examples" / "strategies" / "test_cache_time_energy.json");
    const std::size_t cache_open = text.find("\"cache\": {") + std::string("\"cache\": {").size();
    // Where each entry's closing brace ends: before its "," or the final "}\n}".
    std::vector<std::size_t> ends;
    for (auto p : find_all(text, "},\n\""))
      if (p > cache_open) ends.push_back(p + 1);
    ends.push_back(text.rfind("}}\n}") + 1);
    REQUIRE(ends.size() == 15);
    std::size_t checked = 0;
    for (std::size_t cut = cache_open; cut < text.size(); ++cut) {
      // Every byte near an entry boundary, a stride elsewhere (the file is 30 kB).
      bool near = false;
      for (auto e : ends) near = near || (cut + 40 > e && cut < e + 40);
      if (!near && cut % 61 != 0) continue;
      const std::size_t complete = static_cast<std::size_t>(
          std::count_if(ends.begin(), ends.end(), [&](std::size_t e) { return e <= cut; }));
      CAPTURE(cut);
      const auto c = parse_cache(std::string_view(text).substr(0, cut), "cut.json");
      CHECK(c.entries.size() == complete);
      CHECK(c.file_state != KtFileState::Closed);
      ++checked;
    }
    CHECK(checked > 1000);
    CHECK(parse_cache(text, "whole").file_state == KtFileState::Closed);
    // A cut inside the header is an error, not an empty cache.
    const std::string msg = input_error([&] { parse_cache(text.substr(0, 200), "head.json"); });
    CHECK_THAT(msg, Contains("head.json"));
  }
  SECTION("a power loss: the tail of the file is NUL bytes") {
    std::string text = slurp(data_dir() / "kt150_open.json");
    const std::size_t last = text.rfind("\n\"");
    const std::string padded = text.substr(0, last + 30) + std::string(500, '\0');
    const auto c = parse_cache(padded, "nul.json");
    CHECK(c.entries.size() == 4);
    CHECK(c.file_state == KtFileState::Truncated);
    CHECK(parse_cache(text + std::string(64, '\0'), "nul.json").entries.size() == 5);
    // NUL bytes before the end are no crash tail: a syntax error.
    const std::string msg = input_error(
        [&] { parse_cache(text.substr(0, last) + std::string(3, '\0') + text.substr(last), "mid.json"); });
    CHECK_THAT(msg, Contains("mid.json: line"));
  }
  SECTION("a pretty-printed file cut inside an entry") {
    const std::string text = slurp(kt_dir() / "examples" / "test_cache_file.json");
    const auto closes = find_all(text, "\n        },");
    REQUIRE(closes.size() == 14);
    const std::size_t after3 = closes[2] + std::string("\n        }").size();
    CHECK(parse_cache(text.substr(0, after3), "p").entries.size() == 3);
    CHECK(parse_cache(text.substr(0, after3 + 1), "p").entries.size() == 3);
    CHECK(parse_cache(text.substr(0, after3 - 1), "p").entries.size() == 2);
    CHECK(parse_cache(text.substr(0, after3 - 1), "p").file_state == KtFileState::Truncated);
    CHECK(parse_cache(text.substr(0, closes[3] - 200), "p").entries.size() == 3);
  }
  SECTION("Kernel Tuner's repair agrees (python3)") {
    if (!python_has("json")) {
      WARN("python3 not available: Kernel Tuner's repair of an open file is not checked");
      return;
    }
    // kernel_tuner/util.py correct_open_cache (1.5.0), verbatim logic.
    const std::string script = R"(import json, sys
filestr = open(sys.argv[1]).read().strip()
if len(filestr) > 0 and filestr[-3:] not in ["}\n}", "}}}"]:
    if filestr[-1] == ",":
        filestr = filestr[:-1]
    if len(filestr) > 0:
        filestr = filestr + "}\n}"
print(len(json.loads(filestr)["cache"]))
)";
    for (const char* f : {"kt150_open.json", "header_only_open.json", "kt150_written.json"}) {
      const auto py = run_python(script, {(data_dir() / f).string()});
      CAPTURE(f, py.out);
      REQUIRE(py.status == 0);
      CHECK(std::stoul(py.out) == read_cache(data_dir() / f).entries.size());
    }
  }
}

TEST_CASE("bad cache files: one-line InputError naming the file and the field", "[kt_formats][material]") {
  const std::string head =
      "{\n\"device_name\": \"d\",\n\"kernel_name\": \"k\",\n\"tune_params_keys\": [\n\"x\"\n],\n"
      "\"tune_params\": {\n\"x\": [\n1,\n2\n]\n},\n\"cache\": {\n";
  auto err = [](const std::string& text) {
    return input_error([&] { parse_cache(text, "bad_cache.json"); });
  };
  struct Case {
    std::string text;
    std::string field;
  };
  const Case cases[] = {
      {head + "\"1\": {\"x\": 1, \"time\": \"fast\"}}\n}", "cache[\"1\"].time"},
      {head + "\"1\": {\"x\": 1, \"time\": null}}\n}", "cache[\"1\"].time"},
      {head + "\"1\": {\"x\": 1, \"times\": [1.0, \"2\"]}}\n}", "cache[\"1\"].times[1]"},
      {head + "\"1\": {\"x\": 1, \"times\": 3}}\n}", "cache[\"1\"].times"},
      {head + "\"1\": {\"x\": 1, \"compile_time\": \"3\"}}\n}", "cache[\"1\"].compile_time"},
      {head + "\"1\": {\"x\": 1, \"timestamp\": 5}}\n}", "cache[\"1\"].timestamp"},
      {head + "\"1\": {\"x\": 1, \"__error__\": 5}}\n}", "cache[\"1\"].__error__"},
      {head + "\"1\": {\"x\": 1, \"cutune_status\": \"slow\"}}\n}", "cache[\"1\"].cutune_status"},
      {head + "\"1\": {\"time\": 1.0}}\n}", "cache[\"1\"]: missing parameter \"x\""},
      {head + "\"1\": [1]}\n}", "cache[\"1\"]: expected an object"},
      {head + "\"1\": {\"x\": 1, \"time\": 1.0} \"2\": {}}\n}", "line 14"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": []}", "cache: missing"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [], \"cache\": []}",
       "cache: expected an object"},
      {"{\"kernel_name\": \"k\", \"tune_params_keys\": [], \"cache\": {}}", "device_name: missing"},
      {"{\"device_name\": 3, \"kernel_name\": \"k\", \"tune_params_keys\": [], \"cache\": {}}",
       "device_name: expected a string"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"cache\": {}}", "tune_params_keys: missing"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": \"x\", \"cache\": {}}",
       "tune_params_keys: expected a list"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [1], \"cache\": {}}",
       "tune_params_keys[0]"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [], \"tune_params\": "
       "{\"x\": 1}, \"cache\": {}}",
       "tune_params[\"x\"]"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [], \"objective\": 3, "
       "\"cache\": {}}",
       "objective"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [], \"problem_size\": "
       "1.5, \"cache\": {}}",
       "problem_size"},
      {"", "empty file"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"device_name\": \"d\", \"kernel_name\": \"k\", \"tune_params_keys\": [], \"cache\": {}} x",
       "extra data"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    check_one_line(err(c.text), "bad_cache.json", c.field);
  }
  // A gzip stream cut short is an error, not a short cache.
  cutune::testing::TempPath cut("cutune-test-kt-cut.json.gz");
  const std::string gz = slurp(material("data/spaces/convolution_A100.json.gz"));
  spit(cut.path(), gz.substr(0, gz.size() / 2));
  check_one_line(input_error([&] { read_cache(cut.path()); }), cut.path().string(),
                 "corrupt or truncated gzip data");
  const fs::path missing = data_dir() / "no_such_file.json";
  check_one_line(input_error([&] { read_cache(missing); }), missing.string(), "cannot open");
}

// ---------------------------------------------------------------------------------------
// Writing

TEST_CASE("nested times lists of older Kernel Tuner versions read as runs, in order", "[kt_formats]") {
  const std::string text =
      "{\n\"device_name\": \"d\",\n\"kernel_name\": \"k\",\n\"tune_params_keys\": [\n\"x\"\n],\n"
      "\"tune_params\": {\n\"x\": [\n1,\n2\n]\n},\n\"cache\": {\n"
      "\"1\": {\"x\": 1, \"time\": 2.0, \"times\": [[1.0, 2.0], [3.0], 4.0]}}\n}";
  const auto cache = parse_cache(text, "old_cache.json");
  REQUIRE(cache.entries.size() == 1);
  CHECK(cache.entries[0].times_ms == std::vector<double>{1.0, 2.0, 3.0, 4.0});
  CHECK_THAT(input_error([&] { parse_cache(text.substr(0, text.find("[3.0]")) + "[\"3\"], 4.0]}}\n}", "old.json"); }),
             Catch::Matchers::Contains("cache[\"1\"].times[1][0]"));
}

TEST_CASE("a written cache reads back equal", "[kt_formats]") {
  cutune::testing::TempPath tmp("cutune-test-kt-roundtrip.json");
  const auto header = test_header();
  std::vector<KtEntry> entries;
  for (int i = 0; i < 18; ++i) entries.push_back(test_entry(i));
  {
    KtCacheWriter w;
    CHECK(w.open(tmp.path(), header).empty());
    for (const auto& e : entries) CHECK(w.append(e));
    CHECK_FALSE(w.append(entries[0]));  // a key already stored is not written twice
    CHECK(w.entry_count() == entries.size());
    w.close();
    w.close();  // idempotent
  }
  const auto c = read_cache(tmp.path());
  CHECK(c.file_state == KtFileState::Closed);
  CHECK(static_cast<const KtCacheHeader&>(c) == header);
  REQUIRE(c.entries.size() == entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CAPTURE(i, entries[i].key);
    CHECK(c.entries[i] == entries[i]);
  }
  // Statuses Kernel Tuner cannot express come back through "cutune_status".
  CHECK(c.entries[6].status == Status::Correctness);
  CHECK(c.entries[8].status == Status::Timeout);
  // A key computed from the params when the entry has none.
  KtEntry nokey = test_entry(20);
  const std::string want = nokey.key;
  nokey.key.clear();
  CHECK(format_cache_line(nokey).rfind("\n" + dump_python_json(want) + ": {", 0) == 0);
}

TEST_CASE("header fields beyond Kernel Tuner's are written before \"cache\" and read back",
          "[kt_formats][material]") {
  KtCacheHeader h = test_header();
  h.schema_version = "1.0.0";
  h.extra["cutune_version"] = "0.1.0";
  h.extra["cutune_gpu"] = {{"uuid", "GPU-1234"}, {"sm_count", 132}};
  const std::string text = format_cache_header(h);
  CHECK(text.rfind("{\n\"schema_version\": \"1.0.0\",\n\"device_name\"", 0) == 0);
  CHECK(text.substr(text.size() - 10) == "\"cache\": {");
  const auto c = parse_cache(text, "h");
  CHECK(static_cast<const KtCacheHeader&>(c) == h);
  // A gzip-compressed cache is read, never appended to.
  const fs::path gz = material("data/spaces/convolution_A100.json.gz");
  check_one_line(input_error([&] {
                   KtCacheWriter w;
                   w.open(gz, test_header());
                 }),
                 gz.string(), "cannot be appended");
}

TEST_CASE("the writer lays the file out as Kernel Tuner does, byte for byte", "[kt_formats]") {
  const auto header = test_header();
  cutune::testing::TempPath ours("cutune-test-kt-ours.json");
  cutune::testing::TempPath spec("cutune-test-kt-spec.json");
  cutune::testing::TempPath theirs("cutune-test-kt-theirs.json");
  ordered_json spec_json = ordered_json::object();
  spec_json["device_name"] = header.device_name;
  spec_json["kernel_name"] = header.kernel_name;
  spec_json["problem_size"] = header.problem_size;
  spec_json["tune_params"] = header.tune_params;
  spec_json["objective"] = header.objective;
  spec_json["entries"] = ordered_json::array();
  {
    KtCacheWriter w;
    w.open(ours.path(), header);
    for (int i = 0; i < 9; ++i) {
      const KtEntry e = test_entry(i);
      w.append(e);
      spec_json["entries"].push_back(ordered_json::array({e.key, entry_to_json(e)}));
    }
    w.close();
  }
  const std::string text = slurp(ours.path());
  // The shape, checked here without Python.
  CHECK(text.rfind("{\n\"device_name\": \"NVIDIA H100 80GB HBM3\",\n\"kernel_name\": \"matmul\",\n"
                   "\"problem_size\": [\n4096,\n2\n],\n\"tune_params_keys\": [\n\"block_size_x\",\n",
                   0) == 0);
  CHECK(text.find("\"objective\": [\n\"time\"\n],\n\"cache\": {\n\"64,True,a,1.0\": {\"block_size_x\": "
                  "64, \"use_shmem\": true, \"alg\": \"a\", \"factor\": 1.0, \"time\": ") !=
        std::string::npos);
  CHECK(text.find("\"time\": \"CompilationFailedConfig\", \"__error__\": \"CompilationFailedConfig\", "
                  "\"compile_time\": 101.5,") != std::string::npos);
  CHECK(text.substr(text.size() - 5) == "\"}}\n}");  // close_cache's "}\n}" after the last line
  CHECK(find_all(text.substr(text.find("\"cache\": {")), "},\n\"").size() == 8);  // 9 lines

  if (!python_has("json")) {
    WARN("python3 not available: the byte-for-byte comparison with Kernel Tuner's code is SKIPPED");
    return;
  }
  spit(spec.path(), dump_python_json(spec_json));
  // kernel_tuner/util.py 1.5.0: process_cache (header), store_cache (each line), close_cache,
  // with the standard json module (NpEncoder only adds numpy types).
  const std::string script = R"(import json, sys
spec = json.load(open(sys.argv[1]))
cachefile = sys.argv[2]
tune_params = spec["tune_params"]
c = dict()
c["device_name"] = spec["device_name"]
c["kernel_name"] = spec["kernel_name"]
c["problem_size"] = spec["problem_size"]
c["tune_params_keys"] = list(tune_params.keys())
c["tune_params"] = tune_params
c["objective"] = spec["objective"]
c["cache"] = {}
contents = json.dumps(c, indent="")[:-3]
with open(cachefile, "w") as f:
    f.write(contents)
for key, params in spec["entries"]:
    element = [params[k] for k in tune_params.keys()]
    assert key == ",".join([str(i) for i in element]), (key, element)
    with open(cachefile, "a") as f:
        f.write("\n" + json.dumps({key: params})[1:-1] + ",")
with open(cachefile, "r") as fh:
    contents = fh.read()
if contents[-1] == ",":
    with open(cachefile, "w") as fh:
        fh.write(contents[:-1] + "}\n}")
print("ok")
)";
  const auto py = run_python(script, {spec.path().string(), theirs.path().string()});
  INFO(py.out);
  REQUIRE(py.status == 0);
  CHECK(slurp(theirs.path()) == text);
}

TEST_CASE("the writer resumes after a crash and after a close", "[kt_formats]") {
  cutune::testing::TempPath tmp("cutune-test-kt-resume.json");
  const auto header = test_header();
  {
    KtCacheWriter w;
    CHECK(w.open(tmp.path(), header).empty());
    for (int i = 0; i < 3; ++i) w.append(test_entry(i));
    // A crash: no close(); the writer goes away leaving the file open.
  }
  CHECK(read_cache(tmp.path()).file_state == KtFileState::Open);
  {
    KtCacheWriter w;
    const auto kept = w.open(tmp.path(), header);
    REQUIRE(kept.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(kept[static_cast<std::size_t>(i)] == test_entry(i));
    CHECK_FALSE(w.append(test_entry(1)));  // already there
    CHECK(w.append(test_entry(3)));
    CHECK(w.append(test_entry(4)));
    w.close();
  }
  auto c = read_cache(tmp.path());
  CHECK(c.file_state == KtFileState::Closed);
  REQUIRE(c.entries.size() == 5);
  for (int i = 0; i < 5; ++i) CHECK(c.entries[static_cast<std::size_t>(i)] == test_entry(i));

  // A closed file reopens, a crash in the middle of a line loses only that line.
  {
    KtCacheWriter w;
    CHECK(w.open(tmp.path(), header).size() == 5);
    w.append(test_entry(5));
  }
  {
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::app);
    out << "\n\"256,False,b,2.45\": {\"block_size_x\": 256, \"use_shmem\": fal";
  }
  c = read_cache(tmp.path());
  CHECK(c.file_state == KtFileState::Truncated);
  CHECK(c.entries.size() == 6);
  {
    KtCacheWriter w;
    CHECK(w.open(tmp.path(), header).size() == 6);
    w.append(test_entry(6));
    w.close();
  }
  c = read_cache(tmp.path());
  CHECK(c.file_state == KtFileState::Closed);
  REQUIRE(c.entries.size() == 7);
  for (int i = 0; i < 7; ++i) CHECK(c.entries[static_cast<std::size_t>(i)] == test_entry(i));
  const std::string text = slurp(tmp.path());
  CHECK(text.find("fal") == text.find("false"));  // the partial line is gone
  CHECK(text.find(",,") == std::string::npos);

  if (!python_has("json")) {
    WARN("python3 not available: Kernel Tuner's resume of a cutune file is not checked");
    return;
  }
  // Kernel Tuner 1.5 resuming this file: correct_open_cache(open_cache=True) reopens it
  // (filestr[:-3] + ","), store_cache appends a line, close_cache completes it.
  const std::string script = R"(import json, sys
cachefile = sys.argv[1]
with open(cachefile, "r") as f:
    filestr = f.read().strip()
assert filestr[-3:] in ["}\n}", "}}}"]
with open(cachefile, "w") as f:
    f.write(filestr[:-3] + ",")
with open(cachefile, "a") as f:
    f.write("\n" + json.dumps({"999": {"block_size_x": 999}})[1:-1] + ",")
with open(cachefile, "r") as fh:
    contents = fh.read()
if contents[-1] == ",":
    with open(cachefile, "w") as fh:
        fh.write(contents[:-1] + "}\n}")
print(len(json.load(open(cachefile))["cache"]))
)";
  cutune::testing::TempPath copy("cutune-test-kt-resume-kt.json");
  fs::copy_file(tmp.path(), copy.path());
  const auto py = run_python(script, {copy.path().string()});
  INFO(py.out);
  REQUIRE(py.status == 0);
  CHECK(std::stoul(py.out) == 8);
}

TEST_CASE("resuming a cache whose header disagrees names the field", "[kt_formats]") {
  cutune::testing::TempPath tmp("cutune-test-kt-header.json");
  const auto header = test_header();
  {
    KtCacheWriter w;
    w.open(tmp.path(), header);
    w.append(test_entry(0));
  }
  const std::string before = slurp(tmp.path());
  auto mismatch = [&](auto change) {
    KtCacheHeader h = test_header();
    change(h);
    return input_error([&] {
      KtCacheWriter w;
      w.open(tmp.path(), h);
    });
  };
  const std::string path = tmp.path().string();
  check_one_line(mismatch([](KtCacheHeader& h) { h.device_name = "NVIDIA A100"; }), path,
                 "device_name: the file has \"NVIDIA H100 80GB HBM3\", the problem has \"NVIDIA A100\"");
  check_one_line(mismatch([](KtCacheHeader& h) { h.kernel_name = "other"; }), path, "kernel_name");
  check_one_line(mismatch([](KtCacheHeader& h) { h.problem_size = ordered_json::array({8192, 2}); }),
                 path, "problem_size: the file has [4096, 2]");
  check_one_line(mismatch([](KtCacheHeader& h) {
                   std::swap(h.tune_params_keys[0], h.tune_params_keys[1]);
                 }),
                 path, "tune_params_keys");
  check_one_line(mismatch([](KtCacheHeader& h) { h.tune_params["factor"].push_back(4.0); }), path,
                 "tune_params[\"factor\"]");
  check_one_line(mismatch([](KtCacheHeader& h) { h.tune_params["extra_param"] = {1}; }), path,
                 "tune_params[\"extra_param\"]");
  CHECK(slurp(tmp.path()) == before);  // a refused resume leaves the file alone

  // What Kernel Tuner does not compare either: 100 and [100], and the objective.
  cutune::testing::TempPath tmp2("cutune-test-kt-header2.json");
  KtCacheHeader h = test_header();
  h.problem_size = 100;
  {
    KtCacheWriter w;
    w.open(tmp2.path(), h);
  }
  h.problem_size = ordered_json::array({100});
  h.objective = "GFLOP/s";
  KtCacheWriter w;
  CHECK(w.open(tmp2.path(), h).empty());
}

TEST_CASE("a cache without entries stays open, as Kernel Tuner leaves it", "[kt_formats]") {
  cutune::testing::TempPath tmp("cutune-test-kt-empty.json");
  KtCacheWriter w;
  w.open(tmp.path(), test_header());
  w.close();
  const std::string text = slurp(tmp.path());
  CHECK(text.substr(text.size() - 10) == "\"cache\": {");
  const auto c = read_cache(tmp.path());
  CHECK(c.entries.empty());
  CHECK(c.file_state == KtFileState::Open);
  // It resumes and fills like any other.
  KtCacheWriter w2;
  CHECK(w2.open(tmp.path(), test_header()).empty());
  w2.append(test_entry(0));
  w2.close();
  CHECK(read_cache(tmp.path()).entries.size() == 1);
  // The writer refuses a path it cannot create, with the path in the message.
  const fs::path bad = data_dir() / "no_such_dir" / "x.json";
  check_one_line(input_error([&] {
                   KtCacheWriter w3;
                   w3.open(bad, test_header());
                 }),
                 bad.string(), "cannot create");
}

// ---------------------------------------------------------------------------------------
// T4

namespace {

/// Validates `doc` against `schema` with python3's jsonschema; "" when valid, else the
/// errors. nullopt when python3 or jsonschema is missing.
std::optional<std::string> jsonschema_errors(const fs::path& schema, const fs::path& doc) {
  if (!python_has("jsonschema")) return std::nullopt;
  const std::string script = R"(import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = [f"{list(e.absolute_path)}: {e.message}" for e in cls(schema).iter_errors(doc)]
print("\n".join(errors[:10]))
sys.exit(1 if errors else 0)
)";
  const auto py = run_python(script, {schema.string(), doc.string()});
  return py.status == 0 ? std::string() : (py.out.empty() ? std::string("python3 failed") : py.out);
}

void check_schema(const fs::path& schema, const fs::path& doc) {
  const auto errors = jsonschema_errors(schema, doc);
  if (!errors) {
    WARN("python3 jsonschema not available: " << doc.filename().string()
                                              << " NOT validated against " << schema.string());
    return;
  }
  INFO(doc.string() << " against " << schema.string() << ":\n" << *errors);
  CHECK(errors->empty());
}

}  // namespace

TEST_CASE("written T4 1.0.0 and 1.1.0 files validate and read back", "[kt_formats][material]") {
  std::vector<KtEntry> entries;
  for (int i = 0; i < 9; ++i) entries.push_back(test_entry(i));
  T4Metadata md;
  md.device = "NVIDIA H100 80GB HBM3";
  md.platform = "NVIDIA CUDA 12.4";
  md.autotuner_version = "0.1.0";
  md.timestamp = "2026-11-22T10:00:00Z";
  const fs::path results_schema = kt_dir() / "T4" / "1.0.0" / "results-schema.json";
  const fs::path metadata_schema = kt_dir() / "T4" / "1.0.0" / "metadata-schema.json";
  const fs::path schema_1_1 = material("formats/kernel_tuner/proposed/autotuning_methodology_T4_1.1.0/T4.json");

  for (const char* version : {"1.0.0", "1.1.0"}) {
    CAPTURE(version);
    cutune::testing::TempPath tmp(std::string("cutune-test-t4-") + version + ".json");
    write_t4(tmp.path(), version, md, {"time"}, entries);
    const ordered_json doc = parse_python_json(slurp(tmp.path()), "t4");
    CHECK(doc["schema_version"] == version);
    const auto& r1 = doc["results"][1];  // a compile failure
    CHECK(r1["invalidity"] == "compile");
    CHECK(r1["correctness"] == 0);
    CHECK(r1["measurements"][0]["value"] == "CompilationFailedConfig");
    CHECK(r1["times"]["compilation_time"] == 101.5);
    if (std::string(version) == "1.0.0") {
      CHECK(r1["times"]["compilation"] == 101.5);  // what Kernel Tuner writes and reads
      CHECK(doc["metadata"]["timeunit"] == "milliseconds");
    } else {
      CHECK(!r1["times"].contains("compilation"));
      CHECK(doc["metadata"]["device"] == "NVIDIA H100 80GB HBM3");
      CHECK(doc["metadata"]["compute_api"] == "CUDA");
    }
    check_schema(std::string(version) == "1.0.0" ? results_schema : schema_1_1, tmp.path());

    const auto back = read_t4(tmp.path());
    CHECK(back.schema_version == version);
    CHECK(back.objectives == std::vector<std::string>{"time"});
    CHECK(back.param_names == test_header().tune_params_keys);
    CHECK(back.metadata.device == md.device);
    REQUIRE(back.entries.size() == entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      CAPTURE(i);
      const auto& a = entries[i];
      const auto& b = back.entries[i];
      CHECK(b.key == a.key);
      CHECK(b.params == a.params);
      CHECK(b.status == a.status);
      CHECK(b.error == a.error);
      CHECK((b.time_ms == a.time_ms || (std::isnan(a.time_ms) && std::isnan(b.time_ms))));
      CHECK(b.times_ms == a.times_ms);
      CHECK(b.compile_time_ms == a.compile_time_ms);
      CHECK(b.verification_time_ms == a.verification_time_ms);
      CHECK(b.benchmark_time_ms == a.benchmark_time_ms);
      CHECK(b.framework_time_ms == a.framework_time_ms);
      CHECK(b.timestamp == a.timestamp);
      CHECK(b.extra["cutune_median"] == a.extra["cutune_median"]);
    }
  }
  cutune::testing::TempPath meta("cutune-test-t4-metadata.json");
  spit(meta.path(), format_t4_metadata_1_0_0(md));
  CHECK(parse_python_json(slurp(meta.path()), "meta")["schema_version"] == "1.0.0");
  check_schema(metadata_schema, meta.path());
  CHECK_THROWS_AS(format_t4("2.0.0", md, {"time"}, entries), std::invalid_argument);
}

TEST_CASE("real T4 files read into the cache's entry model", "[kt_formats][material]") {
  SECTION("Benchmark Hub: convolution_A100_T4.json.gz agrees with convolution_A100.json.gz") {
    const auto t4 = read_t4(material("data/spaces/convolution_A100_T4.json.gz"));
    const auto cache = read_cache(material("data/spaces/convolution_A100.json.gz"));
    CHECK(t4.schema_version == "1.0.0");
    CHECK(t4.metadata.timeunit == "miliseconds");
    CHECK(t4.objectives == std::vector<std::string>{"time"});
    CHECK(t4.param_names == cache.tune_params_keys);
    REQUIRE(t4.entries.size() == cache.entries.size());
    std::map<std::string, const KtEntry*> by_key;
    for (const auto& e : cache.entries) by_key[e.key] = &e;
    std::size_t missing = 0, differ = 0;
    for (const auto& e : t4.entries) {
      const auto it = by_key.find(e.key);
      if (it == by_key.end()) {
        ++missing;
        continue;
      }
      const KtEntry& c = *it->second;
      const bool same = e.status == c.status && e.times_ms == c.times_ms &&
                        e.compile_time_ms == c.compile_time_ms &&
                        (e.time_ms == c.time_ms || (std::isnan(e.time_ms) && std::isnan(c.time_ms))) &&
                        e.timestamp == c.timestamp;
      differ += !same;
    }
    CHECK(missing == 0);
    CHECK(differ == 0);
    check_schema(kt_dir() / "T4" / "1.0.0" / "results-schema.json",
                 data_dir() / "kt150_t4.json");  // and Kernel Tuner's own output is valid
  }
  SECTION("Kernel Tuner 1.5's own T4 output (get_t4_results)") {
    const auto t4 = read_t4(data_dir() / "kt150_t4.json");
    const auto cache = read_cache(data_dir() / "kt150_written.json");
    REQUIRE(t4.entries.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(t4.entries[i].key == cache.entries[i].key);
      CHECK(t4.entries[i].status == cache.entries[i].status);
      CHECK(t4.entries[i].times_ms == cache.entries[i].times_ms);
      CHECK(t4.entries[i].compile_time_ms == cache.entries[i].compile_time_ms);
      CHECK(!t4.entries[i].extra.contains("__error__"));
    }
    CHECK(t4.entries[0].time_ms == cache.entries[0].time_ms);
  }
  SECTION("bad T4 input") {
    auto err = [](const std::string& text) {
      return input_error([&] { parse_t4(text, "bad_t4.json"); });
    };
    const std::string ok_times = "\"times\": {\"runtimes\": [1.0]}";
    check_one_line(err("{}"), "bad_t4.json", "results: missing");
    check_one_line(err("{\"results\": {}}"), "bad_t4.json", "results: expected a list");
    check_one_line(err("{\"results\": [{\"times\": {}, \"invalidity\": \"correct\", \"correctness\": 1}]}"),
                   "bad_t4.json", "results[0].configuration: missing");
    check_one_line(err("{\"results\": [{\"configuration\": {}, " + ok_times +
                       ", \"invalidity\": \"broken\", \"correctness\": 1}]}"),
                   "bad_t4.json", "results[0].invalidity: unknown value \"broken\"");
    check_one_line(err("{\"results\": [{\"configuration\": {}, \"times\": {\"runtimes\": [\"x\"]}, "
                       "\"invalidity\": \"correct\", \"correctness\": 1}]}"),
                   "bad_t4.json", "results[0].times.runtimes[0]");
    check_one_line(err("{\"metadata\": {\"timeunit\": \"fortnights\"}, \"results\": []}"),
                   "bad_t4.json", "metadata.timeunit");
    check_one_line(err("{\"results\": [{\"configuration\": {}, " + ok_times +
                       ", \"invalidity\": \"correct\"}]}"),
                   "bad_t4.json", "results[0].correctness: missing");
    check_one_line(err("{\"results\": [1,"), "bad_t4.json", "malformed JSON");
  }
  SECTION("units: seconds and microseconds become milliseconds") {
    const auto t4 = parse_t4(
        "{\"schema_version\": \"1.1.0\", \"metadata\": {\"timeunit\": \"seconds\"}, \"results\": "
        "[{\"configuration\": {\"x\": 1}, \"times\": {\"compilation_time\": 0.5, \"runtimes\": "
        "[0.001, 0.003]}, \"invalidity\": \"correct\", \"correctness\": 1, \"measurements\": "
        "[{\"name\": \"time\", \"value\": 2000.0, \"unit\": \"us\"}]}]}",
        "units.json");
    REQUIRE(t4.entries.size() == 1);
    CHECK(t4.entries[0].compile_time_ms == 500.0);
    CHECK(t4.entries[0].times_ms == std::vector<double>{1.0, 3.0});
    CHECK(t4.entries[0].time_ms == 2.0);
    CHECK(t4.entries[0].key == "1");
  }
}

TEST_CASE("KTT results read into the cache's entry model", "[kt_formats]") {
  const fs::path file = cutune::testing::test_data_dir() / "ktt" / "vector_add_results.json";
  const auto k = cutune::db::ktt::read_ktt(file);
  CHECK(k.device == "NVIDIA RTX 500 Ada Generation Laptop GPU");
  CHECK(k.ktt_version == "2.2.0");
  CHECK(k.kernel_name == "vectorAddition_kernel");
  CHECK(k.param_names == std::vector<std::string>{"block_size", "unroll"});
  // 9 results, "64,2" twice: the first run is kept.
  REQUIRE(k.entries.size() == 8);
  std::map<std::string, const KtEntry*> by_key;
  for (const auto& e : k.entries) by_key[e.key] = &e;
  REQUIRE(by_key.count("64,2"));
  const KtEntry& best = *by_key["64,2"];
  CHECK(best.status == Status::Ok);
  CHECK(best.time_ms == Approx(0.06475));  // 64.75 us
  CHECK(best.params["block_size"] == 64);
  CHECK(best.params["unroll"] == 2);
  // Costs in ms from the overheads: compile, validation, kernel + data movement + profiling.
  const KtEntry& first = k.entries[0];
  CHECK(first.key == "32,1");
  CHECK(*first.compile_time_ms == Approx(9.26511));
  CHECK(*first.verification_time_ms == Approx(10.29098));
  CHECK(*first.benchmark_time_ms == Approx((120.5 + 51218.207) / 1e3));
  CHECK(*first.strategy_time_ms == Approx(0.013119));
  CHECK(by_key["128,1"]->status == Status::Correctness);
  CHECK(std::isnan(by_key["128,1"]->time_ms));
  CHECK(by_key["256,1"]->status == Status::Compile);
  CHECK(*by_key["256,1"]->compile_time_ms == Approx(15.0));
  // The import path reads it too (it names device and kernel, not the problem size).
  const ResultsFile rf = read_results_file(file);
  CHECK(rf.format == "KTT 2.2.0 results");
  CHECK(rf.kernel_name == "vectorAddition_kernel");
  CHECK(rf.entries.size() == 8);
  CHECK(rf.problem_size.is_null());
}

TEST_CASE("KTT results: older layouts, units, files without overheads", "[kt_formats]") {
  // Before ValueType KTT wrote "IsDouble"; before the per-part overheads only TotalOverhead.
  const std::string old = R"({"Metadata": {"ComputeApi": "CUDA", "Device": "GPU", "KttVersion": "2.0.0",
    "Platform": "NVIDIA CUDA", "TimeUnit": "Nanoseconds"},
    "Results": [{"KernelName": "k", "Status": "Ok", "TotalDuration": 250000.0, "TotalOverhead": 3000000.0,
                 "ExtraDuration": 0.0, "ExtraOverhead": 0.0,
                 "Configuration": [{"Name": "a", "IsDouble": false, "Value": 4}, {"Name": "f", "IsDouble": true, "Value": 0.5}],
                 "ComputationResults": [{"KernelFunction": "k", "Duration": 250000.0, "Overhead": 3000000.0}]},
                {"KernelName": "k", "Status": "ComputationFailed", "TotalDuration": 1.8446744073709552e19,
                 "TotalOverhead": 1000000.0, "ExtraDuration": 0.0, "ExtraOverhead": 0.0,
                 "Configuration": [{"Name": "a", "IsDouble": false, "Value": 8}, {"Name": "f", "IsDouble": true, "Value": 0.5}],
                 "ComputationResults": []}]})";
  const auto k = cutune::db::ktt::parse_ktt(old, "old.json");
  REQUIRE(k.entries.size() == 2);
  CHECK(k.entries[0].key == "4,0.5");
  CHECK(k.entries[0].time_ms == Approx(0.25));
  CHECK(*k.entries[0].compile_time_ms == Approx(3.0));  // TotalOverhead stands in
  CHECK(k.entries[1].status == Status::Runtime);
  CHECK(!k.entries[1].benchmark_time_ms);  // InvalidDuration: never measured
  // No overhead above 0: no costs at all (the file is then scored in evaluations).
  const std::string bare = R"({"Metadata": {"TimeUnit": "Milliseconds"},
    "Results": [{"KernelName": "k", "Status": "Ok", "TotalDuration": 1.5, "TotalOverhead": 0.0,
                 "Configuration": [{"Name": "a", "ValueType": "Int", "Value": 1}], "ComputationResults": []}]})";
  const auto b = cutune::db::ktt::parse_ktt(bare, "bare.json");
  REQUIRE(b.entries.size() == 1);
  CHECK(b.entries[0].time_ms == 1.5);
  CHECK(!b.entries[0].compile_time_ms);
  CHECK(!b.entries[0].benchmark_time_ms);
  CHECK(!b.entries[0].verification_time_ms);
}

TEST_CASE("bad KTT results: one-line InputError naming the file and the field", "[kt_formats]") {
  const fs::path broken = cutune::testing::test_data_dir() / "ktt" / "broken_results.json";
  check_one_line(input_error([&] { cutune::db::ktt::read_ktt(broken); }), broken.string(), "Results[2].TotalDuration");
  check_one_line(input_error([&] { read_results_file(broken); }), broken.string(), "Results[2].TotalDuration");
  auto bad = [](const std::string& results, const std::string& unit = "Microseconds") {
    return input_error([&] {
      cutune::db::ktt::parse_ktt(R"({"Metadata": {"TimeUnit": ")" + unit + R"("}, "Results": )" + results + "}", "x.json");
    });
  };
  const std::string pair = R"([{"Name": "a", "ValueType": "Int", "Value": 1}])";
  check_one_line(bad("[]", "Fortnights"), "x.json", "Metadata.TimeUnit");
  check_one_line(bad("{}"), "x.json", "Results");
  check_one_line(bad(R"([{"KernelName": "k", "Status": "Broken", "TotalDuration": 1, "Configuration": )" + pair + "}]"),
                 "x.json", "Results[0].Status");
  check_one_line(bad(R"([{"KernelName": "k", "Status": "Ok", "TotalDuration": "1", "Configuration": )" + pair + "}]"),
                 "x.json", "Results[0].TotalDuration");
  check_one_line(bad(R"([{"KernelName": "k", "Status": "Ok", "TotalDuration": 1,
                          "Configuration": [{"Name": "a", "ValueType": "Int", "Value": 1.5}]}])"),
                 "x.json", "Results[0].Configuration[0].Value");
  check_one_line(bad(R"([{"Status": "Ok", "TotalDuration": 1, "Configuration": )" + pair + "}]"), "x.json",
                 "Results[0].KernelName");
  check_one_line(input_error([] { cutune::db::ktt::parse_ktt(R"({"Results": []})", "y.json"); }), "y.json", "Metadata");
}
