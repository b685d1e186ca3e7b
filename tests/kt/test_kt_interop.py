#!/usr/bin/env python3
"""cutune against the real Kernel Tuner.

Run by CTest (tests/CMakeLists.txt, "kt-interop:<case>") with the Python of the virtual
environment that scripts/kt_venv.sh makes (kernel_tuner pinned there). Exit codes: 0 pass,
1 fail, 77 skipped (CTest SKIP_RETURN_CODE): printed as SKIPPED with the reason.

  simulate  cutune imports a recorded space, exports it as a cache; Kernel Tuner loads that
            cache in simulation mode and runs strategies over it.
  t1        cutune writes T1 files (cutune space K --t1); Kernel Tuner's tune_kernel_T1 reads
            them and its search space has the size cutune counts.
  kt_cache  Kernel Tuner writes a cache (its C backend: g++, on the CPU); cutune imports it.
  formats   every file of the shared examples and recorded spaces imports; what cutune
            writes (cache, T4 1.0.0 and 1.1.0, T1) validates against the schemas.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


try:
    import jsonschema
    import kernel_tuner
    from kernel_tuner import interface as kt_interface
    from kernel_tuner.searchspace import Searchspace
except ImportError as e:  # the venv is incomplete: say so, never pass silently
    skip(f"Kernel Tuner is not importable ({e}); run scripts/kt_venv.sh")


class Cutune:
    def __init__(self, exe, workdir):
        self.exe = exe
        self.workdir = Path(workdir)

    def run(self, *args, expect=0):
        p = subprocess.run([self.exe, *map(str, args)], capture_output=True, text=True)
        if p.returncode != expect:
            raise AssertionError(f"cutune {' '.join(map(str, args))}: exit {p.returncode} (expected {expect})\n"
                                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p.stdout


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok: {what}")


def load_json(path):
    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def key_of(params, keys):
    return ",".join(str(params[k]) for k in keys)


def case_simulate(cu, shared, tmp):
    """Kernel Tuner simulates over a cache that cutune wrote from its DB."""
    db = tmp / "sim.db"
    # Stored under named problem variables, so that the export carries cutune's header fields
    # beside Kernel Tuner's (cutune_problem), which Kernel Tuner must still load.
    cu.run("import", shared / "data/spaces/convolution_A100.json.gz", "--db", db, "--problem", "w=4096,h=4096")
    cache_file = tmp / "convolution_cutune.json"
    cu.run("export", "--format", "cache", "--db", db, "-o", cache_file)
    cache = load_json(cache_file)  # a closed cache is plain JSON
    check(cache.get("cutune_problem") == {"h": 4096, "w": 4096}, "the export names the problem's variables")
    keys = cache["tune_params_keys"]
    present = set(cache["cache"])
    ok_times = [e["time"] for e in cache["cache"].values() if isinstance(e.get("time"), float)]
    check(all("time_median" in e for e in cache["cache"].values() if isinstance(e.get("time"), float)),
          "every measured entry carries time_median beside time and times")

    def restrict(p):  # the recorded space: exactly the configurations in the cache
        return key_of(p, keys) in present

    common = dict(kernel_name=cache["kernel_name"], kernel_source="__global__ void convolution_kernel() {}",
                  problem_size=cache["problem_size"], arguments=[], tune_params=cache["tune_params"],
                  restrictions=restrict, cache=str(cache_file), simulation_mode=True, quiet=True, verbose=False)
    results, env = kernel_tuner.tune_kernel(strategy="brute_force", **common)
    check(len(results) == len(present), f"brute_force visited all {len(present)} configurations of the cache")
    best = min(r["time"] for r in results if isinstance(r.get("time"), float))
    check(best == min(ok_times), f"brute_force's best time {best} is the cache's best {min(ok_times)}")
    for strategy, options in [("random_sample", {"max_fevals": 200}), ("genetic_algorithm", {"max_fevals": 300}),
                              ("greedy_ils", {"max_fevals": 200})]:
        results, _ = kernel_tuner.tune_kernel(strategy=strategy, strategy_options=options, **common)
        times = [r["time"] for r in results if isinstance(r.get("time"), float)]
        check(len(results) > 0 and all(t in set(ok_times) for t in times),
              f"{strategy} ran over the cache: {len(results)} results, every time one of cutune's")
    # Kernel Tuner resumes the file as its own: the header checks pass and nothing is lost.
    with open(cache_file) as f:
        text = f.read()
    check(text.startswith('{\n"device_name": ') and text.rstrip().endswith("}\n}".strip()),
          "the file has Kernel Tuner's line layout")


def valid_size_of(cu, kernel, problem):
    out = cu.run("space", kernel, *(["--problem", problem] if problem else []), "--show", "0")
    m = re.search(r"valid size:\s+(\d+)", out)
    return int(m.group(1))


def case_t1(cu, shared, tmp):
    """Kernel Tuner reads T1 files cutune wrote; its search space has cutune's size."""
    schema = load_json(shared / "formats/kernel_tuner/T1/1.0.0/input-schema.json")
    captured = {}

    def capture(kernel_name, kernel_source, problem_size, arguments, tune_params, **kw):
        captured.update(kernel_name=kernel_name, kernel_source=kernel_source, problem_size=problem_size,
                        tune_params=tune_params, restrictions=kw.get("restrictions"), lang=kw.get("lang"))
        return [], {}

    # tune_kernel_T1 converts the file (Values, Conditions, ProblemSize, Arguments, GridDiv)
    # and hands it to tune_kernel: catching that call gives what Kernel Tuner read, without
    # a GPU. Kernel Tuner's own Searchspace then counts the valid configurations.
    kt_interface.tune_kernel = capture
    # Kernel Tuner 1.5's T1 reader takes float vectors and float/int32 scalars only:
    # the templates whose arguments are all of those.
    # (matmul's Conditions use Python's `x if c else y`, which python-constraint2's parser in
    # Kernel Tuner 1.5 rejects: "Variables [..., 'if', ...] not in tune_params".)
    for kernel, problem in [("vector_add", "n=100000"), ("transpose", "rows=256,cols=256"),
                            ("strided_access", "n=1048576")]:
        t1 = tmp / f"{kernel}_t1.json"
        cu.run("space", kernel, *(["--problem", problem] if problem else []), "--t1", t1, "--show", "0")
        doc = load_json(t1)
        jsonschema.validate(doc, schema)
        print(f"ok: {t1.name} validates against the T1 1.0.0 input schema")
        captured.clear()
        kt_interface.tune_kernel_T1(t1, strategy="brute_force", device=0, output_T4=False)
        check(captured.get("kernel_name") == doc["KernelSpecification"]["KernelName"],
              f"{kernel}: Kernel Tuner read the T1 file")
        space = Searchspace(captured["tune_params"], captured["restrictions"], 1024)
        ours = valid_size_of(cu, kernel, problem)
        check(space.size == ours, f"{kernel}: Kernel Tuner's valid space {space.size} == cutune's {ours}")


