#!/usr/bin/env python3
"""Building a search space: cutune against Kernel Tuner 1.5, both run in one run on one
machine. For each space, each tool in its own process, several times in turn: the time
to the full valid set, the time to the first valid configuration (what a tuning waits
before its first evaluation), and the process's peak memory (RSS). Checks that both tools
find the same valid set. Writes results/space_construction/space_construction.json and a short .md.

cutune is timed by `cutune space FILE --timing` (loading the T1 file, the first valid
configuration, counting every valid one; one JSON line). Kernel Tuner is timed on
`Searchspace(tune_params, restrictions, max_threads, block_size_names)`, which a tuning
builds in full before its first evaluation, so its time to the first valid configuration
is its construction time; Python's start-up and the import of kernel_tuner are not
counted (cutune's start-up is not counted either).

Usage: python3 -m studies.bench_space_construction [--cutune build/tuner/cli/cutune]
         [--kt-python build/kt-venv/bin/python] [--repeats 5] [--spaces a,b]
         [--out results/space_construction/space_construction.json]
The Kernel Tuner venv: scripts/kt_venv.sh build/kt-venv.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "real_kernels", "bat")

# Spaces written here as Kernel Tuner writes them (the Values expressions are evaluated by
# both tools). The two *_milo spaces are the benchmark hub's (AutoTuningAssociation/
# benchmark_hub, kernels/gemm_milo.json @ ca104e9 and kernels/hotspot_milo.json @ 8e6defa:
# the CLBlast GEMM and the Rodinia hotspot spaces of the methodology paper), parameters and
# restrictions as there; `synthetic_1e9` is ours: 1.3e9 Cartesian points, 12 restrictions
# in the shapes real kernels use (thread counts, divisibility, tile and shared-memory
# budgets, features that need others).
DEFINED = {
    "clblast_gemm": {
        "source": "benchmark_hub kernels/gemm_milo.json (CLBlast Xgemm)",
        "params": [
            ("GEMMK", "[0]"), ("MWG", "[16, 32, 64, 128]"), ("NWG", "[16, 32, 64, 128]"), ("KWG", "[16, 32]"),
            ("MDIMC", "[8, 16, 32]"), ("NDIMC", "[8, 16, 32]"), ("MDIMA", "[8, 16, 32]"), ("NDIMB", "[8, 16, 32]"),
            ("KWI", "[2]"), ("VWM", "[1, 2, 4, 8]"), ("VWN", "[1, 2, 4, 8]"), ("STRM", "[0, 1]"), ("STRN", "[0, 1]"),
            ("SA", "[0, 1]"), ("SB", "[0, 1]"), ("KREG", "[1]"), ("PRECISION", "[32]"),
        ],
        "restrictions": [
            "KWG % KWI == 0",
            "MWG % (MDIMC * VWM) == 0",
            "NWG % (NDIMC * VWN) == 0",
            "MWG % (MDIMA * VWM) == 0",
            "NWG % (NDIMB * VWN) == 0",
            "KWG % ((MDIMC * NDIMC)/MDIMA) == 0",
            "KWG % ((MDIMC * NDIMC)/NDIMB) == 0",
            "not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)",
        ],
        # The hub's LocalSize names block_size_x/y, which are no parameters: no thread limit.
        "block": ["1", "1", "1"],
    },
    "hotspot": {
        "source": "benchmark_hub kernels/hotspot_milo.json (Rodinia hotspot)",
        "params": [
            ("grid_width", "[4096]"), ("grid_height", "[4096]"),
            ("block_size_x", "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))"),
            ("block_size_y", "[2**i for i in range(0, 6)]"),
            ("tile_size_x", "[i for i in range(1, 11)]"), ("tile_size_y", "[i for i in range(1, 11)]"),
            ("temporal_tiling_factor", "[i for i in range(1, 11)]"), ("max_tfactor", "[10]"),
            ("loop_unroll_factor_t", "[i for i in range(1, 10+1)]"), ("sh_power", "[0, 1]"),
        ],
        "restrictions": [
            "block_size_x*block_size_y>= 32",
            "temporal_tiling_factor % loop_unroll_factor_t == 0",
            "block_size_x*block_size_y <= 1024",
            "(block_size_x*tile_size_x+ temporal_tiling_factor * 2) * (block_size_y*tile_size_y+ temporal_tiling_factor"
            " * 2) * (2+sh_power) * 4 <= 49152",
        ],
        "block": ["block_size_x", "block_size_y", "1"],
    },
    "synthetic_1e9": {
        "source": "cutune's (studies/bench_space_construction.py)",
        "params": [
            ("block_size_x", "[16, 32, 64, 128, 256, 512, 1024]"), ("block_size_y", "[1, 2, 4, 8, 16, 32]"),
            ("tile_size_x", "list(range(1, 33))"), ("tile_size_y", "list(range(1, 33))"),
            ("vector_width", "[1, 2, 4, 8]"), ("unroll", "[1, 2, 4, 8, 16]"), ("stages", "list(range(1, 9))"),
            ("split_k", "[1, 2, 4, 8]"), ("use_smem", "[0, 1]"), ("padding", "[0, 1, 2, 4]"),
            ("swizzle", "[0, 1]"), ("cache_policy", "[0, 1, 2]"),
        ],
        "restrictions": [
            "block_size_x * block_size_y >= 64",
            "block_size_x * block_size_y <= 1024",
            "tile_size_x % vector_width == 0",
            "tile_size_x * tile_size_y <= 32",
            "block_size_x * tile_size_x * block_size_y * tile_size_y <= 32768",
            "tile_size_y % unroll == 0 or unroll == 1",
            "unroll <= stages * 4",
            "split_k == 1 or (stages >= 2 and use_smem == 1)",
            "use_smem == 0 or stages * (block_size_x * tile_size_x + padding) * tile_size_y * 4 <= 49152",
            "padding == 0 or use_smem == 1",
            "swizzle == 0 or (use_smem == 1 and block_size_y >= 2)",
            "cache_policy == 0 or vector_width >= 4",
        ],
        "block": ["block_size_x", "block_size_y", "1"],
    },
}
# BAT's problem files as their authors wrote them, read by both tools.
FILES = {
    "bat_gemm": os.path.join(SHARED, "GEMM", "GEMM-CAFF.json"),
    "bat_hotspot": os.path.join(SHARED, "hotspot", "hotspot-CAFF.json"),
}
DEFAULT_SPACES = ["clblast_gemm", "hotspot", "synthetic_1e9", "bat_gemm", "bat_hotspot"]

# Run by Kernel Tuner's Python: builds the space from the T1 file's ConfigurationSpace the
# way kernel_tuner.interface.tune_kernel_T1 converts it, with cutune's block-size names.
KT_RUNNER = r"""
import json, resource, sys, time
from ast import literal_eval
def peak_kib():
    # VmHWM: ru_maxrss would report the benchmark script's own peak (kept across fork and exec).
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from kernel_tuner.searchspace import Searchspace
t1 = json.load(open(sys.argv[1]))
keys_out = sys.argv[2] if len(sys.argv) > 2 else ""
tune_params = {}
for p in t1["ConfigurationSpace"]["TuningParameters"]:
    v = p["Values"]
    tune_params[p["Name"]] = eval(v) if ("list(" in v or "range(" in v or (v[0] == "[" and v[-1] == "]")) else literal_eval(v)
