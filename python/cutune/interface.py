"""tune_kernel and run_kernel with Kernel Tuner 1.5's signatures, tuning with cutune's engine.

The user's Python is called as Kernel Tuner calls it (restrictions, problem_size, grid
divisors, smem_args, defines, metrics); what it gives per configuration reaches the engine as
data (cutune.Configurations in the T1 file: the valid configurations, their launch and
defines). The T1 writing itself is the capture's (cutune_capture.session).
"""
import json
import os
import shutil
import sys
import tempfile
import time
import warnings

import numpy

from cutune_capture import session as capture
from cutune_capture.translate import Call, Unsupported, resolve_block_size_names
from cutune_capture.tunable_arguments import is_tunable, leaves, selection_column

from . import dry_run, engine, host_function, observing, run_outputs, util
from .searchspace import Space
from .verifier import Verifier, synced_arguments

# Kernel Tuner 1.5's strategies by name -> cutune's (None: no counterpart, cutune's default).
STRATEGIES = {"brute_force": "brute_force", "random_sample": "random", "greedy_ils": "greedy_ils",
              "greedy_mls": "mls", "ordered_greedy_mls": "mls", "mls": "mls",
              "simulated_annealing": "simulated_annealing", "dual_annealing": "dual_annealing",
              "genetic_algorithm": "genetic_algorithm", "diff_evo": "diff_evo", "pso": "pso",
              "bayes_opt": "bayes_opt", "firefly_algorithm": None, "basinhopping": None, "minimize": None,
              "pyatf_strategies": None, "skopt": None}


_CALLS = [0]  # tune_kernel calls made by this process


class UnsupportedOption(NotImplementedError):
    """An option Kernel Tuner has and cutune does not: the message names it."""


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                compiler=None, compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None,
                quiet=False, strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None,
                parallel=None, observers=None, objective=None, objective_higher_is_better=None, objectives=None,
                seed=None):
    opts = dict(locals())
    util.check_user_input(kernel_name, kernel_source, arguments, block_size_names, lang)
    if objectives:
        raise UnsupportedOption("cutune.tune_kernel: objectives (multi-objective tuning) is not provided by cutune")
    objective, higher = util.get_objective_defaults(objective, objective_higher_is_better)
    util.check_tune_params_list(tune_params, observers, simulation_mode=simulation_mode)
    bsn = resolve_block_size_names(util.check_block_size_params_names_list(block_size_names, tune_params),
                                   tune_params)
    if strategy and strategy not in STRATEGIES and not (hasattr(strategy, "tune") and callable(strategy.tune)):
        raise ValueError(f"Unkown strategy {strategy}, must be one of: {', '.join(STRATEGIES)}")
    _refuse_unsupported(opts)
    plan = _observer_plan(opts)
    opts["_outputs_checked_in_python"] = bool(plan.output) or verify is not None or is_tunable(answer)
    opts["_observed"] = plan if plan.python or plan.nvml else None
    started = time.perf_counter()
    space = Space(tune_params, restrictions, bsn)
    seconds = time.perf_counter() - started
    if len(space) == 0:
        raise ValueError("Search space is empty: no configuration satisfies the restrictions")
    if dry_run.OUT is not None:
        run_dir = dry_run.call_dir(kernel_name)
        dry_run.record(run_dir, space, seconds, tune_params, restrictions, bsn)
        _write_problem(run_dir, "tune_kernel", opts, space, bsn, objective, higher)
        return dry_run.placeholder_results(space, metrics, objective, kernel_name, run_dir)
    run_dir = tempfile.mkdtemp(prefix="cutune-run-", dir=os.environ.get("CUTUNE_RUN_DIR"))
    t1_file, metric_names = _write_problem(run_dir, "tune_kernel", opts, space, bsn, objective, higher)
    cache_file = _cache_path(cache, run_dir)
    report_file = os.path.join(run_dir, "report.json")
    cli = _options(strategy, strategy_options, objective, higher, metric_names, seed, device, verbose) + plan.cli()
    if not _python_checks(verify, answer, plan):
        report = engine.tune(t1_file, cache_file, report_file, cli, quiet=quiet)
    else:
        with Verifier(verify, answer, arguments, atol, plan=plan, space=space) as v:
            report = engine.tune(t1_file, cache_file, report_file, cli + ["--verifier", v.path], quiet=quiet)
        _warn_verifier(v)
    return _results(cache_file, space, opts, objective, higher, report, t1_file)


