"""The corpus of third-party Kernel Tuner scripts on the lent GPU: each script run by Kernel Tuner
1.5.0 and by cutune's package, the same script unchanged, under the same time budget per
tune_kernel call; both winners re-measured in one cutune process. Writes
OUT/<gpu-slug>/kt_scripts.json, kt_scripts.md (the table, from the JSON) and
kt_scripts_logs.tar.gz (each run's output).

On the GPU machine, from the repository root, in one device call (what the CPU machine stages:
scripts/stage_gpu.sh for .gpu, scripts/stage_kt_bench.sh for .kt-wheels and .kt-bench):

    scripts/unstage_gpu.sh && python3 -m studies.kt_corpus.gpu_benchmark --out $OUT

Per script, in a fresh copy of its folder for each tool (the manifest's cwd and args):
  Kernel Tuner: budget_child.py with the real kernel_tuner 1.5.0 (installed from --wheels into a
     folder of its own; the backend the script asks for: lang="CUDA" or none is cuda-python,
     "cupy" CuPy; --kt-cuda-lang forces one for lang CUDA/none);
  cutune: budget_child.py with `import kernel_tuner` resolving to the package (as `python -m
     cutune SCRIPT` does), the binaries from --bin;
  then, per tune_kernel call both tools finished, `cutune measure T1 --config OURS --config
     THEIRS` on the T1 file the package wrote: both winners in one process, interleaved.
budget_child.py says how the budget is imposed (time_limit per call; Kernel Tuner's brute force,
which refuses a time limit, becomes random_sample over the whole space).

The run stops starting work when --total seconds are spent (each child's time-out is cut to what
is left), so the device call ends in time; scripts not reached are listed as such. --only/--skip
and --merge split the corpus over several calls. --table JSON rewrites the table from a stored JSON.
"""
import argparse
import datetime
import glob
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

from studies.bench_real_kernels import derive

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(REPO, "studies", "kt_corpus")
MANIFEST = os.path.join(HERE, "manifest.json")
CHILD = os.path.join(HERE, "budget_child.py")
# What a child needs beyond its tune_kernel calls: Python and the tool's imports (Kernel Tuner
# with scipy and pandas, or cupy), the script's own setup. Seconds, per child.
CHILD_STARTUP_S = 20.0
# Seconds `cutune measure` gets for the two winners of one call.
MEASURE_TIMEOUT_S = 60.0


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown-gpu"


def tail(text, n=2000):
    return (text or "")[-n:]


def first_line(text):
    for line in (text or "").strip().splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