C_KERNEL = r"""
extern "C" float vector_add(float *c, float *a, float *b, int n) {
    for (int i = 0; i < n; i += block_size_x * unroll)
        for (int j = i; j < i + block_size_x * unroll && j < n; j++) c[j] = a[j] + b[j];
    return 0.0f;
}
"""


def case_kt_cache(cu, shared, tmp):
    """cutune reads a cache that Kernel Tuner wrote (its C backend runs on the CPU)."""
    if shutil.which("g++") is None:
        skip("g++ is not installed: Kernel Tuner's C backend cannot run")
    import numpy as np
    n = np.int32(10000)
    a = np.random.randn(n).astype(np.float32)
    b = np.random.randn(n).astype(np.float32)
    c = np.zeros_like(a)
    cache_file = tmp / "kt_written.json"
    tune_params = {"block_size_x": [1, 16, 64], "unroll": [1, 4]}
    cwd = os.getcwd()
    os.chdir(tmp)  # the C backend compiles in the working directory
    try:
        results, _ = kernel_tuner.tune_kernel("vector_add", C_KERNEL, n, [c, a, b, n], tune_params, lang="C",
                                              cache=str(cache_file), iterations=3, quiet=True, verbose=False)
    finally:
        os.chdir(cwd)
    written = load_json(cache_file)
    check(len(written["cache"]) == 6, "Kernel Tuner wrote a cache of 6 configurations")
    db = tmp / "kt.db"
    out = cu.run("import", cache_file, "--db", db, "--device-name", "unused")
    # (Kernel Tuner's C backend raises on a compile error instead of recording it, so this
    # file has no failures; failures in files Kernel Tuner wrote are read in test_kt_formats.)
    check("6 configurations, 6 stored now (0 failed)" in out, f"cutune imported it: {out.strip()}")
    back = tmp / "back.json"
    cu.run("export", "--format", "cache", "--db", db, "-o", back)
    exported = load_json(back)["cache"]
    for key, entry in written["cache"].items():
        mine = exported[key]
        check(mine["times"] == entry["times"] and abs(mine["time"] - entry["time"]) <= 1e-12 * entry["time"],
                  f"{key}: times and time survive the round trip")
    cu.run("import", back, "--db", db)  # and cutune reads its own export of it