def _observer_plan(o):
    """The call's observers as cutune runs them; one warning for each it cannot run."""
    plan = observing.Plan(o.get("observers"), o.get("device") or 0, o.get("platform") or 0, o.get("compiler"),
                          o.get("lang"))
    for w in plan.warnings:
        warnings.warn(f"cutune.tune_kernel: observers: {w}", stacklevel=3)
    return plan


def _python_checks(verify, answer, plan):
    """Whether the package's verifier is consulted per configuration: a verify= function, observers
    it runs, or an answer that varies with the configuration (which the engine's reference
    outputs cannot hold)."""
    return verify is not None or bool(plan.python) or is_tunable(answer)


def _warn_verifier(v):
    if v.errors:
        warnings.warn(f"cutune.tune_kernel: the verify function or an observer raised on {len(v.errors)} "
                      f"configuration(s), each counted as failing verification; the first: {v.errors[0]}",
                      stacklevel=3)
    for message in sorted(v.refused):
        warnings.warn(f"cutune.tune_kernel: observers: {message}", stacklevel=3)


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None):
    util.check_user_input(kernel_name, kernel_source, arguments, block_size_names, lang)
    # Kernel Tuner's run_kernel passes each Tunable's array for these parameters.
    arguments = [a.select_for_configuration(dict(params)) if is_tunable(a) else a for a in arguments]
    opts = dict(locals())
    if dry_run.OUT is not None:  # nothing runs: the arguments as they went in
        return [numpy.array(a, copy=True) if isinstance(a, numpy.ndarray) else a for a in arguments]
    _refuse_unsupported(opts, "run_kernel")
    tune_params = {k: [v] for k, v in dict(params).items()}
    bsn = resolve_block_size_names(block_size_names, tune_params)
    if str(lang or "").upper() == "C":  # a CPU function (a script's reference), as Kernel Tuner runs it
        return host_function.run(opts, dict(params), bsn)
    space = Space(tune_params, None, bsn)
    if len(space) == 0:  # the block is larger than any CUDA GPU allows: Kernel Tuner's words
        raise RuntimeError("cannot create kernel instance, too many threads per block")
    run_dir = tempfile.mkdtemp(prefix="cutune-run-kernel-", dir=os.environ.get("CUTUNE_RUN_DIR") or
                               _memory_folder(arguments))
    try:
        o = dict(opts, tune_params=tune_params, restrictions=None, metrics=None)
        t1_file, _ = _write_problem(run_dir, "run_kernel", o, space, bsn, "time", False)
        out_dir = os.path.join(run_dir, "outputs")
        engine.run(t1_file, out_dir, ["--device", str(int(device or 0))], quiet=quiet)
        return run_outputs.read(out_dir, list(arguments))
    finally:
        if not os.environ.get("CUTUNE_KEEP_RUN_DIR"):
            shutil.rmtree(run_dir, ignore_errors=True)


def _memory_folder(arguments, folder="/dev/shm"):
    """A RAM-backed folder for run_kernel's files (its arguments in, its outputs back, deleted after
    the call) where it has room for twice the arrays, else None (the system's temporary folder):
    a disk wrote a 2.1 GiB run at about 220 MB/s here, tmpfs moves it at memory speed."""
    need = 2 * sum(a.nbytes for a in arguments if isinstance(a, numpy.ndarray)) + (64 << 20)
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) and st.f_bavail * st.f_frsize > need else None


def _refuse_unsupported(o, fn="tune_kernel"):
    if o.get("texmem_args"):
        raise UnsupportedOption(f"cutune.{fn}: texmem_args (texture memory) is not provided by cutune")
    src = o["kernel_source"]
    first = src[0] if isinstance(src, (list, tuple)) and src else src
    if callable(first):
        raise UnsupportedOption(f"cutune.{fn}: kernel_source as a code-generator function is not provided "
                                "by cutune")
    if o.get("simulation_mode"):
        raise UnsupportedOption("cutune.tune_kernel: simulation_mode is not provided by the package; replay the "
                                "cache with `cutune tune --simulate CACHE.json`")


