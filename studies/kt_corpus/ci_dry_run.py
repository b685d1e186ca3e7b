"""CI check of the corpus without a GPU: every corpus script whose own set-up needs no GPU runs
unchanged under `python -m cutune --dry-run`; each tune_kernel call's space must equal Kernel Tuner
1.5's valid keys (results/kt_corpus/kt_keys.json.gz, recorded by run_study.py), and the default
configuration of the call's T1 file must compile (`cutune compile --arch sm_90`). Where Kernel
Tuner 1.5 raised on the script (the recorded spaces_summary.json), cutune must raise the same
exception type.

    python -m studies.kt_corpus.ci_dry_run --cutune BIN [--corpus DIR] [--python PY] [--only ID ...]
        [--max-host-gib N] [--timeout S] [--no-compile]

Exit 0 when every script behaves as Kernel Tuner does or is a known gap (KNOWN_GAPS, said on its
line, and said again when it no longer differs), 1 when one differs, 77 when the corpus is not
restored (scripts/fetch_kt_corpus.py), no Python with numpy is found (PY, else python3) or every
script selected is left out (host memory over --max-host-gib, a module it needs missing).
CTest runs it once per script (kt-corpus:<id>), so `ctest -j` spreads the scripts over the cores.
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
import time

from . import kt_keys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(REPO, "studies", "kt_corpus")
RECORDED = os.path.join(REPO, "results", "kt_corpus")

# Scripts where cutune does not yet do what Kernel Tuner 1.5 does without a GPU, and why. A gap
# that closes is reported ("now behaves as Kernel Tuner": remove it here); a new difference fails.
KNOWN_GAPS = {
    "kernel_float_vector_add": "kernel_tuner.accuracy.TunablePrecision arguments are refused (NotImplementedError)",
    "gausstransform": 'its first call has lang="C" (a CPU function): cutune compiles CUDA only',
    "su3_bench_cuda": 'lang="cupy": the kernel includes cupy/complex.cuh, found only where CuPy is installed; '
                      "with CuPy 13 or 14 its headers need C++17 and the script passes -std=c++14, where Kernel "
                      "Tuner's cupy backend fails too (Thrust requires at least C++17)",
    "rte_sw_2stream": "the default does not compile: <float.h> sends auto to nvcc, where loop_unroll_factor_nlay "
                      "(declared under #ifndef kernel_tuner; Kernel Tuner 1.5 defines kernel_tuner as cutune does) is undefined",
    "rte_lw_solver_noscat": "the default does not compile: -Wno-deprecated-gpu-targets is an nvcc option NVRTC "
                            "refuses, and nvcc finds loop_unroll_factor_nlay undefined",
    "rte_apply_bc": "the default does not compile: -Wno-deprecated-gpu-targets is an nvcc option NVRTC refuses, "
                    "and nvcc finds loop_unroll_factor_nlay undefined",
}


def default_corpus():
    material = os.environ.get("CUTUNE_TEST_MATERIAL") or os.path.join(os.path.dirname(REPO), "shared")
    return os.path.join(material, "kt_corpus")


def recorded_outcomes():
    """{script id: exception type Kernel Tuner 1.5 raised, or None where it ran to the end}."""
    with open(os.path.join(RECORDED, "spaces_summary.json")) as f:
        scripts = json.load(f)["scripts"]
    out = {}
    for s in scripts:
        status = s.get("kt_status")
        if not status:
            continue
        error = status.get("error") if status.get("script_status") == "error" else None
        out[s["id"]] = error.split(":", 1)[0] if error else None
    return out


def call_dirs(out):
    """The dry run's call folders (call_<n>_<kernel>), in call order."""
    if not os.path.isdir(out):
        return []
    names = [n for n in os.listdir(out) if re.match(r"call_\d+_", n)]
    return [os.path.join(out, n) for n in sorted(names, key=lambda n: int(n.split("_")[1]))]


