#!/usr/bin/env python3
"""studies/best_rank_by_evaluation.py: the median best rank reached after N evaluations, from
`cutune tune --simulate` traces and from random search, on a recorded space; a whole-space budget
ends at the optimum (rank 0) for both; bad input is one line with exit code 2.
Usage: test_best_rank_by_evaluation.py CUTUNE"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
# 78 valid configurations, no failures (results/spaces/README.md).
SPACE = ROOT / "results" / "spaces" / "transpose_nvidia_h100_80gb_hbm3.json.gz"


def run(cutune, *args):
    return subprocess.run([sys.executable, "-m", "studies.best_rank_by_evaluation", *args, "--cutune", cutune],
                          capture_output=True, text=True, env=STUDIES_ENV)


def rows(stdout):
    """{row name: [median rank at each column]} of the printed table."""
    out = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] not in ("after evaluations", "---"):
            out[cells[0]] = [float(c) for c in cells[1:]]
    return out


def main():
    cutune = sys.argv[1]
    r = run(cutune, str(SPACE), "--budget", "78", "--seeds", "3", "--strategy", "brute_force", "--at", "1,40")
    assert r.returncode == 0, r.stderr
    t = rows(r.stdout)
    assert set(t) == {"brute_force", "random search"}, r.stdout
    for name, ranks in t.items():
        assert len(ranks) == 3, (name, ranks)          # at 1, 40 and the budget
        assert ranks[-1] == 0, (name, ranks)            # the whole space: the optimum is among them
        assert ranks[0] >= ranks[1] >= ranks[2], (name, ranks)  # a best so far never gets worse
    assert "78 valid" in r.stdout, r.stdout

    with tempfile.TemporaryDirectory() as tmp:
        missing = Path(tmp) / "missing.json.gz"
        r = run(cutune, str(missing), "--budget", "10")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "missing.json.gz" in r.stderr, r.stderr
    r = run(cutune, str(SPACE), "--budget", "10", "--seeds", "1", "--strategy", "no_such_strategy")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no_such_strategy" in r.stderr, r.stderr
    print("ok")


if __name__ == "__main__":
    main()
