#!/usr/bin/env python3
"""The corpus study, one command: for every script of studies/kt_corpus/manifest.json, what Kernel
Tuner 1.5.0 does with it without a GPU (kt_intercept.py: each call, its Python features and the
search space Kernel Tuner builds) and how far cutune's current capture gets (scripts/cutune-capture,
then `cutune space FILE --json` compared key by key with Kernel Tuner's space and `cutune compile
FILE --arch sm_90` of the default configuration). Failures are sorted into the classes of the
Kernel Tuner users' issue (classify.py).

    python3 -m studies.kt_corpus.run_study [--corpus DIR] [--kt-python PY] [--cutune BIN]
                                           [--only ID ...] [--max-host-gib N] [--work DIR]

--corpus       where scripts/fetch_kt_corpus.py restored the corpus (its default)
--kt-python    a Python with kernel_tuner==1.5.0 and numpy (scripts/kt_venv.sh; default build/kt-venv)
--cutune       the cutune binary (default build/tuner/cli/cutune)
--max-host-gib scripts whose manifest says they need more host memory are skipped, said so (8)
--work         scratch folder: each script runs in a fresh copy of its folder there

Writes results/kt_corpus/: spaces_summary.json, kt_keys.json.gz (each tune_kernel call's valid
keys, for equality tests), capture_status.json and .md, and README.md's tables. --only runs a
subset and merges it into the existing files.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import classify, features, report

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OUT = REPO / "results" / "kt_corpus"
SCRIPT_TIMEOUT_S = 900
TOOL_TIMEOUT_S = 300


def default_corpus():
    material = os.environ.get("CUTUNE_TEST_MATERIAL") or str(REPO.parent / "shared")
    return Path(material) / "kt_corpus"


def fresh_copy(corpus, entry, work, tag):
    """A clean copy of the script's files, so that what one run writes (caches, .npy files,
    results) never reaches another run or the restored corpus."""
    dest = work / entry["id"] / tag
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(corpus / entry["id"], dest)
    return dest / entry["cwd"], dest / entry["script"]


def run(cmd, cwd, env=None, timeout=TOOL_TIMEOUT_S):
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                              errors="replace")
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or "", e.stderr or ""


def tail(text, lines=8):
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return "\n".join((text or "").strip().splitlines()[-lines:])


def kt_side(entry, corpus, work, kt_python):
    import gzip
    cwd, script = fresh_copy(corpus, entry, work, "kt")
    out = work / entry["id"] / "kt.json.gz"
    out.unlink(missing_ok=True)
    rc, stdout, stderr = run([kt_python, str(HERE / "kt_intercept.py"), str(out), str(script), *entry["args"]],
                             cwd, timeout=SCRIPT_TIMEOUT_S)
    if not out.is_file():
        return {"status": {"script_status": "no record", "rc": rc, "stderr_tail": tail(stderr)}, "calls": []}
    with gzip.open(out, "rt") as f:
        record = json.load(f)
    record["status"]["rc"] = rc
    return record


def cutune_space(cutune, t1, cwd):
    rc, stdout, stderr = run([cutune, "space", str(t1), "--json"], cwd)
    if rc != 0:
        return None, tail(stderr or stdout, 4)
    try:
        return json.loads(stdout), None
    except ValueError as e:
        return None, f"unreadable JSON from cutune space: {e}"


def cutune_compile(cutune, t1, cwd):
    rc, stdout, stderr = run([cutune, "compile", str(t1), "--arch", "sm_90"], cwd)
    return rc == 0, None if rc == 0 else tail(stderr or stdout, 12)


def compare_keys(kt_call, space):
    if kt_call is None or "kt_keys" not in kt_call:
        return None
    kt_keys, cu_keys = set(kt_call["kt_keys"]), set(space.get("valid", []))
    return {"equal": kt_keys == cu_keys, "kt": len(kt_keys), "cutune": len(cu_keys),
            "only_kt": sorted(kt_keys - cu_keys)[:5], "only_cutune": sorted(cu_keys - kt_keys)[:5]}


def capture_side(entry, corpus, work, kt_python, cutune, kt_calls):
    cwd, script = fresh_copy(corpus, entry, work, "capture")
    out = work / entry["id"] / "capture_out"
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, CUTUNE_CAPTURE_PYTHON=kt_python)
    rc, stdout, stderr = run([str(REPO / "scripts" / "cutune-capture"), "--out", str(out), str(script),
                              *entry["args"]], cwd, env=env, timeout=SCRIPT_TIMEOUT_S)
    index = out / "capture.json"
    if not index.is_file():
        return {"rc": rc, "status": "no capture.json", "message": tail(stderr), "calls": []}
    doc = json.loads(index.read_text())
    tune_kt = [c for c in kt_calls if c["kind"] == "tune_kernel"]
    calls, n_tune = [], 0
    for c in doc.get("calls", []):
        row = {k: c.get(k) for k in ("index", "kind", "kernel_name", "status", "message", "warnings")}
        kt_call = None
        if c["kind"] == "tune_kernel":
            kt_call = tune_kt[n_tune] if n_tune < len(tune_kt) else None
            n_tune += 1
        if c.get("status") == "captured" and c["kind"] == "tune_kernel":
            t1 = out / c["t1"]
            space, error = cutune_space(cutune, t1, cwd)
            row["space_error"] = error
            if space is not None:
                row["default"] = space.get("default")
                row["space"] = compare_keys(kt_call, space)
            row["compiled"], row["compile_error"] = cutune_compile(cutune, t1, cwd)
        calls.append(row)
    for big in out.glob("*.bin"):  # the argument data is not needed once compiled: disk stays free
        big.unlink()
    return {"rc": rc, "status": doc.get("status"), "message": doc.get("message"),
            "stderr_tail": tail(stderr, 6) if rc not in (0, 2) else None, "calls": calls}


def study_one(entry, args):
    print(f"run_study: {entry['id']}", file=sys.stderr, flush=True)
    need = entry.get("host_memory_gib", 0)
    if need > args.max_host_gib:
        skip = f"skipped: needs about {need} GiB of host memory (--max-host-gib {args.max_host_gib})"
        return {"id": entry["id"], "skipped": skip}
    for module in entry.get("requires", []):
        if run([args.kt_python, "-c", f"import {module}"], args.work)[0] != 0:
            return {"id": entry["id"], "skipped": f"skipped: the script needs {module}, which {args.kt_python} "
                                                   f"lacks ({args.kt_python} -m pip install {module})"}
    kt = kt_side(entry, args.corpus, args.work, args.kt_python)
    cap = capture_side(entry, args.corpus, args.work, args.kt_python, args.cutune, kt["calls"])
    script_files = [args.corpus / entry["id"] / entry["script"]]
    return {"id": entry["id"], "kt": kt, "capture": cap,
            "features": features.script_features(script_files[0], kt["calls"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--kt-python", default=str(REPO / "build" / "kt-venv" / "bin" / "python"))
    parser.add_argument("--cutune", default=str(REPO / "build" / "tuner" / "cli" / "cutune"))
    parser.add_argument("--only", nargs="+", default=None)
    parser.add_argument("--max-host-gib", type=float, default=8)
    parser.add_argument("--work", type=Path, default=Path("/tmp") / "cutune-kt-corpus-study")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    manifest = json.loads((HERE / "manifest.json").read_text())["scripts"]
    # The tools run in each script's folder: paths given relative to here must not change meaning.
    args.kt_python, args.cutune = str(Path(args.kt_python).absolute()), str(Path(args.cutune).absolute())
    args.corpus, args.work = args.corpus.absolute(), args.work.absolute()
    for path, what in ((args.kt_python, "--kt-python"), (args.cutune, "--cutune")):
        if not Path(path).is_file():
            print(f"run_study: {what} {path}: no such file", file=sys.stderr)
            return 2
    missing = [e["id"] for e in manifest if not (args.corpus / e["id"] / e["script"]).is_file()]
    if missing:
        print(f"run_study: {args.corpus}: {len(missing)} scripts missing ({', '.join(missing[:3])}...); "
              f"run scripts/fetch_kt_corpus.py first", file=sys.stderr)
        return 2
    selected = [e for e in manifest if not args.only or e["id"] in args.only]
    args.work.mkdir(parents=True, exist_ok=True)
    rows = [study_one(e, args) for e in selected]
    for row in rows:
        classify.classify(row)
    report.write(args.out, manifest, rows, merge=bool(args.only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
