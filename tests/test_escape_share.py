#!/usr/bin/env python3
"""studies/escape_share.py: the share of runs whose best came within --within of the recorded
optimum by each --by count, from the traces of the `cutune` it is given (here a stand-in that
writes a trace per seed); bad input is one line with exit code 2."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))

# Seed 1 reaches the optimum at its 2nd evaluation, seed 2 at its 4th, seed 3 never (it stays at
# 1.5, 50% above); invalid results never count.
FAKE_CUTUNE = r'''#!/usr/bin/env python3
import json, sys
a = sys.argv
seed = int(a[a.index("--seed") + 1])
runs = {1: [2.0, 1.0, 1.5], 2: [None, 2.0, 1.5, 1.04, 1.0], 3: [2.0, 1.5, 1.5, 1.5, 1.5]}
# With --compile-workers (the loop's pipeline) every run reaches the optimum first.
if "--compile-workers" in a:
    runs = {s: [1.0] for s in runs}
trace = [{"key": str(i), "valid": v is not None, "objective": v} for i, v in enumerate(runs[seed])]
open(a[a.index("--trace") + 1], "w").write(json.dumps({"trace": trace}))
'''


def run(*args):
    return subprocess.run([sys.executable, "-m", "studies.escape_share", *args], capture_output=True, text=True,
                          env=STUDIES_ENV)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        space = t / "space.json.gz"
        with gzip.open(space, "wt") as f:
            json.dump({"cache": {"a": {"time": 1.0}, "b": {"time": 2.0}, "c": {"time": "InvalidConfig"}}}, f)
        fake = t / "cutune"
        fake.write_text(FAKE_CUTUNE)
        fake.chmod(0o755)
        out = t / "share.json"
        r = run("--cutune", str(fake), "--space", str(space), "--budget", "5", "--seeds", "3",
                "--within", "0.05", "--by", "1,2,4,5", "--out", str(out))
        assert r.returncode == 0, r.stderr
        d = json.loads(out.read_text())
        assert d["first_within"] == [2, 4, None], d["first_within"]
        assert d["share_within_by"] == {"1": 0.0, "2": 1 / 3, "4": 2 / 3, "5": 2 / 3}, d["share_within_by"]
        assert abs(d["target_ms"] - 1.05) < 1e-12
        assert d["compile_workers"] is None

        r = run("--cutune", str(fake), "--space", str(space), "--budget", "5", "--seeds", "3",
                "--compile-workers", "12", "--by", "1", "--out", str(out))
        assert r.returncode == 0, r.stderr
        d = json.loads(out.read_text())
        assert d["compile_workers"] == 12 and d["share_within_by"] == {"1": 1.0}, d

        for args, needle in [(["--space", str(t / "missing.json")], "--space"),
                             (["--space", str(space), "--by", "1,x"], "--by"),
                             (["--space", str(space), "--seeds", "0"], "--seeds"),
                             (["--space", str(space), "--compile-workers", "0"], "--compile-workers")]:
            bad = run("--cutune", str(fake), "--budget", "5", "--out", str(t / "bad.json"), *args)
            assert bad.returncode == 2, (args, bad.returncode, bad.stderr)
            assert len(bad.stderr.strip().splitlines()) == 1 and needle in bad.stderr, bad.stderr
            assert not (t / "bad.json").exists()

        # Real tunings: each measured configuration judged by its recorded time (a: 1.0 the
        # optimum); only the runs named by --runs; a failed measurement never counts.
        dump = t / "runs.txt.gz"
        with gzip.open(dump, "wt") as f:
            f.write("run big.1: 3 evaluations\n  b ok 2.1\n  a ok 1.02\n  b ok 2.0\n"
                    "run big.2: 2 evaluations\n  a runtime 0\n  b ok 2.0\n"
                    "run small.1: 1 evaluations\n  a ok 1.0\n")
        r = run("--measured", str(dump), "--runs", "big.", "--space", str(space), "--by", "1,2", "--out", str(out))
        assert r.returncode == 0, r.stderr
        d = json.loads(out.read_text())
        assert d["first_within"] == [2, None] and d["share_within_by"] == {"1": 0.0, "2": 0.5}, d
        assert d["seeds"] == 2 and d["budget"] is None
        (t / "broken.txt").write_text("run big.1: 1 evaluations\n  a ok\n")
        for args, needle in [(["--measured", str(t / "broken.txt")], "expected KEY STATUS MS"),
                             (["--measured", str(dump), "--runs", "none."], "no run named none."),
                             ([], "give --cutune")]:
            bad = run("--space", str(space), "--out", str(t / "bad.json"), *args)
            assert bad.returncode == 2 and needle in bad.stderr, (args, bad.stderr)
            assert len(bad.stderr.strip().splitlines()) == 1 and not (t / "bad.json").exists()
    print("escape_share.py: ok")


if __name__ == "__main__":
    main()