restrictions = [c["Expression"] for c in t1["ConfigurationSpace"].get("Conditions", [])]
local = t1["KernelSpecification"].get("LocalSize", {})
block_names = [local[a] for a in ("X", "Y", "Z") if local.get(a) in tune_params]
rss_before = peak_kib()
t0 = time.perf_counter()
s = Searchspace(tune_params, restrictions, 1024, **({"block_size_names": block_names} if block_names else {}))
ms = (time.perf_counter() - t0) * 1e3
rss = peak_kib()
first = ",".join(str(x) for x in s.list[0]) if s.size else ""
print(json.dumps({"valid": s.size, "enumerate_ms": ms, "first_valid": first, "rss_before_kib": rss_before,
                  "peak_rss_kib": rss}))
if keys_out:
    with open(keys_out, "w") as f:
        for c in s.list:
            f.write(",".join(str(x) for x in c) + "\n")
"""


def write_t1(name, spec, work):
    kernel = os.path.join(work, "empty_kernel.cu")
    with open(kernel, "w") as f:
        f.write("__global__ void k(float* a) {}\n")
    t1 = {
        "General": {"FormatVersion": "0.0.1", "BenchmarkName": name},
        "ConfigurationSpace": {
            "TuningParameters": [{"Name": n, "Type": "int", "Values": v, "Default": eval(v)[0]}
                                 for n, v in spec["params"]],
            "Conditions": [{"Expression": e, "Parameters": []} for e in spec["restrictions"]],
        },
        "KernelSpecification": {
            "Language": "CUDA", "KernelName": "k", "KernelFile": "empty_kernel.cu", "GlobalSizeType": "CUDA",
            "LocalSize": dict(zip("XYZ", spec["block"])), "GlobalSize": {"X": "1", "Y": "1", "Z": "1"},
            "Arguments": [{"Name": "a", "Type": "float", "Size": 1, "MemoryType": "Vector",
                           "AccessType": "ReadWrite", "FillType": "Constant", "FillValue": 0.0}],
        },
    }
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(t1, f, indent=1)
    return path


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def space_shape(path):
    t1 = json.load(open(path))
    cs = t1["ConfigurationSpace"]
    return len(cs["TuningParameters"]), len(cs.get("Conditions", []))


def same_valid_set(cutune, kt_python, path, work):
    """Both tools' valid sets, compared as sets of keys (not timed)."""
    keys = subprocess.run([cutune, "space", path, "--keys"], capture_output=True, text=True, check=True).stdout.split()
    kt_file = os.path.join(work, "kt_keys.txt")
    subprocess.run([kt_python, "-c", KT_RUNNER, path, kt_file], capture_output=True, text=True, check=True)
    with open(kt_file) as f:
        kt_keys = f.read().split()
    os.remove(kt_file)
    return set(keys) == set(kt_keys) and len(keys) == len(kt_keys)


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "load_average": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutune", default=os.path.join(ROOT, "build", "tuner", "cli", "cutune"))
    ap.add_argument("--kt-python", default=os.path.join(ROOT, "build", "kt-venv", "bin", "python"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--spaces", default=",".join(DEFAULT_SPACES))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "space_construction.json"))
    ap.add_argument("--no-set-check", action="store_true", help="skip comparing the two valid sets")
    args = ap.parse_args()
    kt_version = subprocess.run([args.kt_python, "-c", "import kernel_tuner, importlib.metadata as m; "
                                 "print(m.version('kernel_tuner'), m.version('python-constraint2'))"],
                                capture_output=True, text=True, check=True).stdout.split()
    work = tempfile.mkdtemp(prefix="cutune-spaces-")
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for name in args.spaces.split(","):
        if name in DEFINED:
            path, source = write_t1(name, DEFINED[name], work), DEFINED[name]["source"]
        elif name in FILES:
            path, source = FILES[name], os.path.relpath(FILES[name], os.path.dirname(ROOT))
        else:
            sys.exit(f"--spaces: unknown space '{name}' (known: {', '.join(list(DEFINED) + list(FILES))})")
        cu_runs, kt_runs = [], []
        for _ in range(args.repeats):  # in turn, so that a busy spell hits both tools
            cu_runs.append(run_json([args.cutune, "space", path, "--timing"]))
            kt_runs.append(run_json([args.kt_python, "-c", KT_RUNNER, path]))
        cu0, kt0 = cu_runs[0], kt_runs[0]
        if any(r["valid"] != cu0["valid"] for r in cu_runs + kt_runs):
            sys.exit(f"{name}: the tools disagree on the number of valid configurations: "
                     f"cutune {cu0['valid']}, Kernel Tuner {kt0['valid']}")
        med = lambda runs, f: statistics.median(f(r) for r in runs)  # noqa: E731
        cu_enum = med(cu_runs, lambda r: r["load_ms"] + r["count_ms"])
        cu_first = med(cu_runs, lambda r: r["load_ms"] + r["first_valid_ms"])
        kt_enum = med(kt_runs, lambda r: r["enumerate_ms"])
        n_params, n_restrictions = space_shape(path)
        row = {
            "space": name, "source": source, "parameters": n_params, "restrictions": n_restrictions,
            "cartesian": cu0["cartesian"], "valid": cu0["valid"],
            "same_valid_set": None if args.no_set_check else same_valid_set(args.cutune, args.kt_python, path, work),
            "cutune": {
                "enumerate_ms": cu_enum, "first_valid_ms": cu_first,
                "load_ms": med(cu_runs, lambda r: r["load_ms"]), "count_ms": med(cu_runs, lambda r: r["count_ms"]),
                "first_valid": cu0["first_valid"], "peak_rss_kib": max(r["peak_rss_kib"] for r in cu_runs),
                "runs_enumerate_ms": [r["load_ms"] + r["count_ms"] for r in cu_runs],
            },
            "kernel_tuner": {
                "enumerate_ms": kt_enum, "first_valid_ms": kt_enum, "first_valid": kt0["first_valid"],
                "peak_rss_kib": max(r["peak_rss_kib"] for r in kt_runs),
                "rss_before_kib": max(r["rss_before_kib"] for r in kt_runs),
                "runs_enumerate_ms": [r["enumerate_ms"] for r in kt_runs],
            },
            "ratio_enumerate": kt_enum / cu_enum,
            "ratio_first_valid": kt_enum / cu_first,
        }
        rows.append(row)
        print(f"{name}: {row['valid']} of {row['cartesian']} valid; cutune {cu_enum:.1f} ms (first {cu_first:.2f} ms, "
              f"{row['cutune']['peak_rss_kib'] // 1024} MiB), Kernel Tuner {kt_enum:.1f} ms "
              f"({row['kernel_tuner']['peak_rss_kib'] // 1024} MiB): {row['ratio_enumerate']:.1f}x, first "
              f"{row['ratio_first_valid']:.0f}x; same valid set: {row['same_valid_set']}", flush=True)
    command = shlex.join(["python3", "-m", "studies.bench_space_construction"] + sys.argv[1:])
    out = {
        "what": "building a search space: time to the full valid set, to the first valid configuration, peak RSS",
        "date": started.isoformat(timespec="seconds"), "command": command, "machine": machine(),
        "repeats": args.repeats, "kernel_tuner": kt_version[0], "python_constraint2": kt_version[1],
        "cutune_commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True).stdout.strip(),
        "spaces": rows,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    md = os.path.splitext(args.out)[0] + ".md"
    with open(md, "w") as f:
        m = out["machine"]
        f.write("# Building a search space: cutune and Kernel Tuner\n\n")
        f.write(f"{out['date']}, {m['cpu']} ({m['cores']} cores, load average {m['load_average'][0]:.1f} at the "
                f"start), Kernel Tuner {out['kernel_tuner']} (python-constraint2 {out['python_constraint2']}), cutune "
                f"{out['cutune_commit']}. `{command}`; medians of {args.repeats} runs per tool, taken in turn; each "
                "run a fresh process, start-up and imports not counted. Kernel Tuner builds the whole space before "
                "its first evaluation, so its time to the first valid configuration is its construction time. "
                "Peak RSS (VmHWM) is the whole process's: Kernel Tuner's includes about "
                f"{max(r['kernel_tuner']['rss_before_kib'] for r in rows) // 1024} MiB of Python and imports, "
                "cutune's about as much of its executable and libraries; cutune's enumeration is lazy (one "
                "configuration, and at most 1 MiB of remembered results per restriction), so its peak does not "
                "grow with the Cartesian size or the valid set.\n\n")
        f.write("| space | Cartesian | restrictions | valid | cutune all (ms) | Kernel Tuner (ms) | ratio | cutune "
                "first (ms) | ratio first | cutune RSS (MiB) | KT RSS (MiB) | same set |\n")
        f.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
        for r in rows:
            c, k = r["cutune"], r["kernel_tuner"]
            f.write(f"| {r['space']} | {r['cartesian']:,} | {r['restrictions']} | {r['valid']:,} | "
                    f"{c['enumerate_ms']:.1f} | {k['enumerate_ms']:.0f} | {r['ratio_enumerate']:.0f}x | "
                    f"{c['first_valid_ms']:.2f} | {r['ratio_first_valid']:.0f}x | {c['peak_rss_kib'] / 1024:.0f} | "
                    f"{k['peak_rss_kib'] / 1024:.0f} | {r['same_valid_set']} |\n")
        f.write("\nSources: " + "; ".join(f"{r['space']}: {r['source']}" for r in rows) + ".\n")
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out} and {md}")


if __name__ == "__main__":
    main()
