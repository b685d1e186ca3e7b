#!/usr/bin/env python3
"""studies/both_orders_table.py: per family, the mean of a strategy's declared and reversed scores
with the standard error of that mean, only for families and strategies scored in both orders,
Kernel Tuner's best judged from its `kt:` rows alone; bad input is one line with exit code 2 and
nothing written."""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))


def score_file(path, rows):
    """rows = {strategy: {family: (score, standard error)}}."""
    families = sorted({f for per in rows.values() for f in per})
    Path(path).write_text(json.dumps({
        "families": {f: [f"{f}_space"] for f in families},
        "strategies": [{"strategy": st, "runs": [40],
                        "per_family": {f: v for f, (v, _) in per.items()},
                        "sampling_error_per_family": {f: se for f, (_, se) in per.items()}}
                       for st, per in rows.items()]}))


def run(*args):
    return subprocess.run([sys.executable, "-m", "studies.both_orders_table", *args], capture_output=True, text=True,
                          env=STUDIES_ENV)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        score_file(t / "declared.json", {
            "bandit_portfolio": {"matmul": (0.3, 0.03), "scan": (0.6, 0.01), "only_declared": (0.5, 0.1)},
            "kt:diff_evo": {"matmul": (0.5, 0.04), "scan": (0.1, 0.02)},
            "kt:brute_force": {"matmul": (-1.0, None)},
            "surrogate_vnd": {"matmul": (0.9, 0.01)},  # cutune's: not Kernel Tuner's best
            "kt:declared_only": {"matmul": (2.0, 0.01)}})
        score_file(t / "reversed.json", {
            "bandit_portfolio": {"matmul": (0.28, 0.04), "scan": (0.58, 0.01)},
            "kt:diff_evo": {"matmul": (-1.4, 0.1), "scan": (0.2, 0.02)},
            "kt:brute_force": {"matmul": (0.9, None)},
            "surrogate_vnd": {"matmul": (0.8, 0.01)}})
        out = t / "both"
        r = run("--declared", str(t / "declared.json"), "--reversed", str(t / "reversed.json"), "--out", str(out))
        assert r.returncode == 0, r.stderr
        d = json.loads(out.with_suffix(".json").read_text())["families"]
        assert set(d) == {"matmul", "scan"}, d.keys()  # only_declared has no reversed scores
        m = d["matmul"]
        assert "kt:declared_only" not in m  # scored in one order only
        assert math.isclose(m["bandit_portfolio"]["both"], 0.29)
        assert math.isclose(m["bandit_portfolio"]["se"], math.sqrt(0.03 ** 2 + 0.04 ** 2) / 2)
        assert math.isclose(m["kt:diff_evo"]["both"], -0.45)
        assert m["kt:brute_force"]["se"] is None and math.isclose(m["kt:brute_force"]["both"], -0.05)
        md = out.with_suffix(".md").read_text()
        # matmul: Kernel Tuner's best as recorded is diff_evo, reversed brute_force, over both brute_force
        # (-0.05), and the default (0.29) is ahead over both though surrogate_vnd (cutune's) is higher.
        row = next(line for line in md.splitlines() if line.startswith("| matmul |"))
        assert "kt:diff_evo 0.500" in row and "kt:brute_force 0.900" in row and row.endswith("| yes |"), row
        row = next(line for line in md.splitlines() if line.startswith("| scan |"))
        assert "kt:diff_evo 0.150" in row and row.endswith("| yes |"), row

        # Bad input: a missing file, a file that is no score file: one line, exit 2, nothing written.
        (t / "bad.json").write_text(json.dumps({"spaces": []}))
        for args in (["--declared", str(t / "missing.json"), "--reversed", str(t / "reversed.json")],
                     ["--declared", str(t / "declared.json"), "--reversed", str(t / "bad.json")]):
            bad_out = t / "bad_out"
            r = run(*args, "--out", str(bad_out))
            assert r.returncode == 2, (args, r.returncode, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
            assert ("missing.json" in r.stderr) or ("bad.json" in r.stderr), r.stderr
            assert not bad_out.with_suffix(".json").exists() and not bad_out.with_suffix(".md").exists()
        # No family in both orders.
        score_file(t / "other.json", {"bandit_portfolio": {"nbody": (0.1, 0.01)}})
        r = run("--declared", str(t / "declared.json"), "--reversed", str(t / "other.json"), "--out", str(t / "x"))
        assert r.returncode == 2 and "no family" in r.stderr, r.stderr
        # An --out folder that does not exist is made; one under a file is one line, exit 2.
        r = run("--declared", str(t / "declared.json"), "--reversed", str(t / "reversed.json"),
                "--out", str(t / "new" / "folder" / "both"))
        assert r.returncode == 0 and (t / "new" / "folder" / "both.md").exists(), r.stderr
        (t / "a_file").write_text("")
        r = run("--declared", str(t / "declared.json"), "--reversed", str(t / "reversed.json"),
                "--out", str(t / "a_file" / "both"))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--out" in r.stderr, r.stderr
    print("ok")


if __name__ == "__main__":
    main()
