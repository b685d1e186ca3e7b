#!/usr/bin/env python3
"""scripts/check_function_length.py measures functions as written (a long one is caught, with
its name and length; braces in comments, strings, initialisers and nested lambdas do not
fool it), and no function in tuner/cli is over 120 lines (the arguments after the script's
name are passed on: --except FILE)."""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_function_length.py"
sys.path.insert(0, str(SCRIPT.parent))
import check_function_length  # noqa: E402

SOURCE = '''#include <string>
// a comment with a brace {
namespace demo {
const int table[] = {1, 2,
                     3};
struct S {
  int f() const { return 1; }
  enum class E { a, b };
};
template <class T>
int g(T x) {
  const char* s = "}}}";
  char c = '{';
  auto l = [](int y) {
    return y;
  };
  /* } */
  return l(x) + c + s[0];
}
}  // namespace demo
std::string R_text() { return R"x(}{)x"; }
'''


def run(folder: Path, limit: int):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(folder), "--max", str(limit), "src"],
                          capture_output=True, text=True)


def main():
    found = check_function_length.functions(SOURCE)
    assert found == [("f", 7, 7), ("g", 10, 19), ("R_text", 21, 21)], found
    root = Path(tempfile.mkdtemp(prefix="cutune-length-"))
    (root / "src").mkdir()
    (root / "src" / "demo.cpp").write_text(SOURCE)
    long_enough = run(root, 10)
    assert long_enough.returncode == 0, long_enough.stdout
    too_long = run(root, 9)
    assert too_long.returncode == 1, too_long.stdout
    assert "src/demo.cpp:10: g is 10 lines (at most 9)" in too_long.stdout, too_long.stdout
    excepted = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--max", "9", "--except",
                               "src/demo.cpp", "src"], capture_output=True, text=True)
    assert excepted.returncode == 0, excepted.stdout
    real = subprocess.run([sys.executable, str(SCRIPT), "--max", "120", "tuner/cli"] + sys.argv[1:],
                          capture_output=True, text=True, cwd=ROOT)
    assert real.returncode == 0, "functions in tuner/cli over 120 lines:\n" + real.stdout
    print("ok")


if __name__ == "__main__":
    main()
