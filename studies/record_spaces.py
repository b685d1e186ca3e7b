#!/usr/bin/env python3
"""Records whole search spaces on the lent GPU for simulation: every valid configuration of a
kernel is tuned by brute force (cutune tune --strategy brute_force) into one DB, then written as
a Kernel Tuner cache (cutune export --format cache), gzipped, with its compile, verification and
benchmark times, so that `cutune score` and Kernel Tuner's simulation mode can replay it.

A space that does not finish within its share of the call's time is left in the DB; the next
call with the same --db goes on with what is not stored yet, so a large space can span several device calls.
Only a space whose every valid configuration is stored is exported (the summary says which).

Usage (on the GPU machine):
  python3 -m studies.record_spaces --bin .gpu/bin --material .material/data/real_kernels \
      --db $OUT/dbs --out $OUT/spaces [--cases reduction,bat/pnpoly,...] [--deadline 560]
Writes OUT/<case>_<gpu>.json.gz, OUT/record_spaces.json (per case: valid, stored, failed, wall,
complete) and OUT/logs/<case>.log.
"""
import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (kernel argument: a template name or a BAT problem file under the material, problem
# assignments). Problem sizes are the kernels' own defaults except matmul, whose 4096^3 default
# would make the slow corners of its space (a few hundred ms a sample) dominate the call.
CASES = {
    "reduction": ("reduction", []),
    "scan": ("scan", []),
    "strided_access": ("strided_access", []),
    "matmul_2048": ("matmul", ["m=2048", "n=2048", "k=2048"]),
    # Other problem sizes of the same kernels: a prior learnt at one size, scored at another.
    "matmul_1024": ("matmul", ["m=1024", "n=1024", "k=1024"]),
    "reduction_2p22": ("reduction", ["n=4194304"]),
    "scan_2p22": ("scan", ["n=4194304", "inclusive=0"]),
    "transpose": ("transpose", []),
    "bat_nbody": ("bat/nbody/nbody-CAFF.json", []),
    # Recorded on an H100 (2026-11-25) and left out of results/spaces: every configuration fails,
    # as the problem files are written (pnpoly's passes 4 arguments to a 3-parameter kernel,
    # TRIAD's passes a double scalar to a float parameter), so they hold no space to search.
    # TRIAD again on an H200 (2026-12-01): the same, all 4320 fail.
    "bat_pnpoly": ("bat/pnpoly/pnpoly-CAFF.json", []),
    "bat_triad": ("bat/TRIAD/TRIAD-CAFF.json", []),
    # 3 configurations a second on an H100 (heavy compiles): 412 of 6768 in 130 s. On an H200
    # (2026-12-03, 12 compile workers) 1333 in the first 515 s, then 629 in 525 s: the space is
    # walked in order and the larger tiles compile slower, so the whole space is several calls.
    "bat_convolution": ("bat/convolution/convolution-CAFF.json", []),
    # 10312 configurations of 18 to 90 ms launches: 493 s on two H200s (--gpus all, 2026-11-28).
    "bat_gemm": ("bat/GEMM/GEMM-CAFF.json", []),
    # Kernel Tuner's own examples, each script as written, captured into T1 files on the GPU
    # machine (python/cutune_capture; their inputs are too large to carry) and its n-th
    # tune_kernel call recorded. Sizes on an H100 (2026-11-28): reduction.py's first call
    # (sum_floats, 2376 valid), sepconv.py's first (convolution_kernel with the filter's size
    # among the tuned parameters, 29920), convolution_correct.py's second (convolution_kernel,
    # 1080). Left out: expdist.py (its `#include <cub/cub.cuh>`
    # pulls in host code that NVRTC refuses), spmv.py (needs SciPy, 128 configurations),
    # convolution.py (1,867,776 valid).
    "kt_reduction": ("kt:reduction.py:1", []),
    "kt_sepconv": ("kt:sepconv.py:1", []),
    "kt_convolution_correct": ("kt:convolution_correct.py:2", []),
    # Kernel Tuner's point-in-polygon kernel over pnpoly.py's parameters (5456 configurations;
    # NVRTC compiles one in 0.14 s here): its T1 file and polygon are written by
    # studies/pnpoly_problem.py beside kernel_tuner_examples/pnpoly.cu, which says why
    # neither pnpoly.py nor BAT's pnpoly-CAFF.json can be tuned as written.
    "kt_pnpoly": ("kernel_tuner_examples/pnpoly-cutune.json", []),
    # The same kernel, polygon and space at a tenth of the points (`pnpoly_problem.py DIR 2000000`):
    # another problem size of the family, as reduction and scan have 2^22 beside 2^28.
    "kt_pnpoly_2m": ("kernel_tuner_examples/pnpoly-cutune-2000000.json", []),
}


def slug(text):
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def run(cmd, log, timeout=None):
    t0 = time.time()
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.time() - t0


class CaptureError(Exception):
    """A Kernel Tuner script whose capture gave no T1 file for the call asked for."""


def captured_t1(case, material, db, log):
    """'kt:<script>:<n>': the T1 file of the script's n-th tune_kernel call, captured once into
    the DB folder (kept with the DBs, so a resumed call tunes the same problem and inputs).
    studies/recorded_default.py captures the same way. Raises CaptureError (the capture's output is
    in `log`) when the script gave no such call: it failed, or this Python lacks its imports."""
    _, script, index = case.split(":")
    workdir = os.path.join(db, "kt-" + os.path.splitext(script)[0])
    manifest = os.path.join(workdir, "captured", "capture.json")
    if not os.path.exists(manifest):
        shutil.rmtree(workdir, ignore_errors=True)
        # The script and the kernels beside it, copied: scripts read and write next to themselves.
        shutil.copytree(os.path.join(material, "kernel_tuner_examples"), workdir)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        with open(log, "a") as f:
            subprocess.run([sys.executable, "-m", "cutune_capture", "--out", "captured", script],
                           cwd=workdir, env=env, stdout=f, stderr=subprocess.STDOUT)
    calls = json.load(open(manifest))["calls"] if os.path.exists(manifest) else []
    call = next((c for c in calls if c.get("index") == int(index) and c.get("t1")), None)
    if call is None:
        raise CaptureError(f"capturing {script} gave no call {index} (its output: {log})")
    return os.path.join(workdir, "captured", call["t1"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--material", required=True, help="the real_kernels folder (BAT's problem files)")
    ap.add_argument("--db", required=True, help="folder of the DBs, one per case (kept for --resume)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--deadline", type=float, default=560.0, help="seconds for the whole call")
    ap.add_argument("--gpu-slug", default=None, help="default: from `cutune devices`")
    ap.add_argument("--gpus", default=None,
                    help="tune on several GPUs of the node (cutune tune --gpus: all, or ordinals), all of one model")
    args = ap.parse_args()
    cutune = os.path.join(args.bin, "cutune")
    # The libraries scripts/stage_gpu.sh staged beside the binaries (Open MPI's), for every call below.
    staged = os.path.join(os.path.dirname(os.path.abspath(args.bin)), "lib")
    if os.path.isdir(staged):
        os.environ["LD_LIBRARY_PATH"] = staged + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    os.makedirs(args.db, exist_ok=True)
    start = time.time()
    devices = subprocess.run([cutune, "devices"], capture_output=True, text=True).stdout
    gpu = args.gpu_slug or (slug(devices.splitlines()[0].split(":", 1)[1]) if devices.strip() else "unknown")
    summary_path = os.path.join(args.out, "record_spaces.json")
    summary = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "command": "python3 -m studies.record_spaces " + " ".join(sys.argv[1:]),
               "devices": devices, "cases": []}
    for name in filter(None, args.cases.split(",")):
        if name not in CASES:
            sys.exit(f"--cases: unknown case '{name}' (known: {', '.join(CASES)})")
        kernel, problem = CASES[name]
        log = os.path.join(args.out, "logs", name + ".log")
        if kernel.startswith("kt:"):
            try:
                kernel = captured_t1(kernel, args.material, args.db, log)
            except CaptureError as e:
                summary["cases"].append({"case": name, "kernel": kernel, "problem": problem, "skipped": str(e)})
                continue
        elif kernel.endswith(".json"):
            kernel = os.path.join(args.material, kernel)
        left = args.deadline - (time.time() - start)
        entry = {"case": name, "kernel": kernel, "problem": problem}
        if left < 20:
            entry["skipped"] = "no time left in this call"
            summary["cases"].append(entry)
            continue
        space = subprocess.run([cutune, "space", kernel, *(["--problem", ",".join(problem)] if problem else []),
                                "--timing"], capture_output=True, text=True)
        valid = json.loads(space.stdout.strip().splitlines()[-1])["valid"] if space.returncode == 0 else None
        report = os.path.join(args.out, "logs", name + ".report.json")
        db = os.path.join(args.db, name + ".db")
        # A fresh cubin cache: the recorded compile time is a real NVRTC compile, never a cache hit.
        cubins = os.path.join(args.db, "cubins-" + name)
        shutil.rmtree(cubins, ignore_errors=True)
        # Not --resume: that counts the stored results' cost against --time-budget (a resumed run
        # ends where the uninterrupted one would), and a call that resumed 778 configurations
        # recorded in 313 s with a budget of 285 s evaluated none. A second run on the same DB
        # reuses what is stored and spends its budget on new configurations only.
        cmd = [cutune, "tune", kernel, "--strategy", "brute_force", "--db", db, "--cache-dir", cubins,
               "--time-budget", f"{max(left - 15, 5):.0f}", "--report", report, "--finalists", "0"]
        if problem:
            cmd += ["--problem", ",".join(problem)]
        if args.gpus:
            cmd += ["--gpus", args.gpus]
        rc, wall = run(cmd, log, timeout=left)
        entry.update(valid=valid, tune_exit=rc, wall_s=round(wall, 1))
        try:
            rep = json.load(open(report))
            entry.update({k: rep.get(k) for k in ("kernel", "problem", "space_valid", "configs_tried",
                                                  "configs_resumed", "configs_failed", "failures_by_status")})
        except (OSError, ValueError):
            pass
        shutil.rmtree(cubins, ignore_errors=True)
        out = os.path.join(args.out, f"{name}_{gpu}.json")
        # --space: the value lists as the kernel declares them, in its order (the neighbourhoods of
        # every strategy that replays the file), not as the measurements first hold them.
        erc, _ = run([cutune, "export", "--format", "cache", "--db", db, "--space", kernel, "-o", out], log)
        if erc == 0 and os.path.exists(out):
            cache = json.load(open(out))
            stored = len(cache.get("cache", {}))
            entry.update(stored=stored, complete=valid is not None and stored >= valid)
            if entry["complete"]:
                with open(out, "rb") as src, gzip.open(out + ".gz", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                entry["file"] = os.path.basename(out) + ".gz"
            os.remove(out)
        else:
            entry["export_exit"] = erc
        summary["cases"].append(entry)
        with open(summary_path, "w") as f:
            json.dump(summary, f, indent=1)
        print(json.dumps(entry), flush=True)
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