def raised(stderr):
    """The exception type of a Python traceback's last line ("TypeError: ..."), or None."""
    lines = [x for x in (stderr or "").strip().splitlines() if x.strip()]
    m = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\w*)\b", lines[-1]) if lines else None
    return m.group(1).rsplit(".", 1)[-1] if m else None


def dry_run(a, entry, work):
    root = os.path.join(work, entry["id"])
    shutil.copytree(os.path.join(a.corpus, entry["id"]), root, symlinks=True)
    for d in entry.get("make_dirs", []):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    cwd = os.path.join(root, entry.get("cwd") or ".")
    out = os.path.join(work, entry["id"] + ".dry")
    # The live Kernel Tuner comparison is kt-interop:package-spaces'; here the recorded keys are used.
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), CUTUNE_DRY_RUN_KT_SPACE="0")
    cmd = [a.python, "-m", "cutune", "--dry-run", "--out", out, os.path.relpath(os.path.join(root, entry["script"]), cwd)]
    try:
        p = subprocess.run(cmd + list(entry.get("args", [])), cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, errors="replace", timeout=a.timeout)
        return p.returncode, p.stderr, call_dirs(out), cwd
    except subprocess.TimeoutExpired:
        return "timeout", f"TimeoutExpired: more than {a.timeout:g} s", call_dirs(out), cwd


_FIND_CUPY = ("import importlib.util, os; s = importlib.util.find_spec('cupy'); "
              "print(os.path.join(os.path.dirname(s.origin), '_core', 'include') if s and s.origin else '')")


def compile_env(a):
    """The compile's environment: CuPy's headers of the Python that runs the scripts, as the
    package hands them to the engine ($CUTUNE_CUPY_INCLUDE), where that Python has CuPy."""
    if not hasattr(a, "_compile_env"):
        env = dict(os.environ)
        p = subprocess.run([a.python, "-c", _FIND_CUPY], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        folder = p.stdout.strip() if p.returncode == 0 else ""
        if folder and os.path.isdir(folder):
            env.setdefault("CUTUNE_CUPY_INCLUDE", folder)
        a._compile_env = env
    return a._compile_env


def compile_default(a, t1, cwd):
    try:
        p = subprocess.run([a.cutune, "compile", t1, "--arch", "sm_90"], cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", timeout=a.timeout,
                           env=compile_env(a))
    except subprocess.TimeoutExpired:
        return f"cutune compile took more than {a.timeout:g} s"
    if p.returncode == 0:
        return None
    lines = [x for x in p.stdout.strip().splitlines() if x.strip()]
    return lines[0][:300] if lines else f"exit {p.returncode}"


def check_script(a, entry, kt_calls, kt_raised, work):
    """The differences from Kernel Tuner of one script (empty: none) and a summary line."""
    started = time.perf_counter()
    rc, stderr, dirs, cwd = dry_run(a, entry, work)
    problems = []
    ours = raised(stderr) if rc != 0 else None
    if kt_raised != ours:
        said = ours or ("no error" if rc == 0 else f"exit {rc}")
        last = (stderr or "").strip().splitlines()[-1:] or [""]
        problems.append(f"Kernel Tuner 1.5 {'raises ' + kt_raised if kt_raised else 'runs it'}; cutune: {said} "
                        f"({last[0][:200]})")
    kt_spaces = list(kt_calls)
    for i, d in enumerate(dirs):
        try:
            with open(os.path.join(d, "space.json")) as f:
                keys = set(json.load(f)["keys"])
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"{os.path.basename(d)}: no space.json ({e})")
            continue
        kt = kt_spaces[i] if i < len(kt_spaces) else None
        if kt is not None and keys != kt:
            problems.append(f"{os.path.basename(d)}: {len(keys)} configurations, Kernel Tuner {len(kt)} "
                            f"(only cutune: {sorted(keys - kt)[:3]}, only Kernel Tuner: {sorted(kt - keys)[:3]})")
        t1 = os.path.join(d, "problem.json")
        if not a.no_compile and os.path.exists(t1):
            error = compile_default(a, t1, cwd)
            if error:
                problems.append(f"{os.path.basename(d)}: the default configuration does not compile: {error}")
    reached = sum(1 for k in kt_spaces if k is not None)
    if kt_raised is None and len(dirs) < reached and not problems:
        problems.append(f"{len(dirs)} tune_kernel calls reached, Kernel Tuner {reached}")
    summary = f"{len(dirs)} call(s), {time.perf_counter() - started:.1f} s"
    return problems, summary