class Bench:
    def __init__(self, args):
        self.args = args
        self.started = time.perf_counter()
        self.tmp = tempfile.mkdtemp(prefix="cutune-kt-scripts-")
        self.cutune = os.path.join(args.bin, "cutune")
        self.doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "command": " ".join(shlex.quote(a) for a in sys.argv),
                    "budget_s_per_call": args.budget, "max_calls": args.max_calls, "total_s": args.total,
                    "cutune_strategy": args.cutune_strategy, "kt_cuda_lang": args.kt_cuda_lang, "scripts": []}
        self.kt_site = args.kt_site
        self.out_dir = None

    # ---- set-up ------------------------------------------------------------------------------

    def left_s(self):
        return self.args.total - (time.perf_counter() - self.started)

    def run(self, cmd, timeout, env=None, cwd=None, log=None):
        """(exit code or "timeout", output, seconds). A command past its time-out is killed with
        its process group: the package's `cutune tune` and its workers must not go on holding
        the GPU while the next script runs."""
        t = time.perf_counter()
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                 env=env, cwd=cwd, start_new_session=True)
        except OSError as e:  # no such command (nvidia-smi on a machine without a GPU)
            return "not run", f"{type(e).__name__}: {e}", 0.0
        try:
            out, _ = p.communicate(timeout=max(timeout, 1.0))
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, _ = p.communicate()
            rc = "timeout"
        if log:
            with open(log, "w") as f:
                f.write(f"$ {' '.join(shlex.quote(c) for c in cmd)}\n(exit {rc})\n{out}")
        return rc, out, time.perf_counter() - t

    def device(self):
        rc, out, _ = self.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                               "--format=csv,noheader"], 60)
        gpu = out.strip().splitlines()[0] if rc == 0 and out.strip() else "unknown GPU"
        self.doc["gpu"] = gpu
        self.doc["gpu_slug"] = slug(gpu.split(",")[0])
        env = self.cutune_env()
        rc, out, _ = self.run([self.cutune, "devices"], 60, env=env)
        self.doc["cutune_devices"] = out.strip()[-1000:]

    def kt_install(self):
        if self.kt_site:
            return
        wheels = sorted(glob.glob(os.path.join(self.args.wheels, "*.whl")))
        if not wheels:
            raise FileNotFoundError(f"no wheels in {self.args.wheels} (scripts/stage_kt_bench.sh makes them)")
        self.kt_site = os.path.join(self.tmp, "kt-site")
        rc, out, wall = self.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                  "--no-index", "--no-deps", "--no-cache-dir", "--target", self.kt_site] + wheels, 300)
        self.doc["kt_install"] = {"exit": rc, "wall_s": wall, "wheels": [os.path.basename(w) for w in wheels]}
        if rc != 0:
            raise RuntimeError(f"pip install of {self.args.wheels} exited {rc}: {tail(out, 600)}")

    def corpus(self):
        """The restored corpus folder: --corpus as it is, or a .tar.gz of it unpacked."""
        src = self.args.corpus
        if os.path.isdir(src):
            return src
        dest = os.path.join(self.tmp, "corpus")
        with tarfile.open(src) as tar:
            tar.extractall(dest, filter="data")
        inner = os.path.join(dest, "kt_corpus")  # scripts/stage_kt_bench.sh packs the folder itself
        return inner if os.path.isdir(inner) else dest

    def kt_env(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = self.kt_site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def cutune_env(self, run_dir=None):
        env = dict(os.environ)
        env["CUTUNE_BIN"] = self.cutune
        lib = os.path.join(os.path.dirname(self.args.bin), "lib")
        env["LD_LIBRARY_PATH"] = lib + (os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        if run_dir:
            env["CUTUNE_RUN_DIR"] = run_dir
        return env

    # ---- one script ----------------------------------------------------------------------------

    def fresh_copy(self, corpus, entry, tool):
        dest = os.path.join(self.tmp, "work", entry["id"], tool)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(os.path.join(corpus, entry["id"]), dest, symlinks=True)
        for d in entry.get("make_dirs", []):
            os.makedirs(os.path.join(dest, d), exist_ok=True)
        return dest

    def child(self, corpus, entry, tool, timeout, kt_backend=None):
        root = self.fresh_copy(corpus, entry, tool)
        cwd = os.path.join(root, entry.get("cwd") or ".")
        record = os.path.join(root, f"{tool}_record.json")
        params = {"tool": tool, "script": os.path.join(root, entry["script"]), "args": entry.get("args", []),
                  "out": record, "budget_s": self.args.budget, "max_calls": self.args.max_calls,
                  "cutune_python": os.path.join(REPO, "python"), "cutune_strategy": self.args.cutune_strategy,
                  "cutune_default_strategy": self.args.cutune_default_strategy, "kt_cuda_lang": self.args.kt_cuda_lang,
                  "kt_backend": kt_backend}
        pfile = os.path.join(root, f"{tool}_params.json")
        with open(pfile, "w") as f:
            json.dump(params, f)
        env = self.kt_env() if tool == "kernel_tuner" else self.cutune_env(os.path.join(root, "cutune-runs"))
        if tool == "cutune":
            os.makedirs(env["CUTUNE_RUN_DIR"], exist_ok=True)
            # A database and cubin cache of this run alone: what an earlier run on the same machine
            # stored would be reused, not measured, and Kernel Tuner starts with nothing.
            env["CUTUNE_DB"] = os.path.join(root, "cutune.db")
            env["CUTUNE_CACHE_DIR"] = os.path.join(root, "cubins")
        log = os.path.join(self.tmp, "logs", f"{entry['id']}.{tool}.log")
        rc, out, wall = self.run([sys.executable, CHILD, pfile], timeout, env=env, cwd=cwd, log=log)
        try:
            with open(record) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            doc = {"calls": []}
        doc.update(exit=rc, process_wall_s=wall, cwd=cwd)
        if rc == "timeout":
            doc["timed_out_after_s"] = timeout
        doc["outcome"], doc["why"] = outcome(doc, out)
        if doc["outcome"] != "ran":
            doc["output_tail"] = tail(out, 1500)
        if doc["outcome"] == "ran":
            doc.pop("trace", None)
        return doc

    def remeasure(self, cwd, t1, ours, theirs, timeout, label):
        def arg(cfg):
            return ",".join(f"{k}={v}" for k, v in cfg.items())
        out_json = os.path.join(self.tmp, f"{label}_measure.json")
        cmd = [self.cutune, "measure", t1, "--config", arg(ours), "--config", arg(theirs), "--json", out_json]
        rc, text, wall = self.run(cmd, timeout, env=self.cutune_env(), cwd=cwd,
                                  log=os.path.join(self.tmp, "logs", f"{label}.measure.log"))
        res = {"command": " ".join(shlex.quote(c) for c in cmd), "exit": rc, "wall_s": wall}
        if os.path.exists(out_json):
            with open(out_json) as f:
                res["result"] = json.load(f)
        if rc != 0:
            res["output_tail"] = tail(text, 800)
        return res

    def compare_calls(self, entry, kt, cu):
        rows = []
        n = max(len([c for c in kt["calls"] if "index" in c]), len([c for c in cu["calls"] if "index" in c]))
        for i in range(n):
            k = next((c for c in kt["calls"] if c.get("index") == i), {})
            c = next((c for c in cu["calls"] if c.get("index") == i), {})
            row = {"index": i, "kernel_name": c.get("kernel_name") or k.get("kernel_name"),
                   "kernel_tuner": k, "cutune": c}
            rows.append(row)
            if c.get("best_config") and k.get("best_config") and c.get("t1"):
                timeout = min(MEASURE_TIMEOUT_S, self.left_s())
                if timeout >= 5:
                    row["remeasure"] = self.remeasure(cu["cwd"], c["t1"], c["best_config"], k["best_config"],
                                                      timeout, f"{entry['id']}_{i}")
                else:
                    row["remeasure_skipped"] = "the total time cap (--total) was reached"
            judge(row)
        return rows

    def kernel_tuner(self, corpus, entry, per_child):
        """Kernel Tuner with the backend the script asks for; where that fails inside a
        tune_kernel call (a compile or driver error of that backend), once more with its other
        CUDA backend: the target counts a script Kernel Tuner runs with any of them. The
        record says which backend each try used and why the first failed."""
        kt = self.child(corpus, entry, "kernel_tuner", min(per_child, self.left_s() / 2))
        first_lang = next((c.get("lang", "absent") for c in kt.get("calls", []) if "index" in c), "absent")
        if kt["outcome"] == "ran" or first_lang == "absent" or self.args.kt_cuda_lang or \
                self.left_s() < 2 * (CHILD_STARTUP_S + self.args.budget):
            return kt
        other = "NVCUDA" if str(first_lang).upper() == "CUPY" else "cupy"
        if str(first_lang).upper() not in ("NONE", "CUDA", "CUPY", "NVCUDA"):
            return kt
        retry = self.child(corpus, entry, "kernel_tuner", min(per_child, self.left_s() / 2), kt_backend=other)
        retry["first_try"] = {"lang": first_lang, "why": kt["why"]}
        retry["backend"] = other
        return retry if retry["outcome"] == "ran" else dict(kt, retry={"lang": other, "why": retry["why"]})

    def script(self, corpus, entry):
        row = {"id": entry["id"], "kernel": entry.get("kernel")}
        missing = [m for m in entry.get("requires", []) if importlib.util.find_spec(m) is None]
        if missing:
            row["not_run"] = f"the script needs {', '.join(missing)}, which this machine's Python lacks"
            return row
        need = entry.get("host_memory_gib", 0)
        if need > host_memory_gib():
            row["not_run"] = f"the script needs about {need} GiB of host memory, this machine has less"
            return row
        per_child = CHILD_STARTUP_S + self.args.max_calls * (self.args.budget * 1.5 + 15)
        if self.left_s() < 2 * (CHILD_STARTUP_S + self.args.budget):
            row["not_run"] = f"the total time cap (--total {self.args.total:g} s) was reached"
            return row
        kt = self.kernel_tuner(corpus, entry, per_child)
        cu = self.child(corpus, entry, "cutune", min(per_child, self.left_s() - 5))
        row["kernel_tuner"] = {k: v for k, v in kt.items() if k != "calls"}
        row["cutune"] = {k: v for k, v in cu.items() if k != "calls"}
        row["calls"] = self.compare_calls(entry, kt, cu)
        row["verdict"] = verdict(row)
        return row

    # ---- the run -------------------------------------------------------------------------------

    def dump(self):
        os.makedirs(self.out_dir, exist_ok=True)
        with open(os.path.join(self.out_dir, "kt_scripts.json"), "w") as f:
            json.dump(self.doc, f, indent=1, default=str)

    def main(self):
        os.makedirs(os.path.join(self.tmp, "logs"), exist_ok=True)
        for step in (self.device, self.kt_install):
            try:
                step()
            except Exception as e:  # noqa: BLE001 -- recorded; the other side still runs
                self.doc.setdefault("setup_errors", []).append(f"{step.__name__}: {type(e).__name__}: {e}")
        self.out_dir = os.path.join(self.args.out, self.doc.get("gpu_slug", "unknown-gpu"))
        if self.args.merge and os.path.exists(self.args.merge):
            with open(self.args.merge) as f:
                self.doc["merged_from"] = json.load(f)
        corpus = self.corpus()
        with open(MANIFEST) as f:
            entries = informative_first(json.load(f)["scripts"])
        for e in entries:
            if (self.args.only and e["id"] not in self.args.only) or e["id"] in (self.args.skip or []):
                continue
            print(f"gpu_benchmark: {e['id']} ({self.left_s():.0f} s left)", file=sys.stderr, flush=True)
            t = time.perf_counter()
            if not os.path.isfile(os.path.join(corpus, e["id"], e["script"])):
                row = {"id": e["id"], "not_run": f"not in the corpus at {corpus}"}
            else:
                row = self.script(corpus, e)
            row["wall_s"] = time.perf_counter() - t
            self.doc["scripts"].append(row)
            self.dump()
        merge_previous(self.doc)
        self.doc["totals"] = totals(self.doc["scripts"])
        self.doc["wall_s"] = time.perf_counter() - self.started
        self.dump()
        with open(os.path.join(self.out_dir, "kt_scripts.md"), "w") as f:
            f.write(table(self.doc))
        with tarfile.open(os.path.join(self.out_dir, "kt_scripts_logs.tar.gz"), "w:gz") as tar:
            tar.add(os.path.join(self.tmp, "logs"), arcname="logs")
        print(table(self.doc))
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


def informative_first(entries):
    """The scripts Kernel Tuner got as far as tune_kernel with, without a GPU (the corpus study's
    record), first: should the total cap be reached, the scripts it leaves out are those that
    fail before tuning in Kernel Tuner anyway."""
    try:
        with open(os.path.join(REPO, "results", "kt_corpus", "spaces_summary.json")) as f:
            recorded = {s["id"]: s for s in json.load(f)["scripts"]}
    except (OSError, ValueError, KeyError):
        return entries

    def reaches_tuning(e):
        status = (recorded.get(e["id"]) or {}).get("kt_status") or {}
        return status.get("script_status") == "ok"
    return [e for e in entries if reaches_tuning(e)] + [e for e in entries if not reaches_tuning(e)]


def host_memory_gib():
    try:
        with open("/proc/meminfo") as f:
            kib = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1))
        return kib / 2**20
    except (OSError, AttributeError):
        return float("inf")


