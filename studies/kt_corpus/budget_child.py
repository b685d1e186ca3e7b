"""One corpus script run by one tool under the GPU benchmark's common budget:

    python3 budget_child.py PARAMS.json        (in the script's folder; run by gpu_benchmark.py)

PARAMS: {"tool": "kernel_tuner" | "cutune", "script", "args", "out", "budget_s", "max_calls",
"cutune_python" (the folder holding the package), "cutune_strategy" ("default" or "same"),
"cutune_default_strategy", "kt_cuda_lang" (null, or the backend Kernel Tuner gets for lang CUDA or
none: "NVCUDA", "cupy"), "kt_backend" (null, or the backend Kernel Tuner gets for any CUDA-family
lang: the benchmark's retry with the other backend)}.

The script runs unchanged as __main__. Its `import kernel_tuner` gives the real Kernel Tuner
(PYTHONPATH holds it) or, for cutune, the package standing in for it (as `python -m cutune`
does). Either way the module's tune_kernel is replaced before the script runs by one wrapper
that binds the call to the real tune_kernel's signature (so a keyword the tool lacks is that
tool's TypeError), imposes the budget, times the call and summarises what it returned.

The budget: a time limit of budget_s per tune_kernel call in both tools
(strategy_options["time_limit"], merged into the script's own options). Kernel Tuner 1.5's
brute_force refuses time_limit (ValueError "Unrecognized option time_limit"), so where the
script asks for brute force or names no strategy, Kernel Tuner gets random_sample over the whole
space (fraction 1.0): the same configurations, in random order, stopped by the clock. cutune
gets its own default strategy there (cutune_strategy "default"; $CUTUNE_TUNE_OPTIONS, which the
package lets override its --strategy), or random as well ("same"). A strategy the script names
is kept in both. After max_calls tune_kernel calls the script is ended (SystemExit(0)): scripts
that tune many sizes are compared on their first calls.

Writes OUT (JSON) after every step, so a time-out keeps what was done: per call the kernel name,
language, strategy and options given, the valid space the tool built, configurations tried,
failed (by the ErrorConfig class the tool put in the results), the tool's best configuration and
its time and objective, the call's wall time and, for cutune, its T1 file and report; then the
script's own exception (type: message, the first line, and the traceback's tail) if it raised.
"""
import inspect
import json
import numbers
import os
import runpy
import sys
import time
import traceback

P = json.load(open(sys.argv[1]))
calls = []
state = {}
# The caller's own options for `cutune tune` (the package reads them), kept under ours.
BASE_TUNE_OPTIONS = os.environ.get("CUTUNE_TUNE_OPTIONS", "")