def write_evaluated_t1(out_dir, base, kind, o, session, call):
    """The capture's way out when a call's Python has no exact T1 translation: the T1 file with
    cutune.Configurations, the space and per-configuration values evaluated by Python as
    tune_kernel does. Returns the file's name in out_dir."""
    tune_params = o["tune_params"] if kind == "tune_kernel" else {k: [v] for k, v in dict(o["params"]).items()}
    o = dict(o, tune_params=tune_params)
    for k in ("restrictions", "metrics", "objective", "objective_higher_is_better"):
        o.setdefault(k, None)
    objective, higher = util.get_objective_defaults(o.get("objective"), o.get("objective_higher_is_better"))
    bsn = resolve_block_size_names(util.check_block_size_params_names_list(o.get("block_size_names"), tune_params),
                                   tune_params)
    space = Space(tune_params, o.get("restrictions"), bsn)
    if len(space) == 0:
        raise ValueError("Search space is empty: no configuration satisfies the restrictions")
    path, _ = _write_problem(out_dir, kind, o, space, bsn, objective, higher, base=base, session=session, call=call,
                             strict_metrics=True)
    return os.path.basename(path)


def _cache_path(cache, run_dir):
    if not cache:
        return os.path.join(run_dir, "cache.json")
    path = str(cache)
    if not path.endswith(".json"):  # Kernel Tuner's preprocess_cache
        path += ".json"
    return os.path.abspath(path)


def _evaluate_launch(o, config, bsn):
    params = dict(config)
    current = util.get_problem_size(o["problem_size"], params)
    grid = util.get_grid_dimensions(current, params, (o["grid_div_x"], o["grid_div_y"], o["grid_div_z"]), bsn)
    smem = 0
    if o.get("smem_args"):
        smem = int(util.get_smem_args(o["smem_args"], params).get("size", 0))
    return [int(grid[0]), int(grid[1]), int(grid[2]), smem]


def _needs_launch_table(o):
    items = [o["problem_size"], o["grid_div_x"], o["grid_div_y"], o["grid_div_z"]]
    smem = o.get("smem_args") or {}
    items.append(smem.get("size") if isinstance(smem, dict) else None)

    def has_callable(x):
        if callable(x):
            return True
        return isinstance(x, (list, tuple)) and any(has_callable(e) for e in x)
    return any(has_callable(x) for x in items)


