"""The tests of the Python package need numpy (the package's Kernel Tuner interface imports it).
`ensure()` re-runs the calling test with a Python that has it when this one has none (the Kernel
Tuner venv scripts/kt_venv.sh makes, else the system's), exits 77 (CTest's skip) when none has,
and puts the repository's python/ first on sys.path so `import cutune` is this checkout's."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONS = [os.path.join(REPO, "build", "kt-venv", "bin", "python"), "/usr/bin/python3"]


def ensure():
    try:
        import numpy  # noqa: F401
    except ImportError:
        if not os.environ.get("CUTUNE_TEST_REEXEC"):
            for py in PYTHONS:
                if os.access(py, os.X_OK) and subprocess.run([py, "-c", "import numpy"],
                                                             stderr=subprocess.DEVNULL).returncode == 0:
                    os.environ["CUTUNE_TEST_REEXEC"] = "1"
                    os.execv(py, [py] + sys.argv)
        print("SKIPPED: no Python with numpy")
        sys.exit(77)
    sys.path.insert(0, os.path.join(REPO, "python"))
