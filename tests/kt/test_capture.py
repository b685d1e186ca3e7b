#!/usr/bin/env python3
"""cutune-capture on real Kernel Tuner scripts (no GPU): every listed script of the shared
examples and the scripts in tests/kt/capture_scripts is captured unchanged; each T1 file is
checked against the contract (fields, data files of Size*itemsize bytes, answers); and each
captured space is compared with the valid set real Kernel Tuner 1.5 builds from the script's
ORIGINAL tune_params/restrictions (written by --kt-space inside the capture).

Run with the Python of build/kt-venv (numpy, scipy for spmv.py, the real kernel_tuner).
  test_capture.py --cutune PATH --material DIR [--strict-cutune] [--only NAME ...]
--strict-cutune: also require `cutune space` to load every T1 file and to give Kernel Tuner's
valid set (`cutune space T1 --json` when the build has it, else the valid size). Off by default
while the T1 fields the capture writes (BinaryRaw, LocalSize, ...) are being added to cutune;
without it, what cutune says is printed, not asserted.
Exit 77 (CTest: skipped) when the real Kernel Tuner is not importable.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SKIP = 77

try:
    from kernel_tuner.searchspace import Searchspace
except ImportError as e:
    print(f"SKIPPED: Kernel Tuner is not importable ({e}); run scripts/kt_venv.sh")
    sys.exit(SKIP)

# script -> (exit status, calls captured, calls unsupported: (kernel, option)), memory needed in GiB
EXPECTED = {
    "convolution.py": (0, 1, [], 2),
    "matmul.py": (0, 1, [], 1),
    "pnpoly.py": (2, 0, [("cn_pnpoly_host", "lang")], 1),
    "reduction.py": (0, 12, [], 14),   # 800M floats in the script itself (9.6 GB at its peak)
    "spmv.py": (0, 1, [], 1),
    "stencil.py": (0, 1, [], 1),
    "expdist.py": (0, 2, [], 1),
    "zeromeanfilter.py": (0, 2, [], 1),
    "vector_add.py": (0, 1, [], 1),
    "vector_add_metric.py": (0, 1, [], 1),
    "sepconv.py": (0, 2, [], 1),
    "convolution_correct.py": (0, 2, [], 1),
    "texture.py": (2, 0, [("copy_texture_kernel", "texmem_args")], 1),
    "callables.py": (0, 3, [], 1),
    "untranslatable.py": (2, 1, [("k", "restrictions")], 1),
    "observers.py": (2, 0, [("k", "metrics['GFLOPS/W']")], 1),
}
ELEMENT_BYTES = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
                 "bool": 1, "half": 2, "bfloat16": 2, "float2": 8, "double2": 16,
                 "float": 4, "double": 8, "float32": 4, "float64": 8}
failures = []


def check(cond, what):
    if cond:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what}")
        failures.append(what)
    return cond


def mem_available_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def capture(script, out, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([sys.executable, "-m", "cutune_capture", "--out", str(out), "--kt-space", str(script)],
                       cwd=cwd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check_t1(path, label):
    """The contract's T1 fields, and the data files beside the JSON."""
    doc = json.loads(path.read_text())
    d = path.parent
    spec, space = doc["KernelSpecification"], doc["ConfigurationSpace"]
    ok = True
    ok &= check(spec["Language"] == "CUDA" and isinstance(spec["KernelName"], str), f"{label}: CUDA, KernelName")
    ok &= check((d / spec["KernelFile"]).is_file(), f"{label}: KernelFile {spec['KernelFile']} exists")
    ps = spec["ProblemSize"]
    ok &= check(1 <= len(ps) <= 3 and all(isinstance(x, (int, str)) for x in ps), f"{label}: ProblemSize {ps}")
    ok &= check(all(isinstance(spec["LocalSize"][a], str) for a in "XYZ"), f"{label}: LocalSize {spec['LocalSize']}")
    ok &= check(all(isinstance(spec[f"GridDiv{a}"], list) and all(isinstance(e, str) for e in spec[f"GridDiv{a}"])
                    for a in "XYZ"), f"{label}: GridDivX/Y/Z lists of expressions")
    names = [p["Name"] for p in space["TuningParameters"]]
    ok &= check(all(p["Values"] and p["Type"] in ("int", "float", "string", "bool") for p in space["TuningParameters"]),
                f"{label}: {len(names)} tuning parameters with Type and Values")
    first = {p["Name"]: p["Values"][0] for p in space["TuningParameters"]}
    for c in space["Conditions"]:
        try:
            eval(compile(c["Expression"], "<condition>", "eval"), {}, dict(first))
            good = set(c["Parameters"]) <= set(names)
        except Exception as e:  # noqa: BLE001
            good = False
            print(f"   {c['Expression']}: {e}")
        ok &= check(good, f"{label}: Condition {c['Expression']!r} is a Python expression over parameters")
    args = spec["Arguments"]
    arg_names = [a["Name"] for a in args]
    ok &= check(len(set(arg_names)) == len(arg_names), f"{label}: argument names {arg_names} are unique")
    for a in args:
        if a["MemoryType"] == "Vector":
            f = d / a["DataSource"]
            good = a["FillType"] == "BinaryRaw" and f.is_file() and \
                f.stat().st_size == a["Size"] * ELEMENT_BYTES[a["Type"]]
            ok &= check(good, f"{label}: {a['Name']}: {a['DataSource']} holds Size {a['Size']} x {a['Type']}")
            ok &= check(a["AccessType"] in ("ReadOnly", "ReadWrite") and a["MemType"] in ("Global", "Constant")
                        and (a["MemType"] == "Global" or a["AccessType"] == "ReadOnly"),
                        f"{label}: {a['Name']}: {a['AccessType']} {a['MemType']}")
        elif a.get("FillType") == "BinaryRaw":  # a complex or non-finite scalar: its bytes
            f = d / a["DataSource"]
            ok &= check(a["MemoryType"] == "Scalar" and f.is_file() and f.stat().st_size == ELEMENT_BYTES[a["Type"]],
                        f"{label}: {a['Name']}: Scalar {a['Type']} in {a['DataSource']}")
        else:
            ok &= check(a["MemoryType"] == "Scalar" and a["FillType"] == "Constant"
                        and isinstance(a["FillValue"], (int, float)) and a["Type"] in ELEMENT_BYTES,
                        f"{label}: {a['Name']}: Scalar {a['Type']} = {a.get('FillValue')}")
    refs = spec.get("ReferenceArguments", [])
    for r in refs:
        target = next((a for a in args if a["Name"] == r["TargetName"]), None)
        f = d / r["DataSource"]
        good = target is not None and target["MemoryType"] == "Vector" and target.get("Output") is True and \
            target["AccessType"] == "ReadWrite" and r["FillType"] == "BinaryRaw" and "ValidationMethod" not in r \
            and f.is_file() and f.stat().st_size == target["Size"] * ELEMENT_BYTES[target["Type"]]
        ok &= check(good, f"{label}: answer {r['Name']} -> {r['TargetName']} ({r['DataSource']}, ReadWrite output)")
    if refs:
        tol = doc.get("cutune", {}).get("Tolerance", {})
        ok &= check(tol.get("Relative") == 1e-5 and isinstance(tol.get("Absolute"), float),
                    f"{label}: cutune.Tolerance {tol} is Kernel Tuner's allclose")
    gen = doc["General"]
    ok &= check(isinstance(gen.get("Objective"), str) and isinstance(gen.get("Minimize"), bool) or "Objective" not in gen,
                f"{label}: General.Objective {gen.get('Objective')} Minimize {gen.get('Minimize')}")
    return doc, ok


