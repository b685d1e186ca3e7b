#!/usr/bin/env python3
"""studies/kt_listing_order.py: per space and strategy, in both listing orders, the share of early
evaluations among the best configurations, how many distinct configurations they are, and when a
run first reaches the best; only spaces with runs in both orders; bad input is one line with exit
code 2 and nothing written. With a cutune binary (argv[1]): --cutune adds cutune's runs, as
many as Kernel Tuner's, with their budgets, on a committed space and its reversed twin."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
# 78 valid configurations, no failures (results/spaces/README.md).
TRANSPOSE = ROOT / "results" / "spaces" / "transpose_nvidia_h100_80gb_hbm3.json.gz"


def space(path, n):
    """n configurations "i", time i + 1: configuration "0" is the optimum; "x" failed."""
    cache = {str(i): {"time": float(i + 1)} for i in range(n)}
    cache["x"] = {"time": 1e20}
    with gzip.open(path, "wt") as f:
        json.dump({"cache": cache}, f)


def run(*args):
    return subprocess.run([sys.executable, "-m", "studies.kt_listing_order", *args], capture_output=True, text=True,
                          env=STUDIES_ENV)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        space(t / "s.json.gz", 100)
        space(t / "s_reversed.json.gz", 100)
        space(t / "alone.json.gz", 100)
        runs_declared = [["50", "0", "1", "2"], ["60", "1", "70", "x"]]  # early: 0,1,2 | 1,70,x
        runs_reversed = [["50", "80", "81", "3"], ["60", "90", "91", "92"]]
        (t / "traces.json").write_text(json.dumps({"traces": [
            {"space": "s", "strategy": "kt:diff_evo", "runs": runs_declared},
            {"space": "s_reversed", "strategy": "kt:diff_evo", "runs": runs_reversed},
            {"space": "alone", "strategy": "kt:diff_evo", "runs": runs_declared}]}))
        out = t / "lo"
        r = run("--traces", str(t / "traces.json"), "--spaces", str(t / "s.json.gz"), str(t / "s_reversed.json.gz"),
                str(t / "alone.json.gz"), "--first", "3", "--top", "0.02", "--out", str(out))
        assert r.returncode == 0, r.stderr
        rows = json.loads(out.with_suffix(".json").read_text())["rows"]
        assert [(row["space"], row["strategy"]) for row in rows] == [("s", "kt:diff_evo")], rows  # alone: one order
        d, rv = rows[0]["declared"], rows[0]["reversed"]
        # The best 2% of 100 valid: "0" and "1". Early = evaluations 2..4 of each run.
        assert d["top"] == round(3 / 6, 3) and d["distinct"] == 5 and d["early_evaluations"] == 6, d
        assert d["reached"] == 1.0 and d["median_first_top"] == 2, d  # both runs at their 2nd evaluation
        assert rv["top"] == 0.0 and rv["reached"] == 0.0 and rv["median_first_top"] is None, rv
        md = out.with_suffix(".md").read_text()
        assert "| s | kt:diff_evo | 0.500 | 5 of 6 | 1.00 at 2 | 0.000 | 6 of 6 | 0.00 at - |" in md, md

        # Bad input: a missing space, and traces with no space in both orders.
        bad = t / "bad"
        r = run("--traces", str(t / "traces.json"), "--spaces", str(t / "missing.json.gz"), "--out", str(bad))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "missing.json.gz" in r.stderr, r.stderr
        r = run("--traces", str(t / "traces.json"), "--spaces", str(t / "alone.json.gz"), "--out", str(bad))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        (t / "garbled.json").write_text("{not json")
        r = run("--traces", str(t / "garbled.json"), "--spaces", str(t / "s.json.gz"), "--out", str(bad))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "garbled.json" in r.stderr, r.stderr
        r = run("--traces", str(t / "traces.json"), "--spaces", str(t / "garbled.json"), "--out", str(bad))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "garbled.json" in r.stderr, r.stderr
        assert not bad.with_suffix(".json").exists() and not bad.with_suffix(".md").exists()
        if len(sys.argv) > 1:
            cutune_rows(sys.argv[1], t)
    print("ok")


def cutune_rows(cutune, t):
    declared = t / "transpose_nvidia_h100_80gb_hbm3.json.gz"
    declared.write_bytes(TRANSPOSE.read_bytes())
    reversed_ = t / "transpose_nvidia_h100_80gb_hbm3_reversed.json.gz"
    r = subprocess.run([sys.executable, "-m", "studies.reverse_space_values", str(declared), str(reversed_)],
                       capture_output=True, text=True, env=STUDIES_ENV)
    assert r.returncode == 0, r.stderr
    stats = [{"time_limit_s": 1e9, "max_fevals": 12}] * 3
    kt_run = ["2,32,32,8"] * 1  # any recorded key
    (t / "kt.json").write_text(json.dumps({"traces": [
        {"space": "transpose_nvidia_h100_80gb_hbm3", "strategy": "kt:random_sample", "runs": [kt_run] * 3, "stats": stats},
        {"space": "transpose_nvidia_h100_80gb_hbm3_reversed", "strategy": "kt:random_sample", "runs": [kt_run] * 3,
         "stats": stats}]}))
    out = t / "with_cutune"
    r = run("--traces", str(t / "kt.json"), "--spaces", str(declared), str(reversed_), "--cutune", cutune,
            "--cutune-strategy", "random", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = {row["strategy"]: row for row in json.loads(out.with_suffix(".json").read_text())["rows"]}
    assert set(rows) == {"kt:random_sample", "cutune:random"}, rows.keys()
    for order in ("declared", "reversed"):
        c = rows["cutune:random"][order]
        # 3 runs (as many as Kernel Tuner's), each of 12 evaluations (its max_fevals): 10 early ones each.
        assert c["runs"] == 3 and c["early_evaluations"] == 30, c
    r = run("--traces", str(t / "kt.json"), "--spaces", str(declared), str(reversed_), "--cutune", cutune,
            "--cutune-strategy", "no_such_strategy", "--out", str(t / "bad_cutune"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no_such_strategy" in r.stderr, r.stderr
    assert not (t / "bad_cutune.json").exists()


if __name__ == "__main__":
    main()