def selected(a, entries):
    """(entry, reason it is left out or None) per script."""
    for e in entries:
        if a.only and e["id"] not in a.only:
            continue
        if e.get("host_memory_gib", 0) > a.max_host_gib:
            yield e, f"needs about {e['host_memory_gib']} GiB of host memory (--max-host-gib {a.max_host_gib:g})"
        elif e.get("requires"):
            missing = [m for m in e["requires"] if subprocess.run([a.python, "-c", f"import {m}"],
                                                                   capture_output=True).returncode != 0]
            yield e, (f"needs {', '.join(missing)}, which {a.python} lacks" if missing else None)
        else:
            yield e, None


def python_with_numpy(wanted):
    for p in (wanted, "python3"):
        if shutil.which(p) and subprocess.run([p, "-c", "import numpy"], capture_output=True).returncode == 0:
            return p
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--corpus", default=default_corpus())
    ap.add_argument("--python", default=sys.executable, help="a Python with numpy that runs the scripts")
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--max-host-gib", type=float, default=4)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args(argv)
    # The scripts run in their own folders: paths given relative to here must keep their meaning.
    a.cutune = os.path.abspath(a.cutune)
    if os.sep in a.python:
        a.python = os.path.abspath(a.python)
    with open(os.path.join(HERE, "manifest.json")) as f:
        entries = json.load(f)["scripts"]
    missing = [e["id"] for e in entries if not os.path.isfile(os.path.join(a.corpus, e["id"], e["script"]))]
    if missing:
        print(f"SKIPPED: the Kernel Tuner corpus is not restored at {a.corpus} ({len(missing)} scripts missing; "
              "scripts/fetch_kt_corpus.py restores it)")
        return 77
    a.python = python_with_numpy(a.python)
    if a.python is None:
        print("SKIPPED: no Python with numpy to run the corpus scripts (--python, else python3; "
              "scripts/kt_venv.sh makes one)")
        return 77
    with gzip.open(os.path.join(RECORDED, "kt_keys.json.gz"), "rt") as f:
        recorded_keys = json.load(f)
    outcomes = recorded_outcomes()
    failed, checked, started = [], 0, time.perf_counter()
    work = tempfile.mkdtemp(prefix="cutune-kt-corpus-ci-")
    try:
        for e, left_out in selected(a, entries):
            if left_out or e["id"] not in outcomes:
                print(f"{e['id']:40} left out: {left_out or 'Kernel Tuner was not recorded on it'}", flush=True)
                continue
            checked += 1
            # Decoded per script: the whole file's spaces take seconds to expand.
            kt_calls = [kt_keys.decode(c) if "values" in c else None for c in recorded_keys.get(e["id"], [])]
            problems, summary = check_script(a, e, kt_calls, outcomes[e["id"]], work)
            gap = KNOWN_GAPS.get(e["id"])
            if problems and gap:
                print(f"{e['id']:40} known gap ({gap}); {summary}: " + "; ".join(problems), flush=True)
            elif problems:
                failed.append(e["id"])
                print(f"{e['id']:40} DIFFERS from Kernel Tuner 1.5, {summary}:\n    " + "\n    ".join(problems),
                      flush=True)
            else:
                note = " (listed as a known gap, now behaves as Kernel Tuner: remove it from KNOWN_GAPS)" if gap else ""
                print(f"{e['id']:40} as Kernel Tuner 1.5{note}; {summary}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"ci_dry_run: {len(failed)} script(s) differ ({', '.join(failed) or 'none'}), "
          f"{time.perf_counter() - started:.0f} s")
    if failed:
        return 1
    if not checked:
        print("SKIPPED: every script selected was left out (said above)")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
