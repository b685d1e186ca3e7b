#!/usr/bin/env python3
"""Multi-GPU scaling of cutune on one node (for a device kind with several GPUs).

Runs, each into a fresh DB, with the cubin cache warmed first so that compiles do not
dominate:
  * brute force over KERNEL's whole space on 1, 2, 4 (, 8) GPUs (`--gpus 0,..,N-1`): wall
    time, the search loop's time (start-up excluded), speedup over 1 GPU and efficiency;
  * the same brute force as N MPI ranks, one GPU each (`mpirun --bind-to none -np N`): the MPI
    path's overhead against `--gpus` with N GPUs;
  * the default strategy with a fixed wall-time budget on 1 and N GPUs: best found, and the
    time each run took to reach the 1-GPU run's best (from the stored finish times).
Writes OUT/multigpu.json. Usage:
  scripts/bench_multigpu.py --bin .gpu/bin --out $OUT/multigpu --gpus 1,2 [--kernel matmul] [--time-budget 60]
Environment as for every GPU run (CUTUNE_SHARED_DIR, CUTUNE_TEMPLATE_DIR).
"""
import argparse
import datetime
import json
import os
import sqlite3
import subprocess
import sys


def tune(bin_dir, out, name, args, mpi_ranks=0):
    db = os.path.join(out, name + ".db")
    report = os.path.join(out, name + ".json")
    cmd = [os.path.join(bin_dir, "cutune"), "tune"] + args + ["--db", db, "--report", report]
    if mpi_ranks:
        cmd = ["mpirun", "--bind-to", "none", "--oversubscribe", "-np", str(mpi_ranks)] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with open(os.path.join(out, name + ".log"), "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    r = json.load(open(report)) if os.path.exists(report) else {}
    tb = r.get("time_breakdown", {})
    c = sqlite3.connect(db)
    rows = c.execute("SELECT count(*), count(DISTINCT config_key) FROM measurements").fetchone()
    return {"command": " ".join(cmd), "exit": rc, "wall_s": r.get("wall_s"),
            "search_s": (tb.get("search_ms") or 0) / 1e3, "startup_s": tb.get("startup_s"),
            "rows": rows[0], "distinct": rows[1], "integrity_check": c.execute("PRAGMA integrity_check").fetchone()[0],
            "winner_ms": r.get("winner_ms"), "workers": r.get("workers", []), "db": db}


def time_to(db, target_ms):
    """Seconds from the run's first stored result to the first one at or below target_ms."""
    c = sqlite3.connect(db)
    rows = c.execute("SELECT finished_at, median_ms FROM measurements WHERE status='ok' ORDER BY finished_at").fetchall()
    if not rows:
        return None
    t0 = datetime.datetime.fromisoformat(rows[0][0].replace("Z", "+00:00"))
    for t, ms in rows:
        if ms <= target_ms * (1 + 1e-9):
            return (datetime.datetime.fromisoformat(t.replace("Z", "+00:00")) - t0).total_seconds()
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpus", default="1,2", help="GPU counts, e.g. 1,2,4,8")
    ap.add_argument("--kernel", default="matmul")
    ap.add_argument("--time-budget", type=float, default=60.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    counts = [int(n) for n in a.gpus.split(",")]
    subprocess.run([os.path.join(a.bin, "cutune"), "compile", a.kernel, "--all", "--quiet"], check=True)
    result = {"kernel": a.kernel, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "brute_force": {}, "mpi": {}, "strategy": {}}
    for n in counts:
        gpus = ",".join(str(i) for i in range(n))
        result["brute_force"][n] = tune(a.bin, a.out, f"brute_{n}", [a.kernel, "--strategy", "brute_force",
                                                                     "--gpus", gpus])
        if n > 1:
            result["mpi"][n] = tune(a.bin, a.out, f"mpi_{n}", [a.kernel, "--strategy", "brute_force"], mpi_ranks=n)
        result["strategy"][n] = tune(a.bin, a.out, f"default_{n}", [a.kernel, "--gpus", gpus, "--time-budget",
                                                                     str(a.time_budget), "--finalists", "0"])
    one = result["brute_force"][counts[0]]
    for n, r in result["brute_force"].items():
        r["search_speedup"] = one["search_s"] / r["search_s"] if r["search_s"] else None
        r["search_efficiency"] = r["search_speedup"] / n if r["search_speedup"] else None
        r["wall_speedup"] = one["wall_s"] / r["wall_s"] if r["wall_s"] else None
    for n, r in result["mpi"].items():
        r["overhead_vs_gpus"] = r["wall_s"] / result["brute_force"][n]["wall_s"] - 1
    base = result["strategy"][counts[0]]
    for n, r in result["strategy"].items():
        r["time_to_1gpu_best_s"] = time_to(r["db"], base["winner_ms"]) if base.get("winner_ms") else None
    json.dump(result, open(os.path.join(a.out, "multigpu.json"), "w"), indent=1)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
