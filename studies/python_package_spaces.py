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


SYNTHETIC = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from cutune.searchspace import Space
tp = {"block_size_x": [32 * i for i in range(1, 33)], "block_size_y": [1, 2, 4, 8, 16, 32],
      "tile_x": list(range(1, 33)), "tile_y": list(range(1, 33)), "unroll": [0, 1, 2, 4], "vec": [1, 2, 4],
      "sh": [0, 1, 2]}
r = ["block_size_x*block_size_y >= 64", "tile_x*tile_y*vec <= 1024", "unroll == 0 or tile_x % unroll == 0"]
bsn = ["block_size_x", "block_size_y", "block_size_z"]
t = time.perf_counter(); s = Space(tp, r, bsn); ours = time.perf_counter() - t
out = {"space": "synthetic: 7 parameters, product 14155776, 3 string restrictions", "cutune_size": len(s),
       "cutune_seconds": ours}
try:
    from kernel_tuner.searchspace import Searchspace
    t = time.perf_counter(); k = Searchspace(tp, r, 1024, block_size_names=bsn); kt = time.perf_counter() - t
    out.update(kt_size=k.size, kt_seconds=kt, equal=set(map(tuple, (tuple(c.values()) for c in s.configs()))) == set(k.list))
except ImportError:
    pass
print(json.dumps(out))
"""


def synthetic(python):
    p = subprocess.run([python, "-c", SYNTHETIC, os.path.join(REPO, "python")], stdout=subprocess.PIPE, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else {"error": f"exit {p.returncode}"}


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable)
    material = os.environ.get("CUTUNE_TEST_MATERIAL")
    ap.add_argument("--corpus", default=os.path.join(material, "kt_corpus") if material
                    else os.path.normpath(os.path.join(REPO, "..", "kt_corpus")))
    ap.add_argument("--spec", default=os.path.join(REPO, "studies", "kt_corpus", "corpus_spec.json"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    ap.add_argument("--synthetic", action="store_true", help="also a synthetic space of 1.26 million valid "
                    "configurations, both tools (about a minute)")
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
    doc = {"python": a.python, "scripts": rows}
    if a.synthetic:
        doc["synthetic"] = synthetic(a.python)
        print("synthetic:", json.dumps(doc["synthetic"]), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
    bad = [(r["id"], c["call"]) for r in rows for c in r["calls"] if c.get("equal") is False]
    for b in bad:
        print("DIFFERENT:", *b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
