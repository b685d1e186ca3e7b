"""studies/pnpoly_problem.py: bad input gets one line and exit 2 and writes nothing; with numpy,
another point count writes its own file, the 20M one unchanged beside it."""
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))


def run(*args):
    return subprocess.run([sys.executable, "-m", "studies.pnpoly_problem", *args], capture_output=True, text=True,
                          env=STUDIES_ENV)


with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "out"
    for bad in (["0"], ["-5"], ["2e6"], ["3000000000"]):
        r = run(str(out), *bad)
        assert r.returncode == 2, (bad, r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1 and f"'{bad[0]}'" in r.stderr, (bad, r.stderr)
        assert "Traceback" not in r.stderr
        assert not out.exists(), bad
    r = run()
    assert r.returncode == 2 and r.stderr.startswith("usage: ") and r.stderr.count("\n") == 1, r.stderr
    if importlib.util.find_spec("numpy") is None:
        r = run(str(out), "2000000")
        assert r.returncode == 2 and "numpy" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    else:
        assert run(str(out)).returncode == 0 and run(str(out), "2000000").returncode == 0
        full = (out / "pnpoly-cutune.json").read_text()
        small = (out / "pnpoly-cutune-2000000.json").read_text()
        assert '"ProblemSize": 20000000' in full and '"ProblemSize": 2000000,' in small
        assert full.replace("40000000", "4000000").replace("20000000", "2000000") == small
print("ok")
