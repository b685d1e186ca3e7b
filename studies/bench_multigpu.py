#!/usr/bin/env python3
"""Multi-GPU scaling of cutune on one node (for a device kind with several GPUs).

Parts (--parts), each run into fresh DBs, after a warm-up that fills the cubin cache so that
compiles do not dominate (the tuner's compile pool is the same whatever the GPU count):
  * scaling: for each case, brute force on 1, 2, 4 (, 8) GPUs (`--gpus 0,..,N-1`): wall time,
    the search loop's time (start-up excluded), speedup over 1 GPU and efficiency; the same
    brute force as N MPI ranks, one GPU each (`mpirun --bind-to none -np N`): the MPI path's
    overhead against `--gpus` with N GPUs;
  * strategy: the default strategy with a fixed wall-time budget on each GPU count, seeds 1..S:
    best found, and the time each run took to come within --tolerance of the best the 1-GPU run
    of its seed found (from the stored finish times; the target is at most 1.2/N of 1 GPU's);
  * faults: a brute force on all GPUs with one GPU worker killed (SIGKILL) mid-run, and one as
    MPI ranks with one rank killed mid-run and the same command run again with --resume: each
    run completes, `PRAGMA integrity_check` is ok, every configuration is stored once.
Cases (--cases): matmul (the built-in template's whole space, 842), md5hash (BAT's MD5Hash, a
real kernel's file, brute force over the first --md5-budget of its 165,888), reduction (the
396-configuration throughput space, where start-up dominates), nbody (BAT's nbody, 1568, whose
evaluations take about 0.1 s: the strategy part's case).
Writes OUT/multigpu.json after every run. Usage (on the GPU machine, after scripts/stage_gpu.sh):
  python3 -m studies.bench_multigpu --bin .gpu/bin --out $OUT/multigpu --gpus 1,2,4 [--cases matmul,md5hash]
      [--parts scaling,strategy,faults] [--time-budget 30] [--seeds 3] [--material .material]
Environment as for every GPU run (CUTUNE_TEMPLATE_DIR).
"""
import argparse
import datetime
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def cases(material, md5_budget):
    """name -> (the tune KERNEL argument, extra tune arguments)."""
    return {
        "matmul": ("matmul", []),
        "md5hash": (os.path.join(material, "bat", "MD5Hash", "MD5Hash-CAFF.json"), ["--budget", str(md5_budget)]),
        "reduction": (os.path.join(REPO, "bench", "throughput", "reduction_single.json"), ["--problem", "n=2**26"]),
        "nbody": (os.path.join(material, "bat", "nbody", "nbody-CAFF.json"), []),
    }


def command(bin_dir, out, name, args, mpi_ranks=0):
    db = os.path.join(out, name + ".db")
    report = os.path.join(out, name + ".json")
    cmd = [os.path.join(bin_dir, "cutune"), "tune"] + args + ["--db", db, "--report", report]
    if mpi_ranks:
        cmd = ["mpirun", "--bind-to", "none", "--oversubscribe", "-np", str(mpi_ranks)] + cmd
    return cmd, db, report


def summarise(cmd, rc, wall, db, report):
    r = json.load(open(report)) if os.path.exists(report) else {}
    tb = r.get("time_breakdown", {})
    out = {"command": " ".join(cmd), "exit": rc, "process_wall_s": round(wall, 3), "wall_s": r.get("wall_s"),
           "search_s": (tb.get("search_ms") or 0) / 1e3, "startup_s": tb.get("startup_s"),
           "winner_ms": r.get("winner_ms"), "winner_key": r.get("winner_key"),
           "workers": [{k: w.get(k) for k in ("name", "evaluations", "evaluate_ms", "idle_ms", "restarts", "lost")}
                       for w in r.get("workers", [])], "db": db}
    if os.path.exists(db):
        c = sqlite3.connect(db)
        rows = c.execute("SELECT count(*), count(DISTINCT config_key) FROM measurements").fetchone()
        out.update(rows=rows[0], distinct=rows[1], integrity_check=c.execute("PRAGMA integrity_check").fetchone()[0],
                   statuses=dict(c.execute("SELECT status, count(*) FROM measurements GROUP BY status").fetchall()))
    return out


def tune(bin_dir, out, name, args, mpi_ranks=0, timeout=540):
    cmd, db, report = command(bin_dir, out, name, args, mpi_ranks)
    t0 = time.monotonic()
    with open(os.path.join(out, name + ".log"), "w") as log:
        try:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, **MPI_ENV),
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    res = summarise(cmd, rc, time.monotonic() - t0, db, report)
    print(f"{name}: exit {rc}, wall {res['wall_s']} s, search {res['search_s']:.2f} s, rows {res.get('rows')}", flush=True)
    return res