def _write_problem(run_dir, kind, o, space, bsn, objective, higher, base="problem", session=None, call=None,
                   strict_metrics=False):
    """The T1 file of the call, with cutune.Configurations; returns (path, metrics the T1 carries)."""
    first = next(space.configs())
    t = dict(o)
    t.pop("_outputs_checked_in_python", None)
    t.pop("_observed", None)
    if o.get("_outputs_checked_in_python"):
        # The package's verifier decides on the outputs (verify=, output observers, or a Tunable
        # answer that no reference file can hold): the engine keeps its own check off them.
        t["verify"] = o.get("verify") or _checked_in_python
        if is_tunable(o.get("answer")):
            t["answer"] = None
    t["restrictions"] = None
    t["defines"] = None
    t["objective"] = objective if objective == "time" else None
    t["objective_higher_is_better"] = None
    launch_table = _needs_launch_table(o)
    if launch_table:  # the engine takes the grid from the table; the T1 fields only need to be valid
        t["problem_size"] = util.get_problem_size(o["problem_size"], dict(first))
        t["grid_div_x"] = t["grid_div_y"] = t["grid_div_z"] = None
        if o.get("smem_args"):
            t["smem_args"] = util.get_smem_args(o["smem_args"], dict(first))
    metric_names = []
    # The script's name and the call's place in it name the problem (General.BenchmarkName),
    # under which the database keeps and reuses its results.
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c") else "python"
    s = session or capture.Session(run_dir, os.path.abspath(script))
    try:
        t["metrics"] = o.get("metrics")
        if o.get("metrics"):
            try:
                s.metrics(o["metrics"], list(space.names))
            except Unsupported:
                if strict_metrics:
                    raise
                t["metrics"] = None  # computed by Python for the results; the search ranks by time
        if call is None:
            _CALLS[0] += 1
            call = Call(kind, _CALLS[0])
            call.kernel_name = str(o["kernel_name"])
        t["compiler_options"] = [_absolute_include(x) for x in (o.get("compiler_options") or [])]
        doc, _ = s.translate(call, base, t, variants=True)
    except Unsupported as e:
        raise UnsupportedOption(f"cutune.{kind}: {e}") from None
    if t["metrics"]:
        metric_names = list(t["metrics"])
    if objective != "time" and objective in metric_names:
        doc["General"]["Objective"] = objective
        doc["General"]["Minimize"] = not higher
    table = {"Count": len(space), "Indices": f"{base}.configs.bin"}
    space.indices.astype("<u4").tofile(os.path.join(run_dir, f"{base}.configs.bin"))
    if launch_table:
        rows = numpy.array([_evaluate_launch(o, c, bsn) for c in space.configs()], dtype="<u4")
        rows.tofile(os.path.join(run_dir, f"{base}.launch.bin"))
        table["Launch"] = f"{base}.launch.bin"
    if o.get("_outputs_checked_in_python"):
        # What verify and the observers are given (Kernel Tuner's result_host) gets its initial
        # contents before each configuration's verification run, as Kernel Tuner re-copies it.
        spec_args = doc["KernelSpecification"]["Arguments"]
        for i in synced_arguments(list(o["arguments"]), o.get("answer")):
            spec_args[i]["AccessType"] = "ReadWrite"
    _write_variant_columns(run_dir, base, table, doc, list(o["arguments"]), space)
    if o.get("defines"):
        table["DefineNames"] = list(o["defines"])
        table["Defines"] = [util.defines_values(o["defines"], c) for c in space.configs()]
    doc.setdefault("cutune", {})["Configurations"] = table
    path = os.path.join(run_dir, base + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path, metric_names


def _write_variant_columns(run_dir, base, table, doc, arguments, space):
    """cutune.Configurations' VariantArguments and Variants: per configuration, the index of the
    array each Tunable argument passes (uint32, one row per configuration, one column per
    Tunable), Kernel Tuner's selection evaluated here."""
    spec_args = doc["KernelSpecification"]["Arguments"]
    found = [(spec_args[i]["Name"], a) for i, a in enumerate(arguments) if is_tunable(a)]
    if not found:
        return
    columns = [_variant_column(a, space) for _, a in found]
    numpy.stack(columns, axis=1).astype("<u4").tofile(os.path.join(run_dir, f"{base}.variants.bin"))
    table["VariantArguments"] = [name for name, _ in found]
    table["Variants"] = f"{base}.variants.bin"


def _variant_column(tunable, space):
    """Per configuration of the space, the index into leaves(tunable) it selects. A Tunable
    keyed by one parameter, holding no Tunables, selects by that parameter alone: each value the
    space uses is asked once (a million configurations in milliseconds, not a Python call
    each); anything else is asked per configuration."""
    key = tunable.param_key
    names = list(space.names)
    flat = not any(is_tunable(v) for v in tunable.data.values())
    # A subclass that selects its own way is asked per configuration.
    standard = getattr(type(tunable).select_for_configuration, "__qualname__", "") == "Tunable.select_for_configuration"
    if not (flat and standard and isinstance(key, str) and key in names):
        return selection_column(tunable, list(space.configs()))
    p = names.index(key)
    used = numpy.unique(space.indices[:, p])
    lookup = numpy.zeros(len(space.values[p]), dtype="<u4")
    for v in used:
        lookup[v] = selection_column(tunable, [{key: space.values[p][v]}])[0]
    return lookup[space.indices[:, p]]


def _checked_in_python(answer, result_host, atol=None):
    """Stands for the package's verifier in the T1 writing (a verify= function's place): the
    outputs the answer names are not compared by the engine."""
    return True


def _absolute_include(option):
    """-I of a relative folder: relative to where the script runs, as Kernel Tuner's compilers see it."""
    option = str(option)
    if option.startswith("-I") and len(option) > 2 and not os.path.isabs(option[2:]):
        return "-I" + os.path.abspath(option[2:])
    return option


def _options(strategy, strategy_options, objective, higher, metric_names, seed, device, verbose):
    out = ["--device", str(int(device or 0))]
    name = "brute_force"
    if isinstance(strategy, str):
        name = STRATEGIES.get(strategy)
        if name is None:
            warnings.warn(f"cutune.tune_kernel: strategy={strategy!r} has no counterpart in cutune: its default "
                          "strategy tunes instead", stacklevel=3)
            name = "bandit_portfolio"
    elif strategy is not None:
        warnings.warn("cutune.tune_kernel: a user-defined strategy object is not run by cutune: its default "
                      "strategy tunes instead", stacklevel=3)
        name = "bandit_portfolio"
    out += ["--strategy", name]
    so = dict(strategy_options or {})
    if so.get("max_fevals") is not None:
        out += ["--budget", str(int(so["max_fevals"]))]
    if so.get("time_limit") is not None:
        out += ["--time-budget", str(float(so["time_limit"]))]
    if objective == "time" or objective in metric_names:
        out += ["--objective", objective]
        out.append("--objective-higher-is-better" if higher else "--objective-lower-is-better")
    if seed is not None:
        out += ["--seed", str(int(seed))]
    return out


def _metrics(metrics, result):
    """Kernel Tuner's util.process_metrics: in order, each over the parameters, time and the
    metrics before it."""
    for k, v in metrics.items():
        if isinstance(v, str):
            result[k] = eval(util.replace_param_occurrences(v, result))
        elif callable(v):
            result[k] = v(result)
        else:
            raise ValueError("metric dicts values should be strings or callable")


# Fields cutune adds to a cache entry of its own (the median and its interval, the exact status).
_CUTUNE_FIELDS = {"time_median", "time_ci_low", "time_ci_high", "time_samples", "cutune_status"}


def _observed_fields(entry, row, int_keys):
    """The observers' values of a cache entry into its row, as Kernel Tuner's observers put their
    results there (before the metrics, which may read them)."""
    for k, v in entry.items():
        if k not in row and k not in observing.RESERVED and k not in _CUTUNE_FIELDS:
            row[k] = int(v) if k in int_keys and isinstance(v, float) and v.is_integer() else v


def _plain(value):
    """numpy scalars (in tuples and lists) as Python numbers: scripts json.dump the env, which Kernel
    Tuner keeps serialisable (expdist's tune script dumps (results, env) with a numpy.int32 size)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value.item() if isinstance(value, numpy.generic) else value


def _results(cache_file, space, o, objective, higher, report, t1_file):
    doc = engine.read_cache(cache_file)
    names = list(space.names)
    results = []
    for key, entry in doc.get("cache", {}).items():
        r = {n: entry.get(n) for n in names}
        t = entry.get("time")
        error = util.error_config(t) if isinstance(t, str) else None
        for f in ("time", "times", "compile_time", "verification_time", "benchmark_time", "strategy_time",
                  "framework_time", "timestamp"):
            if f in entry:
                r[f] = entry[f]
        if error is None and o.get("_observed"):
            _observed_fields(entry, r, o["_observed"].int_keys)
        if error is not None:
            r["time"] = error
        elif o.get("metrics"):
            _metrics(o["metrics"], r)
        if objective not in r:
            r[objective] = error if error is not None else r.get("time")
        results.append(r)
    valid = [r for r in results if not isinstance(r.get(objective), util.ErrorConfig)]
    best = (max if higher else min)(valid, key=lambda r: r[objective]) if valid else None
    env = {"device_name": doc.get("device_name", ""), "kernel_name": o["kernel_name"],
           "problem_size": _plain(o["problem_size"]), "iterations": o.get("iterations"),
           "compiler_options": o.get("compiler_options"), "best_config": best,
           "cutune": {"t1": t1_file, "cache": cache_file, "report": report}}
    if not o.get("quiet") and best is not None:
        print("best performing configuration:", util.get_config_string(best, names + [objective]))
    return results, env

