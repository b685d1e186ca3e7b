#!/usr/bin/env python3
"""cutune's element test against numpy itself: for every element type Kernel Tuner passes,
pairs placed on both sides of the tolerance's edge (and NaN, infinities, zeros, subnormals)
get the verdict Kernel Tuner's default check gives them, numpy.allclose(expected, result,
atol=atol, equal_nan=<expected has a NaN>) element by element; integers are compared exactly
(cutune is stricter there, by design). Also the rounding of a Python float to float16 and
bfloat16 (fill values, atol, rtol) against numpy's and ml_dtypes' own.

  test_element_check_numpy.py PROBE   (PROBE: the element_check_probe executable)

Exit 77 (CTest: skipped) when numpy is not importable; bfloat16 is skipped, saying so, when
ml_dtypes is not installed; complex verdicts need numpy >= 2 (its vectorised absolute).
"""
import os
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: numpy is not importable ({e})")
    sys.exit(SKIP)
try:
    import ml_dtypes
    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BFLOAT16 = None

PROBE = sys.argv[1]
NUMPY_MAJOR = int(np.__version__.split(".")[0])
TOLERANCES = [(1e-6, 1e-5), (1e-3, 1e-3), (1e-2, 0.0), (0.0, 1e-2), (0.05, 0.01), (0.5, 0.0)]
T1_NAME = {"float16": "half", "bfloat16": "bfloat16", "float32": "float", "float64": "double",
           "complex64": "float2", "complex128": "double2"}
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def probe(*args):
    return subprocess.run([PROBE, *args], check=True, capture_output=True, text=True).stdout


def kt_verdicts(e, g, atol, rtol):
    # Kernel Tuner 1.5's _default_verify_function, element by element.
    with np.errstate(all="ignore"):
        return np.isclose(e, g, rtol=rtol, atol=atol, equal_nan=bool(np.isnan(e).any()))


def specials(dtype):
    info = np.finfo(np.float32 if dtype == BFLOAT16 else dtype)
    values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(info.tiny), float(info.max) / 2]
    if dtype == np.float16:
        values += [6e-8, 6.1e-5, 65504.0, 1e-3]
    return np.array(values, dtype=np.float64)


def real_pairs(dtype, atol, rtol, rng):
    """e and g of `dtype`: g a few ulps around e's tolerance edge, plus special values."""
    e = (rng.uniform(-100, 100, 3000) * 10.0 ** rng.integers(-6, 3, 3000)).astype(dtype)
    with np.errstate(all="ignore"):
        bound = (atol + rtol * np.abs(e.astype(np.float64)))
        g = (e.astype(np.float64) + rng.choice([-1, 1], e.size) * bound * rng.uniform(0.98, 1.02, e.size)).astype(dtype)
    # and the neighbours of each g, one ulp away, which often cross the edge
    bits = np.dtype(f"uint{8 * np.dtype(dtype).itemsize}")
    step = (g.view(bits) + np.array(1, dtype=bits)).view(dtype)
    s = specials(dtype).astype(dtype)
    se, sg = np.repeat(s, s.size), np.tile(s, s.size)
    return np.concatenate([e, e, se]), np.concatenate([g, step, sg])


def complex_pairs(dtype, atol, rtol, rng):
    real = np.float32 if dtype == np.complex64 else np.float64
    n = 3000
    e = (rng.uniform(-100, 100, n) + 1j * rng.uniform(-100, 100, n)) * 10.0 ** rng.integers(-6, 3, n)
    e = e.astype(dtype)
    g = (e.astype(np.complex128) * (1 + rng.uniform(-1e-3, 1e-3, n))).astype(dtype)
    # e = g + delta with |delta| a few ulps around the edge, where |z|'s last bit decides (libm's
    # hypot instead of numpy's vectorised absolute turns a few dozen verdicts here)
    theta = rng.uniform(0, 2 * np.pi, n)
    with np.errstate(all="ignore"):
        bound = (atol + rtol * np.abs(g)).astype(np.float64)
    ulps = 1 + rng.integers(-4, 5, n) * np.finfo(real).eps
    delta = bound * ulps * np.exp(1j * theta)
    e = np.where(rng.uniform(size=n) < 0.5, e, (g.astype(np.complex128) + delta).astype(dtype))
    parts = np.array([0.0, 1.0, -2.5, np.inf, -np.inf, np.nan], dtype=real)
    # complex(x, y) keeps infinities and NaNs in their own part (x + 1j*y would mix them)
    s = np.array([complex(a, b) for a in parts for b in parts], dtype=dtype)
    se, sg = np.repeat(s, s.size), np.tile(s, s.size)
    return np.concatenate([e, se]), np.concatenate([g, sg])


