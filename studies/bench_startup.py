#!/usr/bin/env python3
"""Where a tuning's fixed costs go, over repeated runs on the lent GPU. Tunes the
throughput space (bench/throughput/reduction_single.json, n = 2^26, brute force, 7 timed
launches, no finalists, as studies/bench_throughput.py does) several times, cold (fresh DB
and compile cache) and warm (fresh DB, the cold run's compile cache), with each number of
compile workers given, interleaved. Writes startup.json: per run the process wall time, the
amortised and search-loop overheads per configuration and the GPU worker's start-up phases.

Usage: python3 -m studies.bench_startup --bin .gpu/bin --out OUT [--rounds 3] [--workers 16,14,12]
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SPEC = "bench/throughput/reduction_single.json"
PROBLEM = "n=67108864"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=".gpu/bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default="16,14,12")
    args = ap.parse_args()
    cutune = os.path.abspath(os.path.join(args.bin, "cutune"))
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cutune-startup-")
    log = open(os.path.join(args.out, "startup.log"), "w")

    def run(cmd):
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            sys.exit(f"{cmd[0]} exited {p.returncode} (see {args.out}/startup.log)")
        return time.perf_counter() - t0

    # The machine's first NVRTC and driver use, paid here rather than by the first run.
    run([cutune, "compile", SPEC, "--all", "--no-cache", "--quiet"])
    devices = json.loads(subprocess.run([cutune, "devices", "--json"], capture_output=True, text=True).stdout)
    runs = []
    for rnd in range(args.rounds):
        for w in [int(x) for x in args.workers.split(",")]:
            cache = os.path.join(work, "cache")
            shutil.rmtree(cache, ignore_errors=True)
            for kind in ("cold", "warm"):
                db = os.path.join(work, f"{kind}.db")
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(db + suffix):
                        os.remove(db + suffix)
                rep = os.path.join(work, "report.json")
                wall = run([cutune, "tune", SPEC, "--problem", PROBLEM, "--strategy", "brute_force", "--samples", "7",
                            "--screening-min", "7", "--finalists", "0", "--db", db, "--cache-dir", cache,
                            "--compile-workers", str(w), "--report", rep])
                r = json.load(open(rep))
                tb, n, timed = r["time_breakdown"], r["configs_tried"], r["timed_ms_total"]
                entry = {"kind": kind, "compile_workers": w, "round": rnd, "configs": n, "process_wall_s": wall,
                         "amortised_overhead_ms_per_config": (wall * 1e3 - timed) / n,
                         "search_loop_overhead_ms_per_config": (tb["search_ms"] - timed) / n,
                         "startup_s": tb["startup_s"], "gpu_setup_ms": tb["gpu_setup_ms"],
                         "per_config_ms": {k: tb[k] / n for k in ("compile_wait_ms", "verify_ms", "sampling_ms",
                                                                  "store_ms", "worker_load_ms", "worker_idle_ms")}}
                runs.append(entry)
                s = entry["gpu_setup_ms"]
                print(f"{kind} w{w} r{rnd}: wall {wall:.3f} s, amortised {entry['amortised_overhead_ms_per_config']:.2f}"
                      f" ms/config, loop {entry['search_loop_overhead_ms_per_config']:.2f}, start-up "
                      f"{entry['startup_s']:.3f} s (cuInit {s['load_and_cuinit']:.0f}, context {s['context']:.0f} ms)",
                      flush=True)
    summary = {}
    for kind in ("cold", "warm"):
        sel = [r for r in runs if r["kind"] == kind]
        summary[kind] = {key: {"median": statistics.median(r[key] for r in sel), "min": min(r[key] for r in sel),
                               "max": max(r[key] for r in sel)}
                         for key in ("process_wall_s", "amortised_overhead_ms_per_config",
                                     "search_loop_overhead_ms_per_config", "startup_s")}
        summary[kind]["driver_start_ms_median"] = statistics.median(
            r["gpu_setup_ms"]["load_and_cuinit"] + r["gpu_setup_ms"]["context"] for r in sel)
    doc = {"benchmark": "startup", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join(["python3 -m studies.bench_startup"] + sys.argv[1:]), "device": devices,
           "spec": SPEC, "problem": PROBLEM, "summary": summary, "runs": runs,
           "notes": ["process_wall_s: the whole cutune tune process, timed by this script",
                     "amortised: (process wall - timed launches) / configs; search loop: (search_ms - timed) / configs",
                     "gpu_setup_ms.load_and_cuinit: the worker's start to cuInit's return (problem load included); "
                     "context: the primary context and the device's identity; *_overlapped run beside them"]}
    json.dump(doc, open(os.path.join(args.out, "startup.json"), "w"), indent=1)
    for kind, s in summary.items():
        print(f"{kind}: amortised {s['amortised_overhead_ms_per_config']['median']:.2f} ms/config (median), "
              f"loop {s['search_loop_overhead_ms_per_config']['median']:.2f}, driver start "
              f"{s['driver_start_ms_median']:.0f} ms")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
