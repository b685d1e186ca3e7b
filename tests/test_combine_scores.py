#!/usr/bin/env python3
"""studies/combine_scores.py: a later file's scores of a space replace an earlier file's (scores,
runs, Kernel Tuner's error estimates), a row that not every file has is dropped, the means are over
spaces and families (bench_strategies.py's), and bad input is one line with exit code 2 and
nothing written."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The studies run as modules of the studies package, with the repository root importable.
STUDIES_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))


def space(tmp, name, kernel):
    cache = Path(tmp) / f"{name}.json"
    cache.write_text(json.dumps({"kernel_name": kernel}))
    return {"name": name, "file": str(cache), "configurations": 10, "valid": 9, "optimum": 1.0, "median": 2.0,
            "median_cost_s": 0.5, "window_s": [1.0, 9.0], "time_budget_s": 9.0, "evaluation_budget": 12}


def scores(path, tmp, batch, spaces, repeats, rows):
    """A bench_strategies.py OUT.json: rows = {strategy: ([score per space], runs, {space: error})}."""
    sps = [space(tmp, n, k) for n, k in spaces]
    names = [n for n, _ in spaces]
    Path(path).write_text(json.dumps({
        "date": "2026-11-25", "command": f"cutune score {path}", "bench_command": f"bench {path}",
        "methodology": {"window": [0.5, 0.96], "points": 1000, "curve": "isotonic"}, "repeats": repeats,
        "seed": 1, "batch": batch, "workers": 1, "compile_workers": 0, "spaces": sps,
        "kernel_tuner": {"version": "kernel_tuner 1.5.0", "repeats": 40, "runs": {}},
        "strategies": [{"strategy": st, "source": "trace" if st.startswith("kt:") else "cutune",
                        "per_space": dict(zip(names, v)), "per_space_failure_aware": dict(zip(names, v)),
                        "runs": [runs] * len(names), **({"sampling_error": se} if se else {})}
                       for st, (v, runs, se) in rows.items()]}))


def run(*args):
    return subprocess.run([sys.executable, "-m", "studies.combine_scores", *args], capture_output=True, text=True,
                          env=STUDIES_ENV)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        scores(t / "all.json", tmp, 8, [("conv_A", "conv"), ("scan_h100", "scan"), ("scan_h200", "scan")], 40,
               {"a": ([0.9, 0.0, 0.0], 40, None), "kt:b": ([0.5, 0.1, 0.1], 40, {"conv_A": 0.3, "scan_h100": 0.4}),
                "c": ([1.0, 1.0, 1.0], 40, None)})
        scores(t / "small.json", tmp, 8, [("scan_h100", "scan"), ("scan_h200", "scan")], 200,
               {"a": ([0.3, 0.1], 200, None), "kt:b": ([0.2, 0.2], 200, {"scan_h100": 0.1, "scan_h200": 0.1})})
        p = run("--scores", str(t / "all.json"), str(t / "small.json"), "--out", str(t / "out"))
        assert p.returncode == 0, p.stderr
        d = json.loads((t / "out.json").read_text())
        rows = {r["strategy"]: r for r in d["strategies"]}
        assert set(rows) == {"a", "kt:b"}, rows.keys()  # c: not in the second file
        assert [sp["name"] for sp in d["spaces"]] == ["conv_A", "scan_h100", "scan_h200"]
        assert rows["a"]["per_space"] == {"conv_A": 0.9, "scan_h100": 0.3, "scan_h200": 0.1}
        assert abs(rows["a"]["overall"] - (0.9 + 0.3 + 0.1) / 3) < 1e-12
        assert abs(rows["a"]["per_family"]["scan"] - 0.2) < 1e-12 and rows["a"]["per_family"]["conv"] == 0.9
        assert rows["a"]["runs"] == [40, 200, 200]
        assert rows["kt:b"]["sampling_error"] == {"conv_A": 0.3, "scan_h100": 0.1, "scan_h200": 0.1}
        assert abs(rows["kt:b"]["sampling_error_overall"] - (0.09 + 0.01 + 0.01) ** 0.5 / 3) < 1e-12
        assert [r["strategy"] for r in d["strategies"]] == ["a", "kt:b"]  # by overall, best first
        md = (t / "out.md").read_text()
        assert "| a | cutune | 40/200 | **0.433** | 0.900 | 0.200 |" in md, md
        assert "| kt:b | Kernel Tuner | 40/200 | **0.300** ±0.111 | 0.500 ±0.300 | 0.200 ±0.071 |" in md, md

        # --rows: a row scored again on every space replaces the combined one (runs, errors), others stay.
        scores(t / "again.json", tmp, 8, [("conv_A", "conv"), ("scan_h100", "scan"), ("scan_h200", "scan")], 10,
               {"kt:b": ([0.0, 0.6, 0.3], 10, {"scan_h100": 0.2}), "a": ([9.0, 9.0, 9.0], 10, None)})
        p = run("--scores", str(t / "all.json"), str(t / "small.json"), "--rows", str(t / "again.json"),
                "--row-names", "kt:b", "--out", str(t / "out2"))
        assert p.returncode == 0, p.stderr
        rows = {r["strategy"]: r for r in json.loads((t / "out2.json").read_text())["strategies"]}
        assert rows["kt:b"]["per_space"] == {"conv_A": 0.0, "scan_h100": 0.6, "scan_h200": 0.3}
        assert rows["kt:b"]["runs"] == [10, 10, 10] and rows["kt:b"]["sampling_error"] == {"scan_h100": 0.2}
        assert abs(rows["kt:b"]["per_family"]["scan"] - 0.45) < 1e-12 and abs(rows["kt:b"]["overall"] - 0.3) < 1e-12
        assert rows["a"]["per_space"]["conv_A"] == 0.9  # not named: the combined row stays
        assert json.loads((t / "out2.json").read_text())["repeats"] == "40/200"  # Kernel Tuner's row: cutune's runs stay
        # A cutune row scored again with 10 runs: the header's "cutune's rows have N runs" counts its
        # runs beside the other cutune row's (c, 40).
        p = run("--scores", str(t / "all.json"), "--rows", str(t / "again.json"), "--row-names", "a", "--out", str(t / "out2a"))
        assert p.returncode == 0, p.stderr
        assert json.loads((t / "out2a.json").read_text())["repeats"] == "10/40"
        assert "cutune's rows have 10/40 runs each" in (t / "out2a.md").read_text()
        # ... and on some spaces only: those of the row are replaced, with their runs and errors.
        scores(t / "conv.json", tmp, 8, [("conv_A", "conv")], 40, {"a": ([0.6], 40, {"conv_A": 0.05})})
        scores(t / "conv_plain.json", tmp, 8, [("conv_A", "conv")], 40, {"kt:b": ([0.7], 40, None)})
        p = run("--scores", str(t / "all.json"), str(t / "small.json"), "--rows", str(t / "conv.json"),
                "--row-names", "a", "--out", str(t / "out3"))
        assert p.returncode == 0, p.stderr
        rows = {r["strategy"]: r for r in json.loads((t / "out3.json").read_text())["strategies"]}
        assert rows["a"]["per_space"] == {"conv_A": 0.6, "scan_h100": 0.3, "scan_h200": 0.1}
        assert rows["a"]["runs"] == [40, 200, 200] and rows["a"]["sampling_error"] == {"conv_A": 0.05}
        assert abs(rows["a"]["overall"] - 1.0 / 3) < 1e-12 and rows["kt:b"]["per_space"]["conv_A"] == 0.5
        # Several --rows files, each with its names, in order.
        p = run("--scores", str(t / "all.json"), str(t / "small.json"), "--rows", str(t / "conv.json"),
                "--row-names", "a", "--rows", str(t / "again.json"), "--row-names", "kt:b", "--out", str(t / "out4"))
        assert p.returncode == 0, p.stderr
        rows = {r["strategy"]: r for r in json.loads((t / "out4.json").read_text())["strategies"]}
        assert rows["a"]["per_space"]["conv_A"] == 0.6 and rows["kt:b"]["per_space"]["conv_A"] == 0.0
        # A replaced cell without an error estimate loses the old one.
        p = run("--scores", str(t / "all.json"), "--rows", str(t / "conv_plain.json"), "--row-names", "kt:b",
                "--out", str(t / "out5"))
        assert p.returncode == 0, p.stderr
        rows = {r["strategy"]: r for r in json.loads((t / "out5.json").read_text())["strategies"]}
        assert rows["kt:b"]["sampling_error"] == {"scan_h100": 0.4}, rows["kt:b"]

        # A row the table lacks, scored on some of its spaces: kept, "-" elsewhere, no overall score, last.
        scores(t / "conv_new.json", tmp, 8, [("conv_A", "conv")], 40, {"new": ([0.6], 40, None)})
        later = json.loads((t / "conv_new.json").read_text())
        (t / "conv_new.json").write_text(json.dumps({**later, "date": "2026-11-26"}))
        p = run("--scores", str(t / "all.json"), "--rows", str(t / "conv_new.json"), "--row-names", "new",
                "--out", str(t / "out6"))
        assert p.returncode == 0, p.stderr
        assert json.loads((t / "out6.json").read_text())["date"] == "2026-11-26"  # its latest cells' date
        table = json.loads((t / "out6.json").read_text())["strategies"]
        assert table[-1]["strategy"] == "new" and table[-1]["overall"] is None, table[-1]
        assert table[-1]["per_space"]["conv_A"] == 0.6 and table[-1]["per_space"]["scan_h100"] is None

        # A score file whose space files are gone (made under /tmp on another day): the families it
        # recorded stand, instead of one family per space.
        with tempfile.TemporaryDirectory() as gone:
            scores(t / "gone.json", gone, 8, [("conv_A", "conv"), ("scan_h100", "scan"), ("scan_h200", "scan")], 40,
                   {"a": ([0.9, 0.2, 0.4], 40, None)})
            p = run("--scores", str(t / "gone.json"), "--out", str(t / "gone_families"))
            assert p.returncode == 0, p.stderr
        p = run("--scores", str(t / "gone_families.json"), "--out", str(t / "out7"))
        assert p.returncode == 0, p.stderr
        d = json.loads((t / "out7.json").read_text())
        assert d["families"] == {"conv": ["conv_A"], "scan": ["scan_h100", "scan_h200"]}, d["families"]
        assert abs(d["strategies"][0]["per_family"]["scan"] - 0.3) < 1e-12

        # Bad input: one line, exit 2, nothing written.
        scores(t / "b1.json", tmp, 1, [("scan_h100", "scan")], 200, {"a": ([0.3], 200, None)})
        (t / "broken.json").write_text("{")
        for bad, what in ((["--scores", str(t / "all.json"), str(t / "b1.json")], "batch 1"),
                          (["--scores", str(t / "broken.json")], "broken.json"),
                          (["--scores", str(t / "all.json"), "--out", str(t / "missing" / "x")], "--out"),
                          (["--scores", str(t / "small.json"), "--rows", str(t / "all.json"), "--row-names", "kt:b"],
                           "conv_A"),
                          (["--scores", str(t / "all.json"), "--rows", str(t / "conv.json"), "--row-names", "kt:z"],
                           "kt:z"),
                          (["--scores", str(t / "all.json"), "--rows", str(t / "again.json"), "--row-names", "kt:z"],
                           "kt:z"),
                          (["--scores", str(t / "all.json"), "--rows", str(t / "again.json")], "--row-names")):
            p = run(*bad, *([] if "--out" in bad else ["--out", str(t / "bad")]))
            assert p.returncode == 2, (bad, p.returncode, p.stderr)
            assert what in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
            assert not (t / "bad.json").exists() and not (t / "bad.md").exists()
    print("combine_scores: ok")


if __name__ == "__main__":
    main()