def cross_check(dtype, make, rng, tmp):
    name = T1_NAME[np.dtype(dtype).name]
    for atol, rtol in TOLERANCES:
        e, g = make(dtype, atol, rtol, rng)
        for label, (ee, gg) in {"with NaN answers": (e, g),
                                "no NaN in the answer": (e[~np.isnan(e)], g[~np.isnan(e)])}.items():
            fe, fg = os.path.join(tmp, "e.bin"), os.path.join(tmp, "g.bin")
            ee.tofile(fe)
            gg.tofile(fg)
            got = probe("check", name, repr(atol), repr(rtol), fe, fg).strip()
            want = "".join("1" if v else "0" for v in kt_verdicts(ee, gg, atol, rtol))
            differ = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
            detail = ""
            if differ:
                i = differ[0]
                detail = f"; first at {i}: expected {ee[i]!r} got {gg[i]!r}: numpy {want[i]}, cutune {got[i]}"
            check(len(got) == len(want) and not differ,
                  f"{np.dtype(dtype).name} atol={atol} rtol={rtol} {label}: {len(want)} pairs, "
                  f"{want.count('0')} failing, {len(differ)} verdicts differ{detail}")


def check_rounding(rng, tmp):
    """Python floats to float16 (numpy: straight from the double) and bfloat16 (ml_dtypes'
    weak-scalar path: through float32)."""
    d = np.concatenate([rng.normal(0, 1, 20000) * 10.0 ** rng.integers(-9, 6, 20000),
                        [1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40, 65519.99, 65520.0, 2**-25, 2**-25 * 1.0001,
                         2**-24 * 1.5, 1e-5, 1e-6, 0.0, -0.0, np.inf, -np.inf, 1e300]])
    f = os.path.join(tmp, "d.bin")
    d.astype(np.float64).tofile(f)
    def weak(x, dtype):  # x as allclose's atol/rtol reach an array of dtype: a weak Python float
        with np.errstate(all="ignore"):
            if NUMPY_MAJOR < 2:  # value-based casting: float16 where it fits (the rest: float32 math)
                return int(np.array(x).astype(dtype).view(np.uint16))
            return int((float(x) * np.ones(1, dtype=dtype)).view(np.uint16)[0])
    got = [int(x, 16) for x in probe("round", "half", f).split()]
    want = [weak(x, np.float16) for x in d]
    check(got == want, f"Python float -> float16 rounding of {len(d)} values equals numpy's")
    if BFLOAT16 is None:
        print("SKIPPED: bfloat16 rounding: ml_dtypes is not installed")
        return
    got = [int(x, 16) for x in probe("round", "bfloat16", f).split()]
    want = [weak(x, BFLOAT16) for x in d]
    check(got == want, f"Python float -> bfloat16 rounding of {len(d)} values equals ml_dtypes'")


def main():
    rng = np.random.default_rng(20240607)
    print(f"numpy {np.__version__}, ml_dtypes {'absent' if BFLOAT16 is None else ml_dtypes.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        check_rounding(rng, tmp)
        for dtype in (np.float16, np.float32, np.float64):
            cross_check(dtype, real_pairs, rng, tmp)
        if BFLOAT16 is not None:
            cross_check(BFLOAT16, real_pairs, rng, tmp)
        else:
            print("SKIPPED: bfloat16 verdicts: ml_dtypes is not installed")
        if NUMPY_MAJOR >= 2:
            for dtype in (np.complex64, np.complex128):
                cross_check(dtype, complex_pairs, rng, tmp)
        else:
            print(f"SKIPPED: complex verdicts: numpy {np.__version__} takes libm's hypot for |z|, "
                  "cutune mirrors numpy 2's vectorised absolute")
        # integers: exact, whatever the tolerance (numpy would accept 200000 for 200001)
        for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
            info = np.iinfo(dtype)
            e = rng.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True)
            g = e.copy()
            g[::3] = g[::3] + np.array(1, dtype=dtype)
            fe, fg = os.path.join(tmp, "e.bin"), os.path.join(tmp, "g.bin")
            e.tofile(fe)
            g.tofile(fg)
            got = probe("check", np.dtype(dtype).name, "1e-06", "1e-05", fe, fg).strip()
            check(got == "".join("1" if a == b else "0" for a, b in zip(e, g)),
                  f"{np.dtype(dtype).name}: exact equality")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