def outcome(doc, output):
    """("ran" | "failed", why): ran when the script ended without an error and at least one
    tune_kernel call timed a configuration; else the first line saying why."""
    calls = [c for c in doc.get("calls", []) if "index" in c and not c.get("skipped")]
    if doc.get("exit") == "timeout":
        return "failed", f"did not finish within {doc.get('timed_out_after_s', 0):.0f} s"
    for c in calls:
        if c.get("error"):
            return "failed", first_line(c["error"])
    if doc.get("script_error"):
        return "failed", first_line(doc["script_error"])
    if doc.get("exit") not in (0, None):
        return "failed", first_line(tail(output, 400).strip().splitlines()[-1] if output.strip() else "") or \
            f"exit {doc.get('exit')}"
    if not calls:
        return "failed", "the script made no tune_kernel call"
    if not any(c.get("best_config") for c in calls):
        kinds = {}
        for c in calls:
            for k, v in (c.get("failures_by_kind") or {}).items():
                kinds[k] = kinds.get(k, 0) + v
        return "failed", "no configuration ran: " + ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    return "ran", ""


def judge(row):
    """The comparison figures of one call (studies.bench_real_kernels.derive's), and whether the
    budget bound each tool (it tried fewer configurations than its valid space holds)."""
    k, c = row["kernel_tuner"], row["cutune"]
    case = {"cutune": {"configs_tried": c.get("tried"), "wall_s": c.get("wall_s")},
            "kernel_tuner": {"tried": k.get("tried"), "wall_s": k.get("wall_s")}}
    if "remeasure" in row:
        case["remeasure"] = row["remeasure"]
    derive(case)
    for key in ("cutune_configs_per_s", "kernel_tuner_configs_per_s", "pace_ratio", "remeasured",
                "kernel_tuner_winner_runs", "kernel_tuner_winner_failure", "ratio_kt_over_cutune", "tie",
                "cutune_at_least_as_fast"):
        if key in case:
            row[key] = case[key]
    for who, rec in (("kernel_tuner", k), ("cutune", c)):
        if rec.get("tried") is not None and rec.get("space_valid"):
            row[f"{who}_budget_binds"] = rec["tried"] < rec["space_valid"]


