#!/usr/bin/env python3
"""scripts/combine_scores.py: a later file's scores of a space replace an earlier file's, a row
that not every file has is dropped, the means are over spaces and families, and bad input is one
line with exit code 2 and nothing written."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "combine_scores.py"


def scores(path, batch, spaces, rows):
    """A cutune score --json file: rows = {strategy: ([score per space], runs)}."""
    Path(path).write_text(json.dumps({
        "command": f"cutune score {path}", "batch": batch, "spaces": [{"name": n} for n in spaces],
        "strategies": [{"strategy": st, "source": "cutune" if not st.startswith("kt:") else "trace",
                        "per_space": dict(zip(spaces, v)), "runs": [runs] * len(spaces)}
                       for st, (v, runs) in rows.items()]}))


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        scores(t / "all.json", 8, ["conv_A", "scan_h100", "scan_h200"],
               {"a": ([0.9, 0.0, 0.0], 40), "kt:b": ([0.5, 0.1, 0.1], 40), "c": ([1.0, 1.0, 1.0], 40)})
        scores(t / "small.json", 8, ["scan_h100", "scan_h200"], {"a": ([0.3, 0.1], 200), "kt:b": ([0.2, 0.2], 200)})
        p = run("--scores", str(t / "all.json"), str(t / "small.json"), "--out", str(t / "out"))
        assert p.returncode == 0, p.stderr
        d = json.loads((t / "out.json").read_text())
        rows = {r["strategy"]: r for r in d["strategies"]}
        assert set(rows) == {"a", "kt:b"}, rows.keys()  # c: not in the second file
        assert rows["a"]["per_space"] == {"conv_A": 0.9, "scan_h100": 0.3, "scan_h200": 0.1}
        assert abs(rows["a"]["overall"] - (0.9 + 0.3 + 0.1) / 3) < 1e-12
        assert abs(rows["a"]["per_family"]["scan"] - 0.2) < 1e-12 and rows["a"]["per_family"]["conv"] == 0.9
        assert rows["a"]["runs"] == {"conv_A": 40, "scan_h100": 200, "scan_h200": 200}
        assert [r["strategy"] for r in d["strategies"]] == ["a", "kt:b"]  # by overall, best first
        md = (t / "out.md").read_text()
        assert "| a | cutune | 40-200 | **0.433** |" in md and "| kt:b | Kernel Tuner |" in md, md

        # Bad input: one line, exit 2, nothing written.
        scores(t / "b1.json", 1, ["scan_h100"], {"a": ([0.3], 200)})
        (t / "broken.json").write_text("{")
        for bad, what in ((["--scores", str(t / "all.json"), str(t / "b1.json")], "batch 1"),
                          (["--scores", str(t / "broken.json")], "broken.json"),
                          (["--scores", str(t / "all.json"), "--out", str(t / "missing" / "x")], "--out")):
            p = run(*bad, *([] if "--out" in bad else ["--out", str(t / "bad")]))
            assert p.returncode == 2, (bad, p.returncode, p.stderr)
            assert what in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
            assert not (t / "bad.json").exists() and not (t / "bad.md").exists()
    print("combine_scores: ok")


if __name__ == "__main__":
    main()
