"""The Python package's search spaces against Kernel Tuner 1.5's, on the corpus of real scripts.

Each corpus script runs unchanged under `python -m cutune --dry-run` (its `import kernel_tuner`
resolving to cutune), in a copy of its folder; every tune_kernel call writes the valid
configurations the package built (space.json) and, in the same process, those of Kernel Tuner
1.5's own Searchspace for the same arguments (kt_space.json), with the seconds each took.

    python3 -m studies.python_package_spaces --python KT_VENV_PYTHON --corpus DIR --spec SPEC.json
        [--only ID ...] [--out results/kt_corpus/python_package_spaces.json]
Exit 0 when every call's key sets are equal, 1 otherwise (listed), 77 without the corpus.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_script(python, corpus, entry, timeout):
    src = os.path.join(corpus, entry["id"])
    work = tempfile.mkdtemp(prefix=f"cutune-dry-{entry['id']}-")
    try:
        shutil.copytree(src, os.path.join(work, "s"), symlinks=True)
        root = os.path.join(work, "s")
        for d in entry.get("make_dirs", []):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        cwd = os.path.join(root, entry.get("cwd") or ".")
        out = os.path.join(work, "out")
        script = os.path.relpath(os.path.join(root, entry["script"]), cwd)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        cmd = [python, "-m", "cutune", "--dry-run", "--out", out, script] + list(entry.get("args", []))
        try:
            p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=timeout)
            rc, tail = p.returncode, (p.stderr or "").strip().splitlines()[-1:]
        except subprocess.TimeoutExpired:
            rc, tail = "timeout", [f"more than {timeout} s"]
        calls = []
        for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
            d = os.path.join(out, name)
            ours = _load(os.path.join(d, "space.json")) or {}
            kt = _load(os.path.join(d, "kt_space.json"))
            call = {"call": name, "cutune_size": ours.get("size"), "cutune_seconds": ours.get("seconds")}
            if kt is None:
                call["kt"] = "Kernel Tuner not importable"
            elif "error" in kt:
                call["kt"] = kt["error"]
            else:
                call.update(kt_size=kt["size"], kt_seconds=kt["seconds"], equal=kt["keys"] == ours.get("keys"))
            calls.append(call)
        return {"id": entry["id"], "exit": rc, "stderr_tail": tail, "calls": calls}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--corpus", default=os.environ.get("CUTUNE_KT_CORPUS", "/work/kt_corpus"))
    ap.add_argument("--spec", default=os.path.join(REPO, "studies", "kt_corpus", "corpus_spec.json"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.corpus) or not os.path.isfile(a.spec):
        print(f"SKIPPED: no corpus at {a.corpus} or no spec at {a.spec} (scripts/fetch_kt_corpus.py)")
        return 77
    with open(a.spec) as f:
        entries = json.load(f)["scripts"]
    rows = []
    for e in entries:
        if a.only and e["id"] not in a.only:
            continue
        if not os.path.isdir(os.path.join(a.corpus, e["id"])):
            rows.append({"id": e["id"], "exit": "missing", "calls": []})
            continue
        r = run_script(a.python, a.corpus, e, a.timeout)
        rows.append(r)
        for c in r["calls"]:
            print(f"{e['id']:38} {c['call']:34} cutune {c['cutune_size']} in {c['cutune_seconds'] or 0:.3f} s; "
                  + (f"KT {c['kt_size']} in {c['kt_seconds']:.3f} s equal={c['equal']}" if "kt_size" in c
                     else f"KT: {c.get('kt')}"), flush=True)
        if not r["calls"]:
            print(f"{e['id']:38} no tune_kernel call (exit {r['exit']}): {' '.join(r.get('stderr_tail', []))}",
                  flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"python": a.python, "scripts": rows}, f, indent=1)
    bad = [(r["id"], c["call"]) for r in rows for c in r["calls"] if c.get("equal") is False]
    for b in bad:
        print("DIFFERENT:", *b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
