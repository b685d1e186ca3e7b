#!/usr/bin/env python3
"""Summarises the raw outputs of studies/bench_multigpu.py (one folder of them) into one
multigpu.json beside them: per case the brute-force search-loop and wall speedups, the MPI
path against --gpus, the default strategy's time to quality, the fault runs, and the relay
polling before/after. Usage: python3 -m studies.multigpu_summary results/<gpu>/multigpu"""
import json
import os
import sys


def brute(case):
    out = {}
    for n, r in case.get("brute_force", {}).items():
        out[n] = {k: r.get(k) for k in ("wall_s", "search_s", "startup_s", "rows", "distinct", "integrity_check",
                                         "search_speedup", "search_efficiency", "wall_speedup", "winner_ms")}
    return out


def mpi(case):
    return {n: {k: r.get(k) for k in ("wall_s", "search_s", "startup_s", "rows", "distinct", "integrity_check",
                                       "wall_overhead_vs_gpus", "search_overhead_vs_gpus")}
            for n, r in case.get("mpi", {}).items()}


def remote_idle(case):
    """Per MPI run: each rank's GPU worker, evaluations and idle ms (the relay's cost)."""
    return {n: [{k: w.get(k) for k in ("name", "evaluations", "idle_ms")} for w in r.get("workers", [])]
            for n, r in case.get("mpi", {}).items()}


def main():
    d = sys.argv[1]
    raw = lambda f: json.load(open(os.path.join(d, "raw", f)))
    mm, md, faults, st = (raw("matmul_scaling_strategy.json"), raw("md5hash_reduction_scaling.json"),
                          raw("faults.json"), raw("nbody_strategy.json"))
    before, after = raw("relay_polling_before.json"), raw("relay_polling_after.json")
    doc = {
        "device": mm["runs"][0]["gpus"], "cpus": mm["runs"][0]["cpus"],
        "dates": [x["runs"][0]["date"] for x in (mm, md, faults, st)],
        "brute_force": {"matmul_842": brute(mm["matmul"]), "md5hash_5000": brute(md["md5hash"]),
                        "reduction_396": brute(md["reduction"])},
        "mpi_against_gpus": {"matmul_842": mpi(mm["matmul"]), "md5hash_5000": mpi(md["md5hash"]),
                             "reduction_396": mpi(md["reduction"])},
        "default_strategy_nbody": {"time_budget_s": 20, "tolerance": 0.01, "summary": st["nbody"]["strategy_summary"]},
        "faults_matmul_4_gpus": {k: {kk: r.get(kk) for kk in ("exit", "rows", "distinct", "integrity_check", "statuses",
                                                               "killed", "wall_s")}
                                 for k, r in faults["matmul"]["faults"].items()},
        "relay_polling_md5hash_5000": {
            "before": {"mpi": mpi(before["md5hash"]), "gpus": brute(before["md5hash"]),
                       "workers": remote_idle(before["md5hash"])},
            "after": {"mpi": mpi(after["md5hash"]), "gpus": brute(after["md5hash"]),
                      "workers": remote_idle(after["md5hash"])}},
    }
    json.dump(doc, open(os.path.join(d, "multigpu.json"), "w"), indent=1)
    print(json.dumps(doc, indent=1)[:3000])


if __name__ == "__main__":
    main()