def descendants(pid):
    """Every process below pid (from /proc), with its command line and environment."""
    children = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(p))
        except (OSError, IndexError, ValueError):
            pass
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    info = []
    for p in found:
        try:
            cmdline = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
            env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        info.append((p, [a.decode(errors="replace") for a in cmdline if a],
                     dict(e.decode(errors="replace").split("=", 1) for e in env if b"=" in e)))
    return info


def killed_run(bin_dir, out, name, args, pick, after_rows, mpi_ranks=0, timeout=400):
    """Starts the run, waits until the DB holds after_rows results, SIGKILLs the process pick()
    chooses among the run's descendants, and waits for the run to end."""
    cmd, db, report = command(bin_dir, out, name, args, mpi_ranks)
    t0 = time.monotonic()
    victim = None
    with open(os.path.join(out, name + ".log"), "w") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, **MPI_ENV))
        while p.poll() is None and time.monotonic() - t0 < timeout:
            time.sleep(0.2)
            if victim is None and os.path.exists(db):
                try:
                    n = sqlite3.connect(db, timeout=1).execute("SELECT count(*) FROM measurements").fetchone()[0]
                except sqlite3.Error:
                    continue
                if n >= after_rows:
                    chosen = pick(descendants(p.pid))
                    if chosen:
                        os.kill(chosen[0], signal.SIGKILL)
                        victim = {"pid": chosen[0], "command": " ".join(chosen[1]), "rows_stored_then": n,
                                  "after_s": round(time.monotonic() - t0, 2)}
                        print(f"{name}: killed {victim}", flush=True)
        if p.poll() is None:
            p.kill()
        rc = p.wait()
    res = summarise(cmd, rc, time.monotonic() - t0, db, report)
    res["killed"] = victim
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpus", default="1,2", help="GPU counts, e.g. 1,2,4,8")
    ap.add_argument("--cases", default="matmul")
    ap.add_argument("--parts", default="scaling,strategy")
    ap.add_argument("--mpi", default="", help="GPU counts to run as MPI ranks too (default: every count above 1)")
    ap.add_argument("--time-budget", type=float, default=30.0)
    ap.add_argument("--seeds", type=int, default=1, help="strategy runs per GPU count (seeds 1..S)")
    ap.add_argument("--tolerance", type=float, default=0.01, help="time to quality: within this of the 1-GPU best")
    ap.add_argument("--md5-budget", type=int, default=5000)
    ap.add_argument("--material", default=os.path.join(REPO, ".material"))
    ap.add_argument("--compile-workers", type=int, default=0, help="for the warm-up (0: one per core)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    counts = [int(n) for n in a.gpus.split(",")]
    mpi_counts = [int(n) for n in a.mpi.split(",") if n] if a.mpi else [n for n in counts if n > 1]
    parts = a.parts.split(",")
    workers = a.compile_workers or os.cpu_count()
    doc_path = os.path.join(a.out, "multigpu.json")
    doc = json.load(open(doc_path)) if os.path.exists(doc_path) else {}
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,pci.bus_id,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()
    doc.setdefault("runs", []).append({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                       "gpus": smi, "cpus": os.cpu_count(), "argv": sys.argv[1:]})
    save = lambda: json.dump(doc, open(doc_path, "w"), indent=1)
    all_gpus = ",".join(str(i) for i in range(max(counts)))
    for case in a.cases.split(","):
        kernel, extra = cases(a.material, a.md5_budget)[case]
        d = doc.setdefault(case, {"kernel": kernel, "args": extra})
        # Warm-up: fills the cubin cache (every compile worker the machine has), result discarded.
        d["warm_up"] = tune(a.bin, a.out, f"{case}_warm_up", [kernel, *extra, "--strategy", "brute_force", "--gpus",
                            all_gpus, "--compile-workers", str(workers), "--finalists", "0"])
        save()
        if "scaling" in parts:
            bf = d.setdefault("brute_force", {})
            for n in counts:
                bf[str(n)] = tune(a.bin, a.out, f"{case}_brute_{n}", [kernel, *extra, "--strategy", "brute_force",
                                  "--gpus", ",".join(str(i) for i in range(n)), "--finalists", "0"])
                save()
            one = bf[str(counts[0])]
            for n, r in bf.items():
                if r["search_s"] and one["search_s"]:
                    r["search_speedup"] = one["search_s"] / r["search_s"]
                    r["search_efficiency"] = r["search_speedup"] / (int(n) / counts[0])
                if r["wall_s"] and one["wall_s"]:
                    r["wall_speedup"] = one["wall_s"] / r["wall_s"]
            mp = d.setdefault("mpi", {})
            for n in mpi_counts:
                mp[str(n)] = r = tune(a.bin, a.out, f"{case}_mpi_{n}", [kernel, *extra, "--strategy", "brute_force",
                                      "--finalists", "0"], mpi_ranks=n)
                if r["wall_s"] and str(n) in bf and bf[str(n)]["wall_s"]:
                    r["wall_overhead_vs_gpus"] = r["wall_s"] / bf[str(n)]["wall_s"] - 1
                    r["search_overhead_vs_gpus"] = r["search_s"] / bf[str(n)]["search_s"] - 1
                save()
        if "strategy" in parts:
            # Per seed: the time from the first stored result to one within --tolerance of the
            # best the 1-GPU run of that seed found (timings within 1% are noise-level ties).
            st = d.setdefault("strategy", {})
            for seed in range(1, a.seeds + 1):
                for n in counts:
                    st[f"{n}_seed{seed}"] = tune(a.bin, a.out, f"{case}_default_{n}_seed{seed}", [
                        kernel, *extra, "--gpus", ",".join(str(i) for i in range(n)), "--time-budget",
                        str(a.time_budget), "--finalists", "0", "--seed", str(seed)])
                    save()
                base = st[f"{counts[0]}_seed{seed}"]
                target = base["winner_ms"] * (1 + a.tolerance) if base.get("winner_ms") else None
                for n in counts:
                    r = st[f"{n}_seed{seed}"]
                    r["quality_target_ms"] = target
                    r["time_to_target_s"] = time_to(r["db"], target) if target else None
                    t1 = base["time_to_target_s"]
                    if t1 and r["time_to_target_s"] is not None:
                        r["time_to_quality_vs_1gpu"] = r["time_to_target_s"] / t1
                save()
            summary = d.setdefault("strategy_summary", {})
            for n in counts:
                ratios = [st[f"{n}_seed{s}"].get("time_to_quality_vs_1gpu") for s in range(1, a.seeds + 1)]
                t = [st[f"{n}_seed{s}"].get("time_to_target_s") for s in range(1, a.seeds + 1)]
                summary[str(n)] = {"time_to_target_s": t, "ratios_vs_1gpu": ratios,
                                   "mean_time_to_target_s": sum(t) / len(t) if None not in t else None,
                                   "target_ratio": 1.2 / (n / counts[0]),
                                   "best_ms": [st[f"{n}_seed{s}"].get("winner_ms") for s in range(1, a.seeds + 1)],
                                   "evaluations": [st[f"{n}_seed{s}"].get("rows") for s in range(1, a.seeds + 1)]}
                m1 = summary[str(counts[0])]["mean_time_to_target_s"]
                if m1 and summary[str(n)]["mean_time_to_target_s"] is not None:
                    summary[str(n)]["mean_ratio_vs_1gpu"] = summary[str(n)]["mean_time_to_target_s"] / m1
            save()
        if "faults" in parts:
            f = d.setdefault("faults", {})
            brute = [kernel, *extra, "--strategy", "brute_force", "--finalists", "0"]
            # One GPU worker of an N-GPU run (not the first lane's: it defined the expected output).
            f["worker_killed"] = killed_run(
                a.bin, a.out, f"{case}_fault_worker", brute + ["--gpus", all_gpus],
                lambda ps: ([p for p in ps if p[1] and p[1][0].endswith("cutune-worker")][-1:] or [None])[0],
                after_rows=100)
            save()
            # One MPI rank (the last) of N, then the same command again with --resume.
            last = str(max(counts) - 1)
            f["rank_killed"] = killed_run(
                a.bin, a.out, f"{case}_fault_rank", brute, mpi_ranks=max(counts), after_rows=100,
                pick=lambda ps: ([p for p in ps if p[2].get("OMPI_COMM_WORLD_RANK") == last
                                  and p[1] and p[1][0].endswith("/cutune")][:1] or [None])[0])
            save()
            cmd, db, report = command(a.bin, a.out, f"{case}_fault_rank", brute + ["--resume"], max(counts))
            t0 = time.monotonic()
            with open(os.path.join(a.out, f"{case}_fault_rank_resume.log"), "w") as log:
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, **MPI_ENV),
                                    timeout=400).returncode
            f["rank_killed_resumed"] = summarise(cmd, rc, time.monotonic() - t0, db, report)
            save()
    print(json.dumps(doc, indent=1))
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