def dump():
    doc = {"tool": P["tool"], "version": state.get("version"), "calls": calls}
    doc.update({k: state[k] for k in ("script_error", "trace") if state.get(k)})
    with open(P["out"], "w") as f:
        json.dump(doc, f, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def error_of(r):
    """The failure class of one result, None for a timed configuration (Kernel Tuner 1.5 and the
    package put an ErrorConfig, a str subclass, in "time"; "__error__" where a version keeps it)."""
    if "__error__" in r:
        return type(r["__error__"]).__name__
    t = r.get("time")
    if isinstance(t, numbers.Real) and not isinstance(t, bool):
        return None
    return type(t).__name__


def summarize(call, results, tune_params, objective, higher):
    results = [r for r in results if isinstance(r, dict)]
    ok = [r for r in results if error_of(r) is None]
    kinds = {}
    for r in results:
        e = error_of(r)
        if e:
            kinds[e] = kinds.get(e, 0) + 1
    call.update(tried=len(results), failed=len(results) - len(ok), failures_by_kind=kinds)
    if ok:
        def key(r):
            return float(r[objective]) if objective in r else float(r["time"])
        best = max(ok, key=key) if higher else min(ok, key=key)
        call["best_ms"] = float(best["time"])
        call["best_objective"] = key(best)
        call["best_config"] = {k: best[k] for k in tune_params}


def budget(kw, call):
    """The strategy and strategy_options this tool gets for the call (see the module's doc)."""
    asked = kw.get("strategy")
    options = dict(kw.get("strategy_options") or {})
    call["script_strategy"] = asked if isinstance(asked, (str, type(None))) else type(asked).__name__
    call["script_strategy_options"] = {k: v for k, v in options.items() if isinstance(v, (int, float, str))}
    options["time_limit"] = P["budget_s"]
    os.environ["CUTUNE_TUNE_OPTIONS"] = BASE_TUNE_OPTIONS
    if asked in (None, "brute_force"):
        if P["tool"] == "kernel_tuner" or P["cutune_strategy"] == "same":
            kw["strategy"] = "random_sample"
            options["fraction"] = 1.0
        else:
            kw["strategy"] = None  # the package's own choice, overridden below
            os.environ["CUTUNE_TUNE_OPTIONS"] = f"{BASE_TUNE_OPTIONS} --strategy {P['cutune_default_strategy']}"
    kw["strategy_options"] = options
    call["strategy"] = kw["strategy"] or P["cutune_default_strategy"]
    call["strategy_options"] = {k: v for k, v in options.items() if isinstance(v, (int, float, str))}


def make_wrapper(real, space_sizes):
    signature = inspect.signature(real)

    def tune_kernel(*args, **kwargs):
        n = len(calls)
        call = {"index": n}
        calls.append(call)
        bound = signature.bind(*args, **kwargs)  # TypeError for a keyword this tool lacks
        kw = bound.arguments
        call["kernel_name"] = str(kw.get("kernel_name"))
        call["lang"] = kw.get("lang")
        if n >= P["max_calls"]:
            call["skipped"] = f"only the first {P['max_calls']} tune_kernel calls of a script are run"
            dump()
            raise SystemExit(0)
        lang = kw.get("lang")
        if P["tool"] == "kernel_tuner" and P.get("kt_cuda_lang") and (lang is None or str(lang).upper() == "CUDA"):
            kw["lang"] = call["lang"] = P["kt_cuda_lang"]
        # The benchmark's second try: Kernel Tuner's other CUDA backend for any CUDA-family lang.
        if P["tool"] == "kernel_tuner" and P.get("kt_backend") and \
                (lang is None or str(lang).upper() in ("CUDA", "CUPY", "NVCUDA")):
            kw["lang"] = call["lang"] = P["kt_backend"]
        budget(kw, call)
        objective = kw.get("objective") or "time"
        higher = kw.get("objective_higher_is_better")
        if higher is None:
            higher = objective not in ("time", "energy", "cost", "loss")
        call.update(objective=objective, higher_is_better=bool(higher))
        kw["quiet"] = True
        kw["verbose"] = False
        dump()
        space_sizes.clear()
        started = time.perf_counter()
        try:
            results, env = real(*bound.args, **bound.kwargs)
        except BaseException as e:
            call["wall_s"] = time.perf_counter() - started
            call["error"] = f"{type(e).__name__}: {e}"[:2000]
            if space_sizes:
                call["space_valid"] = space_sizes[-1]
            dump()
            raise
        call["wall_s"] = time.perf_counter() - started
        if space_sizes:
            call["space_valid"] = space_sizes[-1]
        summarize(call, results, list(kw["tune_params"]), objective, higher)
        extra = env.get("cutune") if isinstance(env, dict) else None
        if isinstance(extra, dict):
            call["t1"] = extra.get("t1")
            report = extra.get("report") or {}
            call["report"] = {k: report.get(k) for k in ("space_valid", "configs_tried", "configs_failed",
                                                        "failures_by_status", "winner", "winner_ms", "wall_s",
                                                        "compiler", "verdict") if k in report}
            if "space_valid" in report:
                call["space_valid"] = report["space_valid"]
        dump()
        return results, env
    return tune_kernel


def install():
    """The tool's tune_kernel replaced by the wrapper; returns the module the script imports."""
    space_sizes = []
    if P["tool"] == "cutune":
        sys.path.insert(0, P["cutune_python"])
        from cutune import kt_alias
        kt_alias.install()
        import cutune as module
        import cutune.interface as interface
    else:
        import kernel_tuner as module
        import kernel_tuner.interface as interface

        # The space Kernel Tuner builds inside tune_kernel (with the device's max_threads),
        # recorded as it is built instead of building it a second time.
        class RecordingSearchspace(interface.Searchspace):
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                space_sizes.append(self.size)
        interface.Searchspace = RecordingSearchspace
    wrapped = make_wrapper(interface.tune_kernel, space_sizes)
    module.tune_kernel = wrapped
    interface.tune_kernel = wrapped
    return module


def main():
    dump()
    # This file's folder (studies/kt_corpus, first on sys.path) holds modules a script must not
    # import in place of its own (report.py, features.py).
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    module = install()
    state["version"] = getattr(module, "__version__", None)
    script = os.path.abspath(P["script"])
    sys.argv = [script] + list(P["args"])
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            state["script_error"] = f"SystemExit: {e.code}"
    except BaseException as e:  # noqa: BLE001 -- the script's failure is the finding
        state["script_error"] = f"{type(e).__name__}: {e}"[:2000]
        state["trace"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]
    dump()


if __name__ == "__main__":
    main()
