#!/usr/bin/env python3
"""scripts/setup.sh on a "fresh machine" made of stand-ins (dpkg-query, apt-get, cmake, nvcc
on PATH): it shows apt's, CMake's and the build's progress instead of minutes of silence,
and stops when a package did not install. README.md lists every package it installs and
says that the tests fetch Kernel Tuner from PyPI."""
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "scripts" / "setup.sh"

STUBS = {
    # Every package is installed but zlib1g-dev, until apt-get has "installed" it.
    "dpkg-query": """#!/bin/sh
pkg=$(eval echo \\${$#})
if [ "$pkg" = zlib1g-dev ] && [ ! -e "$STATE/installed" ]; then exit 1; fi
printf 'install ok installed'
""",
    "apt-get": """#!/bin/sh
case "$*" in
  *update*) echo "Hit:1 http://deb.debian.org/debian bookworm InRelease"; echo "Reading package lists...";;
  *install*) echo "Reading package lists..."; echo "Unpacking zlib1g-dev (1:1.2.13)";
             echo "Setting up zlib1g-dev (1:1.2.13)"; [ "$FAIL_INSTALL" = 1 ] || touch "$STATE/installed";;
esac
""",
    "cmake": """#!/bin/sh
case "$*" in
  *--build*) echo "[1/2] Building CXX object model/src/space.cpp.o"; echo "[2/2] Linking CXX executable cutune";;
  *) echo "CMAKE_CONFIGURE $*";;
esac
""",
    "nvcc": "#!/bin/sh\nexit 0\n",
    "sudo": '#!/bin/sh\nexec "$@"\n',
    # A python3 that has numpy: the capture's venv is not made (tests/test_capture_python.py
    # covers it).
    "python3": "#!/bin/sh\nexit 0\n",
}


def run_setup(fail_install: bool):
    state = Path(tempfile.mkdtemp(prefix="cutune-setup-"))
    bin_dir = state / "bin"
    bin_dir.mkdir()
    for name, text in STUBS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STATE=str(state),
               FAIL_INSTALL="1" if fail_install else "0")
    return subprocess.run(["bash", str(SETUP)], env=env, capture_output=True, text=True, timeout=60)


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    return cond


def main():
    good = True
    r = run_setup(fail_install=False)
    out = r.stdout + r.stderr
    good &= check(r.returncode == 0, f"setup.sh with stand-ins succeeds (exit {r.returncode}):\n{out}")
    for line in ["setup: installing 1 Debian packages: zlib1g-dev", "setup: apt-get update", "Hit:1 ",
                 "Setting up zlib1g-dev", "setup: configuring build/", "CMAKE_CONFIGURE", "setup: building",
                 "[2/2] Linking"]:
        good &= check(line in out, f"it shows {line!r}")
    good &= check("Reading package lists" not in out, "apt's noise is cut to one line per package")
    good &= check("--log-level=NOTICE" in out, "CMake prints its warnings, not its 40 status lines")

    r = run_setup(fail_install=True)
    good &= check(r.returncode != 0 and "zlib1g-dev did not install" in r.stderr,
                  f"a package that did not install stops it, naming the package: {r.stderr.strip()}")

    # README lists what setup.sh installs.
    text = SETUP.read_text()
    packages, inside = [], False
    for line in text.splitlines():
        code = line.split("#")[0]
        if code.startswith("packages=("):
            inside, code = True, code[len("packages=("):]
        if inside:
            packages += code.replace(")", " ").split()
            inside = ")" not in code
    good &= check("python3-numpy" in packages and "cmake" in packages, f"setup.sh's packages read: {packages}")
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"`scripts/setup.sh`: (.*?)\)", readme, re.S).group(1)
    listed = {p.strip() for p in listed.replace("\n", " ").split(",")}
    for p in packages:
        good &= check(p in listed, f"README's package list names {p}")
    good &= check("PyPI" in readme and "SKIPPED" in readme, "README says the tests fetch Kernel Tuner from PyPI "
                                                          "and skip visibly without it")
    kt_venv = (ROOT / "scripts" / "kt_venv.sh").read_text()
    good &= check("pip install --quiet" not in kt_venv and "installing" in kt_venv, "kt_venv.sh shows pip's progress")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