def kt_keys_of_t1(doc):
    """Kernel Tuner's valid set for the T1 file's own (translated) parameters and Conditions."""
    space = doc["ConfigurationSpace"]
    tune_params = {p["Name"]: p["Values"] for p in space["TuningParameters"]}
    restrictions = [c["Expression"] for c in space["Conditions"]]
    local = doc["KernelSpecification"]["LocalSize"]
    s = Searchspace(tune_params, restrictions, 1024, block_size_names=[local["X"], local["Y"], local["Z"]])
    return sorted(",".join(str(v) for v in c) for c in s.list)


def cutune_keys(cutune, t1, space_has_json):
    """The valid set cutune gives, or (None, why)."""
    if space_has_json:
        p = subprocess.run([cutune, "space", str(t1), "--json"], capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr.strip()
        out = json.loads(p.stdout)  # {"parameters": [...], "valid": ["v1,v2,...", ...], ...}
        configs = out["valid"] if isinstance(out, dict) and "valid" in out else out
        keys = []
        for c in configs:
            if isinstance(c, str):
                keys.append(c)
            elif isinstance(c, dict):
                keys.append(",".join(str(v) for v in c.values()))
            else:
                keys.append(",".join(str(v) for v in c))
        return sorted(keys), None
    p = subprocess.run([cutune, "space", str(t1), "--show", "0"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()
    import re
    m = re.search(r"valid size:\s+(\d+)", p.stdout)
    return (int(m.group(1)) if m else None), (None if m else "no 'valid size' in its output")


def check_callables(out):
    """What the translator must make of each callable in capture_scripts/callables.py."""
    doc = json.loads((out / "callables_1_scale_float_tile.json").read_text())
    spec, cut = doc["KernelSpecification"], doc["cutune"]
    conds = [c["Expression"] for c in doc["ConfigurationSpace"]["Conditions"]]
    check(conds == ["tile <= 4 and bx % 64 == 0 or unused == 0", "bx * tile >= 64", "unused == 0 or bx >= 128"],
          f"callables: lambdas over p[...] and over parameter names -> {conds}")
    check(spec["KernelName"] == "scale<float, tile>", "callables: the templated kernel name is kept as written")
    check(spec["ProblemSize"] == ["4096 // tile", 1], f"callables: problem_size lambda -> {spec['ProblemSize']}")
    check(spec["GridDivX"] == ["bx * 1"] and spec["GridDivY"] == ["by"] and spec["GridDivZ"] == [],
          f"callables: grid_div_x lambda with a closure value -> {spec['GridDivX']}")
    check(spec["LocalSize"] == {"X": "bx", "Y": "by", "Z": "block_size_z"},
          "callables: block_size_names -> LocalSize, completed with Kernel Tuner's defaults")
    check(spec["SharedMemory"] == "bx * tile * 4", f"callables: smem_args size -> {spec['SharedMemory']}")
    check(spec["CompilerOptions"] == ["-DSCALE=2"], f"callables: defines -> {spec['CompilerOptions']}")
    check([a["Name"] for a in spec["Arguments"]] == ["out", "in", "n", "coeff"]
          and spec["Arguments"][3]["MemType"] == "Constant",
          "callables: argument names from the kernel signature; cmem_args -> a Constant argument")
    check(cut["Launches"] == [{"KernelName": "scale<float, tile>", "Arguments": ["out", "in", "n"]}],
          "callables: the constant-memory argument is not passed to the kernel")
    data_in = numpy.fromfile(out / spec["Arguments"][1]["DataSource"], dtype="<f4")
    check(numpy.array_equal(data_in, numpy.arange(4096, dtype=numpy.float32)) and spec["Arguments"][2]["FillValue"] == 4096,
          "callables: the input array's data and the scalar's value")
    answer = numpy.fromfile(out / spec["ReferenceArguments"][0]["DataSource"], dtype="<f4")
    check(numpy.array_equal(answer, numpy.arange(4096, dtype=numpy.float32) * 2), "callables: the answer's data")
    check(cut["Tolerance"] == {"Relative": 1e-5, "Absolute": 1e-3} and cut["Verification"] == {"out": "reference"},
          "callables: atol -> cutune.Tolerance; the answered output verified against it")
    metrics = {m["Name"]: m["Expression"] for m in cut["Metrics"]}
    check(metrics == {"GB/s": "3.2768e-05 / (time / 1000.0)", "effective": "3.2768e-05 / (time / 1000.0) * tile",
                      "eff2": "effective * 2"},
          f"callables: metrics (closure values folded, a non-identifier metric inlined) -> {metrics}")
    check(doc["General"]["Objective"] == "GB/s" and doc["General"]["Minimize"] is False,
          "callables: objective GB/s is higher-is-better as Kernel Tuner's default map says")
    idx = json.loads((out / "capture.json").read_text())
    opts = idx["calls"][0]["options"]
    check(opts.get("strategy") == "random_sample" and opts.get("iterations") == 11,
          f"callables: capture.json keeps strategy and iterations ({opts})")
    c2 = json.loads((out / "callables_2_plain.json").read_text())
    check([c["Expression"] for c in c2["ConfigurationSpace"]["Conditions"]] == ["bx * by <= 512"],
          "callables: a dict-style function with a module constant -> 'bx * by <= 512'")
    c3 = json.loads((out / "callables_3_plain.json").read_text())
    check([c["Expression"] for c in c3["ConfigurationSpace"]["Conditions"]] == ["by != tile"],
          "callables: a (function, names) restriction is translated by position")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--material", required=True, help="the test material folder (tests/material/manifest.txt)")
    ap.add_argument("--strict-cutune", action="store_true")
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    examples = Path(a.material) / "data/real_kernels/kernel_tuner_examples"
    if not examples.is_dir():
        print(f"SKIPPED: no {examples}")
        return SKIP
    help_text = subprocess.run([a.cutune, "space", "--help"], capture_output=True, text=True).stdout
    space_has_json = "--json" in help_text
    tmp = Path(tempfile.mkdtemp(prefix="cutune-capture-test-"))
    try:
        # The scripts read their .cu files from, and write their results into, the working
        # directory: they run in a copy, never in the shared material.
        work = tmp / "scripts"
        shutil.copytree(examples, work)
        for s in (HERE / "capture_scripts").glob("*.py"):
            shutil.copy(s, work / s.name)
        for script, (want_rc, want_captured, want_unsupported, gib) in EXPECTED.items():
            if a.only and script not in a.only:
                continue
            if mem_available_gib() < gib:
                print(f"SKIPPED: {script}: needs about {gib} GiB of free memory, {mem_available_gib():.1f} available")
                continue
            out = tmp / "out" / script[:-3]
            rc, stdout, stderr = capture(work / script, out, work)
            if not check(rc == want_rc, f"{script}: exit {rc} (expected {want_rc})"):
                print(stderr[-3000:])
            idx = json.loads((out / "capture.json").read_text())
            captured = [c for c in idx["calls"] if c["status"] == "captured"]
            unsupported = [(c["kernel_name"], c["option"]) for c in idx["calls"] if c["status"] == "unsupported"]
            check(len(captured) == want_captured and unsupported == want_unsupported,
                  f"{script}: {len(captured)} calls captured, unsupported {unsupported}")
            for c in idx["calls"]:
                if c["status"] == "unsupported":
                    lines = [l for l in stderr.splitlines() if c["option"] in l and c["kernel_name"] in l]
                    check(len(lines) == 1, f"{script}: one line names the call and option: {lines[:1]}")
            for c in captured:
                t1 = out / c["t1"]
                label = f"{script} #{c['index']} {c['kernel_name']}"
                doc, ok = check_t1(t1, label)
                if c.get("kt_space"):
                    kt = json.loads((out / c["kt_space"]).read_text())
                    if "error" in kt:
                        print(f"note: {label}: Kernel Tuner 1.5 itself rejects the original restrictions: {kt['error']}")
                    else:
                        ours = kt_keys_of_t1(doc)
                        check(ours == kt["keys"], f"{label}: the T1 Conditions give Kernel Tuner's valid set "
                                                  f"({len(ours)} == {kt['size']})")
                        theirs, why = cutune_keys(a.cutune, t1, space_has_json)
                        want = kt["keys"] if space_has_json else kt["size"]
                        what = "valid set" if space_has_json else "valid size"
                        if a.strict_cutune:
                            check(theirs == want, f"{label}: cutune's {what} is Kernel Tuner's"
                                                  + (f" ({why})" if why else ""))
                        else:
                            same = theirs == want
                            print(f"note: {label}: cutune's {what} "
                                  + ("equals Kernel Tuner's" if same else f"differs or is not available ({why})"))
            if script == "callables.py":
                check_callables(out)
            if script == "vector_add.py":
                check("store_output_file('vector_add.json') skipped" in stderr,
                      "vector_add.py: the stand-in's store_output_file says it stored nothing")
            if script == "expdist.py":
                check("best GPU configuration" in stdout, "expdist.py: the script post-processes the stand-in's results")
            if script == "convolution_correct.py":
                check(any("comes from run_kernel" in w for c in idx["calls"] for w in c["warnings"])
                      and idx["calls"][0]["kind"] == "run_kernel",
                      "convolution_correct.py: the run_kernel call is captured; its placeholder output is no answer")
            shutil.rmtree(out, ignore_errors=True)  # reduction's data alone is 3.2 GB
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
