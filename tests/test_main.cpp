// The Catch2 main of every suite, with the test material's skip: a test case that asks for
// material which is not there (test_paths.hpp: material()) ends as skipped, not failed. Catch2
// 2 has no skip of its own, so the request throws, the listener below counts the test case as
// skipped, and a run whose only failures are such skips exits 77 (all skipped: CTest's
// SKIP_RETURN_CODE) or 0 (some passed), after one line saying what was missing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "test_paths.hpp"

namespace {

struct MaterialState {
  bool in_material_case = false;  // the running test case is tagged [material]
  int skips_in_case = 0;          // material requests that threw in the running test case
  int skipped = 0, passed = 0, failed = 0;
  std::string first_missing;
};
MaterialState& state() {
  static MaterialState s;
  return s;
}

struct MaterialMissing : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class MaterialListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    state().in_material_case = std::find(info.tags.begin(), info.tags.end(), "material") != info.tags.end();
    state().skips_in_case = 0;
  }
  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    MaterialState& s = state();
    const auto failed = static_cast<int>(stats.totals.assertions.failed);
    if (s.skips_in_case > 0 && failed <= s.skips_in_case) ++s.skipped;
    else if (failed > 0) ++s.failed;
    else ++s.passed;
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(MaterialListener)

std::filesystem::path cutune::testing::material(const std::string& relative) {
  const std::filesystem::path path = material_dir() / relative;
  if (!state().in_material_case)
    FAIL("this test case reads the test material (" << relative << ") but is not tagged [material]");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    ++state().skips_in_case;
    if (state().first_missing.empty()) state().first_missing = path.string();
    throw MaterialMissing("SKIPPED: no test material at " + path.string() +
                          " (set CUTUNE_TEST_MATERIAL, or fetch it: scripts/fetch_test_material.sh)");
  }
  return path;
}

int main(int argc, char* argv[]) {
  const int result = Catch::Session().run(argc, argv);
  const MaterialState& s = state();
  if (s.skipped == 0 || s.failed > 0) return result;
  std::cout << "SKIPPED: " << s.skipped << " test case(s) without their test material (first: " << s.first_missing
            << "; set CUTUNE_TEST_MATERIAL, or fetch it: scripts/fetch_test_material.sh)\n";
  return s.passed == 0 ? 77 : 0;
}