def verdict(row):
    kt, cu = row["kernel_tuner"]["outcome"], row["cutune"]["outcome"]
    if kt == "ran" and cu == "ran":
        return "both ran"
    if kt == "ran":
        return "only Kernel Tuner ran"
    if cu == "ran":
        return "only cutune ran"
    return "neither ran"


def merge_previous(doc):
    """--merge: the scripts of an earlier kt_scripts.json that this run did not run are kept."""
    prev = doc.pop("merged_from", None)
    if not prev:
        return
    done = {s["id"] for s in doc["scripts"]}
    kept = [s for s in prev.get("scripts", []) if s["id"] not in done]
    doc["scripts"] = kept + doc["scripts"]
    doc["merged_runs"] = [{k: prev.get(k) for k in ("date", "command", "gpu")}] + prev.get("merged_runs", [])


def totals(scripts):
    t = {"scripts": len(scripts), "not_run": sum(1 for s in scripts if "not_run" in s)}
    ran = [s for s in scripts if "verdict" in s]
    for v in ("both ran", "only Kernel Tuner ran", "only cutune ran", "neither ran"):
        t[v.replace(" ", "_")] = sum(1 for s in ran if s["verdict"] == v)
    t["cutune_fails_where_kernel_tuner_runs"] = [s["id"] for s in ran if s["verdict"] == "only Kernel Tuner ran"]
    calls = [c for s in ran for c in s.get("calls", [])]
    compared = [c for c in calls if "cutune_at_least_as_fast" in c]
    t["calls_compared"] = len(compared)
    t["cutune_at_least_as_fast"] = sum(1 for c in compared if c["cutune_at_least_as_fast"])
    t["kernel_tuner_winners_that_cannot_run"] = sum(1 for c in calls if c.get("kernel_tuner_winner_runs") is False)
    bound = [c for c in calls if c.get("kernel_tuner_budget_binds") and c.get("pace_ratio")]
    t["calls_where_the_budget_binds"] = len(bound)
    t["pace_at_least_3x_where_the_budget_binds"] = sum(1 for c in bound if c["pace_ratio"] >= 3)
    return t


