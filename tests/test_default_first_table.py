#!/usr/bin/env python3
"""studies/default_first_table.py: the default strategy scored as a tuning runs it beside the same
strategy alone, per space and family, the default configuration's rank from the recording
(cutune_default; none without it), Kernel Tuner's best family row without brute
force; bad input is one line with exit code 2 and nothing written. Also studies/recorded_default.py's
bad input."""
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))
METHOD = {"window": [0.5, 0.96], "points": 1000}


def recording(path, default=None):
    """x in 1..4, time 5 - x (x = 4 the optimum)."""
    doc = {"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3, 4]}}
    if default is not None:
        doc["cutune_default"] = {"x": default}
    doc["cache"] = {str(x): {"x": x, "time": 5.0 - x} for x in range(1, 5)}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)


def score_file(path, cells, default_first, spaces, repeats=200):
    doc = {"repeats": repeats, "seed": 1, "batch": 8, "compile_workers": 0, "methodology": METHOD,
           "spaces": [{"name": n, "file": f} for n, f in spaces],
           "strategies": [{"strategy": "bandit_portfolio", "source": "cutune", "per_space": cells,
                           "sampling_error": {n: 0.01 for n in cells}}]}
    if default_first is not None:
        doc["default_first"] = default_first
    Path(path).write_text(json.dumps(doc))


def run(script, *args):
    return subprocess.run([sys.executable, "-m", "studies." + script.removesuffix(".py"), *args],
                          capture_output=True, text=True, env=STUDIES_ENV)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        recording(t / "a.json.gz", default=4)  # the problem's default is the optimum
        recording(t / "b.json.gz")  # none: x = 1, the slowest
        spaces = [("a", str(t / "a.json.gz")), ("b", str(t / "b.json.gz"))]
        score_file(t / "first.json", {"a": 0.9, "b": 0.2}, True, spaces)
        score_file(t / "alone.json", {"a": 0.5, "b": 0.3}, None, spaces)  # older files have no field
        (t / "all.json").write_text(json.dumps({
            "families": {"fam": ["a", "b"]},
            "strategies": [
                {"strategy": "bandit_portfolio", "source": "cutune", "per_space": {"a": 0.5, "b": 0.3}},
                {"strategy": "kt:pso", "source": "Kernel Tuner", "per_space": {"a": 0.4, "b": 0.2}},
                {"strategy": "kt:brute_force", "source": "Kernel Tuner", "per_space": {"a": 1.0, "b": 1.0}}]}))
        out = t / "table"
        base = ["--first", str(t / "first.json"), "--alone", str(t / "alone.json"), "--all-spaces", str(t / "all.json"),
                "--out", str(out)]
        r = run("default_first_table.py", *base)
        assert r.returncode == 0, r.stderr
        d = json.loads(out.with_suffix(".json").read_text())
        assert math.isclose(d["overall"]["alone"], 0.4) and math.isclose(d["overall"]["first"], 0.55), d["overall"]
        fam = d["families"][0]
        assert fam["kernel_tuner_best"][0] == "kt:pso", fam  # brute force, which walks the listing, left out
        a, b = d["spaces"]
        assert a["default"]["key"] == "4" and a["default"]["rank"] == 1 and a["default"]["source"] == "cutune_default"
        assert b["default"]["key"] is None and "strategy's proposals first" in b["default"]["source"]  # names none
        assert "+0.150" in out.with_suffix(".md").read_text()

        # Bad input: the two files the wrong way round, other settings, a space the alone files lack.
        for args, words in (
                (["--first", str(t / "alone.json")] + base[2:], "default_first is not true"),
                (["--first", str(t / "first.json"), "--alone", str(t / "first.json")] + base[4:], "with the default first")):
            (t / "bad").mkdir(exist_ok=True)
            r = run("default_first_table.py", *args[:-1], str(t / "bad" / "x"))
            assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert not list((t / "bad").iterdir())
        score_file(t / "other.json", {"a": 0.5, "b": 0.3}, None, spaces, repeats=40)
        r = run("default_first_table.py", "--first", str(t / "first.json"), "--alone", str(t / "other.json"),
                "--all-spaces", str(t / "all.json"), "--out", str(t / "bad" / "x"))
        assert r.returncode == 2 and "other repeats" in r.stderr, r.stderr
        score_file(t / "partial.json", {"a": 0.5}, None, spaces[:1])
        r = run("default_first_table.py", "--first", str(t / "first.json"), "--alone", str(t / "partial.json"),
                "--all-spaces", str(t / "all.json"), "--out", str(t / "bad" / "x"))
        assert r.returncode == 2 and "no file scores the space b" in r.stderr, r.stderr

        # recorded_default.py: an unknown case, a file that is not a recording, a Kernel Tuner
        # script it cannot capture, or a cutune that does not run: one line, exit 2, the recording unchanged.
        before = (t / "b.json.gz").read_bytes()
        for case, file, words in (("no_such_case", "b.json.gz", "no_such_case"),
                                  ("transpose", "all.json", "not a .json.gz recording"),
                                  ("kt_reduction", "b.json.gz", "has no kernel_tuner_examples/reduction.py"),
                                  ("transpose", "b.json.gz", "--cutune /nonexistent/cutune: cannot run")):
            r = run("recorded_default.py", "--cutune", "/nonexistent/cutune", "--material", tmp, case, str(t / file))
            assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, (case, r.stderr)
        assert (t / "b.json.gz").read_bytes() == before
    print("ok")


if __name__ == "__main__":
    main()
