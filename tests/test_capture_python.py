"""scripts/cutune-capture with the Python a user has, here a python3 first on PATH that cannot
import numpy (as a pyenv interpreter without it):

1. with no other Python that has numpy, it exits 2 with one line naming `--setup-venv`;
2. `--setup-venv` makes a venv with numpy (from a Python that has it, nothing downloaded), and
   the capture then runs a Kernel Tuner script with it, writing its T1 file.
Part 2 needs some Python with numpy on this machine (Debian's python3-numpy, which
scripts/setup.sh installs); without one it is skipped (exit 77) after part 1 passed.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "scripts" / "cutune-capture"
SCRIPT = '''import numpy
from kernel_tuner import tune_kernel
src = "__global__ void add(float *c, float *a, int n) { int i = blockIdx.x * block_size_x + threadIdx.x; if (i < n) c[i] += a[i]; }"
a = numpy.ones(1000, dtype=numpy.float32)
tune_kernel("add", src, 1000, [numpy.zeros_like(a), a, numpy.int32(1000)], {"block_size_x": [32, 64]})
'''


def python_with_numpy():
    for p in [sys.executable, "/usr/bin/python3"]:
        if p and os.path.exists(p) and subprocess.run([p, "-c", "import numpy"], capture_output=True).returncode == 0:
            return p
    return None


def main():
    good = True
    tmp = Path(tempfile.mkdtemp(prefix="cutune_capture_python_"))
    # python3 first on PATH: a real interpreter whose numpy import fails.
    blocker = tmp / "blocker"
    (blocker / "numpy").mkdir(parents=True)
    (blocker / "numpy" / "__init__.py").write_text("raise ImportError('no numpy in this interpreter')\n")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nPYTHONPATH={blocker}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    work = tmp / "work"
    work.mkdir()
    (work / "add.py").write_text(SCRIPT)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", CUTUNE_CAPTURE_VENV=str(tmp / "venv"),
               CUTUNE_CAPTURE_SYSTEM_PYTHON=str(tmp / "no-such-python"))
    env.pop("CUTUNE_CAPTURE_PYTHON", None)

    r = subprocess.run([str(CAPTURE), "--out", "out", "add.py"], cwd=work, env=env, capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    good &= r.returncode == 2 and len(lines) == 1 and "--setup-venv" in lines[0] and "numpy" in lines[0]
    print(("ok" if good else "FAILED") + f": no Python with numpy: exit {r.returncode}, {r.stderr.strip()!r}")

    system = python_with_numpy()
    if system is None:
        print("SKIPPED: no Python with numpy on this machine for --setup-venv (install python3-numpy)")
        return 77 if good else 1
    env["CUTUNE_CAPTURE_SYSTEM_PYTHON"] = system
    r = subprocess.run([str(CAPTURE), "--setup-venv"], cwd=work, env=env, capture_output=True, text=True)
    ok = r.returncode == 0 and (tmp / "venv" / "bin" / "python").exists()
    print(("ok" if ok else "FAILED") + f": --setup-venv from {system}: {r.stdout.strip()} {r.stderr.strip()}")
    good &= ok
    env["CUTUNE_CAPTURE_SYSTEM_PYTHON"] = str(tmp / "no-such-python")  # the venv alone now
    r = subprocess.run([str(CAPTURE), "--out", "out", "add.py"], cwd=work, env=env, capture_output=True, text=True)
    ok = r.returncode == 0 and (work / "out" / "add_1_add.json").exists()
    print(("ok" if ok else "FAILED") + f": the capture runs with the venv: exit {r.returncode} {r.stderr.strip()[-500:]}")
    good &= ok
    subprocess.run(["rm", "-rf", str(tmp)])
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