def fmt(v, digits=4):
    if isinstance(v, bool) or v is None:
        return "—" if v is None else ("yes" if v else "no")
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def table(doc):
    """The Markdown table of a kt_scripts.json: one row per tune_kernel call (per script where
    no call was compared)."""
    t = doc.get("totals", {})
    lines = [f"# Kernel Tuner scripts from public projects: Kernel Tuner 1.5.0 and cutune on {doc.get('gpu')}", "",
             f"{doc.get('date')}; {fmt(doc.get('budget_s_per_call'))} s per tune_kernel call and tool, the first "
             f"{doc.get('max_calls')} call(s) of each script; `{doc.get('command')}`.", "",
             f"Scripts: {t.get('scripts')}; both ran {t.get('both_ran')}, only Kernel Tuner {t.get('only_Kernel_Tuner_ran')}"
             f" ({', '.join(t.get('cutune_fails_where_kernel_tuner_runs') or []) or 'none'}), only cutune "
             f"{t.get('only_cutune_ran')}, neither {t.get('neither_ran')}, not run {t.get('not_run')}. Calls compared: "
             f"{t.get('calls_compared')}, cutune's winner at least as fast (ties within the interval) in "
             f"{t.get('cutune_at_least_as_fast')}; Kernel Tuner winners that cannot run: "
             f"{t.get('kernel_tuner_winners_that_cannot_run')}; pace at least 3x in "
             f"{t.get('pace_at_least_3x_where_the_budget_binds')} of {t.get('calls_where_the_budget_binds')} calls "
             "where the budget bound Kernel Tuner.", "",
             "Kernel Tuner runs with the backend the script asks for, and where that fails in tune_kernel, once more "
             "with its other CUDA backend (cupy or cuda-python), said in the row. "
             "Valid: each tool's valid space. Tried (failed): configurations. Best: each tool's own best time, ms. "
             "Re-measured: both winners in one `cutune measure` process, median ms. Ratio: Kernel Tuner's winner / "
             "cutune's (>= 1: cutune's at least as fast). Pace: configurations per second, Kernel Tuner / cutune.", "",
             "| script | call | Kernel Tuner | cutune | valid KT / cu | tried (failed) KT | tried (failed) cu | "
             "best KT / cu | re-measured KT / cu | ratio | pace KT / cu |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in doc.get("scripts", []):
        if "not_run" in s:
            lines.append(f"| {s['id']} | | not run: {s['not_run']} | | | | | | | | |")
            continue
        kt, cu = s.get("kernel_tuner", {}), s.get("cutune", {})
        kt_says = "ran" if kt.get("outcome") == "ran" else f"failed: {kt.get('why')}"
        if kt.get("backend"):  # the second try ran: say with which backend and why the first failed
            kt_says += f" (lang={kt['backend']}; {kt['first_try']['lang']}: {kt['first_try']['why']})"
        elif kt.get("retry"):
            kt_says += f"; lang={kt['retry']['lang']}: {kt['retry']['why']}"
        cu_says = "ran" if cu.get("outcome") == "ran" else f"failed: {cu.get('why')}"
        calls = s.get("calls") or [{}]
        for c in calls:
            k, u = c.get("kernel_tuner", {}), c.get("cutune", {})
            rm = c.get("remeasured") or {}
            tie = " (tie)" if c.get("tie") else ""
            lines.append(
                f"| {s['id']} | {fmt(c.get('kernel_name'))} | {kt_says} | {cu_says} | "
                f"{fmt(k.get('space_valid'))} / {fmt(u.get('space_valid'))} | "
                f"{fmt(k.get('tried'))} ({fmt(k.get('failed'))}) | {fmt(u.get('tried'))} ({fmt(u.get('failed'))}) | "
                f"{fmt(k.get('best_ms'))} / {fmt(u.get('best_ms'))} | "
                f"{fmt((rm.get('kernel_tuner_winner') or {}).get('median_ms'))} / "
                f"{fmt((rm.get('cutune_winner') or {}).get('median_ms'))} | "
                f"{fmt(c.get('ratio_kt_over_cutune'), 3)}{tie} | "
                f"{fmt(c.get('kernel_tuner_configs_per_s'), 3)} / {fmt(c.get('cutune_configs_per_s'), 3)} |")
            kt_says = cu_says = "″"
    return "\n".join(lines) + "\n"


def default_corpus():
    staged = os.path.join(REPO, ".kt-bench", "kt_corpus.tar.gz")
    if os.path.exists(staged):
        return staged
    material = os.environ.get("CUTUNE_TEST_MATERIAL") or os.path.join(os.path.dirname(REPO), "shared")
    return os.path.join(material, "kt_corpus")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="results root: OUT/<gpu-slug>/kt_scripts.json")
    ap.add_argument("--bin", default=os.path.join(REPO, ".gpu", "bin"), help="folder with cutune and cutune-worker")
    ap.add_argument("--wheels", default=os.path.join(REPO, ".kt-wheels"), help="Kernel Tuner 1.5.0 and its wheels")
    ap.add_argument("--kt-site", default=None, help="a folder where Kernel Tuner is installed already (not --wheels)")
    ap.add_argument("--corpus", default=default_corpus(), help="the restored corpus: a folder or a .tar.gz of it")
    ap.add_argument("--budget", type=float, default=6.0, help="seconds per tune_kernel call, each tool")
    ap.add_argument("--max-calls", type=int, default=2, help="tune_kernel calls run per script")
    ap.add_argument("--total", type=float, default=490.0,
                    help="seconds for the whole run: no new work starts after them (device calls end at 600 s)")
    ap.add_argument("--cutune-strategy", choices=("default", "same"), default="default",
                    help="where the script asks for brute force or no strategy: cutune's default strategy, or "
                         "random like Kernel Tuner's random_sample")
    ap.add_argument("--cutune-default-strategy", default="bandit_portfolio")
    ap.add_argument("--kt-cuda-lang", default=None, choices=(None, "NVCUDA", "cupy"),
                    help="the backend Kernel Tuner gets for lang CUDA or none (default: its own choice)")
    ap.add_argument("--only", nargs="+", default=None, metavar="ID")
    ap.add_argument("--skip", nargs="+", default=None, metavar="ID")
    ap.add_argument("--merge", default=None, metavar="JSON", help="keep the scripts of this earlier kt_scripts.json "
                    "that this run does not run")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (each run's copy, T1 files)")
    ap.add_argument("--table", default=None, metavar="JSON", help="no GPU work: print the table of a kt_scripts.json")
    args = ap.parse_args(argv)
    if args.table:
        with open(args.table) as f:
            print(table(json.load(f)), end="")
        return 0
    if not args.out:
        ap.error("--out is required")
    for name in ("bin", "wheels", "out", "corpus"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if args.kt_site:
        args.kt_site = os.path.abspath(args.kt_site)
    if not os.path.exists(args.corpus):
        print(f"gpu_benchmark: --corpus {args.corpus}: not there (scripts/stage_kt_bench.sh)", file=sys.stderr)
        return 2
    Bench(args).main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
