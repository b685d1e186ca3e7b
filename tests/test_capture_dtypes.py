#!/usr/bin/env python3
"""cutune-capture takes every element type Kernel Tuner passes (float16, bfloat16 through
ml_dtypes, complex64, complex128, bool, as arrays, answers and scalars) and writes a T1 file
that cutune reads back to the same bytes: a Kernel Tuner script is captured, then
element_check_probe loads the T1 as cutune tune does and prints each argument's host data,
which must equal the script's arrays and scalars byte for byte.

  test_capture_dtypes.py PROBE   (PROBE: the element_check_probe executable)

Exit 77 (CTest: skipped) when numpy is not importable; the bfloat16 part is skipped, saying
so, when ml_dtypes is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SKIP = 77
try:
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: numpy is not importable ({e})")
    sys.exit(SKIP)
try:
    import ml_dtypes  # noqa: F401
    HAVE_BF16 = True
except ImportError:
    HAVE_BF16 = False

REPO = Path(__file__).resolve().parent.parent
PROBE = sys.argv[1]
failures = []

SCRIPT = textwrap.dedent('''
    import numpy as np
    import kernel_tuner
    HAVE_BF16 = {have_bf16}
    if HAVE_BF16:
        import ml_dtypes  # registers np.dtype("bfloat16"), as Kernel Tuner's accuracy module looks it up
    n = 6
    rng = np.random.default_rng(3)
    h = rng.uniform(-2, 2, n).astype(np.float16)
    c = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64)
    z = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex128)
    flags = np.array([True, False, True, True, False, False])
    out_h = np.zeros(n, dtype=np.float16)
    out_c = np.zeros(n, dtype=np.complex64)
    args = [out_h, out_c, h, c, z, flags, np.float16(0.1), np.complex64(1 + 2j), np.complex128(3 - 4j),
            np.float32(np.inf), np.bool_(True), np.int32(n)]
    names = "out_h, out_c, h, c, z, flags, sh, sc, sz, sinf, sflag, n"
    answer = [h * np.float16(2), c * np.complex64(1j), None, None, None, None, None, None, None, None, None, None]
    if HAVE_BF16:
        bf = np.asarray(rng.uniform(-2, 2, n), dtype=np.dtype("bfloat16"))
        args += [bf, np.dtype("bfloat16").type(1.5)]
        answer += [None, None]
        names += ", bf, sbf"
    source = "extern \\"C\\" __global__ void k(" + ", ".join("int " + a for a in names.split(", ")) + ") {{}}"
    kernel_tuner.tune_kernel("k", source, n, args, {{"block_size_x": [32, 64]}}, answer=answer, atol=1e-2)
''')


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)
    return cond


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "dtypes_script.py"
        script.write_text(SCRIPT.format(have_bf16=HAVE_BF16))
        out = tmp / "capture"
        env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        r = subprocess.run([sys.executable, "-m", "cutune_capture", "--out", str(out), str(script)],
                           capture_output=True, text=True, env=env)
        print(r.stderr.strip())
        if not check(r.returncode == 0, f"the capture exits 0 (got {r.returncode})"):
            return 1
        t1_file = next(out.glob("dtypes_script_1_k.json"))
        doc = json.loads(t1_file.read_text())
        args = {a["Name"]: a for a in doc["KernelSpecification"]["Arguments"]}
        want_types = {"out_h": "half", "out_c": "float2", "h": "half", "c": "float2", "z": "double2",
                      "flags": "bool", "sh": "half", "sc": "float2", "sz": "double2", "sinf": "float",
                      "sflag": "bool", "n": "int32"}
        if HAVE_BF16:
            want_types.update(bf="bfloat16", sbf="bfloat16")
        else:
            print("SKIPPED: bfloat16: ml_dtypes is not installed")
        check({k: a["Type"] for k, a in args.items()} == want_types, f"T1 types {want_types}")
        check(args["sz"]["FillType"] == "BinaryRaw" and args["sinf"]["FillType"] == "BinaryRaw",
              "complex and non-finite scalars travel as their bytes (BinaryRaw)")
        check(args["sh"]["FillValue"] == float(np.float16(0.1)), "a float16 scalar's FillValue is its exact value")
        check(doc["cutune"]["Tolerance"] == {"Relative": 1e-5, "Absolute": 1e-2}, "atol reaches cutune.Tolerance")

        p = subprocess.run([PROBE, "host", str(t1_file)], capture_output=True, text=True)
        if not check(p.returncode == 0, f"cutune loads the T1 and builds its host data ({p.stderr.strip()})"):
            return 1
        host, refs = {}, {}
        for line in p.stdout.splitlines():
            parts = line.split()
            table = refs if parts[0] == "reference" else host
            name, type_, count, data = parts[-4:]
            table[name] = (type_, int(count), bytes.fromhex(data) if data != "" else b"")
        # the script's own values, made again with the same generator
        rng = np.random.default_rng(3)
        n = 6
        h = rng.uniform(-2, 2, n).astype(np.float16)
        c = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64)
        z = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex128)
        expected = {"h": h, "c": c, "z": z, "flags": np.array([1, 0, 1, 1, 0, 0], dtype=np.uint8),
                    "sh": np.float16(0.1), "sc": np.complex64(1 + 2j), "sz": np.complex128(3 - 4j),
                    "sinf": np.float32(np.inf), "sflag": np.uint8(1), "n": np.int32(n),
                    "out_h": np.zeros(n, np.float16), "out_c": np.zeros(n, np.complex64)}
        if HAVE_BF16:
            expected["bf"] = np.asarray(rng.uniform(-2, 2, n), dtype=np.dtype("bfloat16"))
            expected["sbf"] = np.dtype("bfloat16").type(1.5)
        for name, value in expected.items():
            got = host.get(name)
            want = np.asarray(value).reshape(-1).view(np.uint8).tobytes()
            check(got is not None and got[2] == want, f"{name}: cutune's bytes equal the script's "
                  f"({got[0] if got else '?'} x {got[1] if got else '?'})")
        check(refs.get("out_h", (0, 0, b""))[2] == (h * np.float16(2)).view(np.uint8).tobytes(),
              "the float16 answer reads back as the reference of out_h")
        check(refs.get("out_c", (0, 0, b""))[2] == (c * np.complex64(1j)).view(np.uint8).tobytes(),
              "the complex64 answer reads back as the reference of out_c")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