def case_formats(cu, shared, tmp):
    """Every shared file imports; what cutune writes validates against the schemas."""
    files = sorted(f for f in (shared / "formats/kernel_tuner/examples").rglob("*cache*.json") if "T1" not in f.name)
    files += sorted((shared / "data/spaces").glob("*.json.gz"))
    files += [shared / "formats/kernel_tuner/proposed/cache/small_cache.json"]
    for i, f in enumerate(files):
        db = tmp / f"f{i}.db"
        extra = ["--device-name", "unknown GPU", "--kernel-name", f.name.split(".")[0], "--problem", "ProblemSize=4096x4096"] \
            if "_T4" in f.name else []
        if f.suffix == ".json" and "problem_size" not in load_json(f):
            extra = ["--problem", "n=1"]  # an older cache names no problem size: import asks for one
        out = cu.run("import", f, "--db", db, *extra)
        check(" stored now" in out, f"{f.name} imports: {out.splitlines()[0]}")
        # What cutune writes of it validates.
        t4_schema = load_json(shared / "formats/kernel_tuner/T4/1.0.0/results-schema.json")
        t4_11_schema = load_json(shared / "formats/kernel_tuner/proposed/autotuning_methodology_T4_1.1.0/T4.json")
        for version, schema in [("1.0.0", t4_schema), ("1.1.0", t4_11_schema)]:
            out_file = tmp / f"f{i}_{version}.json"
            cu.run("export", "--format", "t4", "--t4-version", version, "--db", db, "-o", out_file)
            jsonschema.validate(load_json(out_file), schema)
        print(f"ok: its T4 1.0.0 and 1.1.0 exports validate")
        cu.run("export", "--format", "cache", "--db", db, "-o", tmp / f"f{i}_cache.json")
        load_json(tmp / f"f{i}_cache.json")


CASES = {"simulate": case_simulate, "t1": case_t1, "kt_cache": case_kt_cache, "formats": case_formats}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--material", help="the test material folder (tests/material/manifest.txt); kt_cache needs none")
    args = ap.parse_args()
    shared = Path(args.material or "")
    if args.case != "kt_cache" and not (args.material and (shared / "formats/kernel_tuner").is_dir()):
        skip(f"no test material at {shared}/formats/kernel_tuner")
    from importlib.metadata import version
    print(f"Kernel Tuner {version('kernel_tuner')}, jsonschema {version('jsonschema')}")
    with tempfile.TemporaryDirectory(prefix=f"cutune_kt_{args.case}_") as tmp:
        try:
            CASES[args.case](Cutune(args.cutune, tmp), shared, Path(tmp))
        except AssertionError as e:
            print(f"FAILED: {e}")
            return 1
    print(f"PASSED: {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
