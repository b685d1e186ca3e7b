"""Runs one Kernel Tuner script with the real Kernel Tuner 1.5 imported, but with tune_kernel and
run_kernel replaced: each call is recorded (its arguments, what they are made of, and the search
space Kernel Tuner builds from them), nothing is compiled or run, so no GPU is needed.

    python kt_intercept.py OUT.json SCRIPT.py [script args...]      (in the script's folder)

tune_kernel goes through Kernel Tuner's own steps up to the search space, as
kernel_tuner.interface.tune_kernel orders them: KernelSource (language detection), the argument
and block-size-name checks, the objective defaults, check_tune_params_list,
check_block_size_params_names_list, the strategy lookup, then Searchspace(tune_params,
restrictions, max_threads) with max_threads 1024 (every current NVIDIA GPU), exactly the call
tune_kernel makes once the device is open. An exception on the way is recorded as Kernel Tuner's
(type and message) and re-raised, as Kernel Tuner would. The call then returns what the script
needs to go on: ([first valid configuration with time NaN], env), the shape tune_kernel returns.
run_kernel returns copies of its arguments (the outputs it would have computed are unknown); an
answer list holding one of those copies is flagged as an answer from run_kernel.
"""
import copy
import gzip
import inspect
import json
import math
import os
import re
import runpy
import sys
import time
import traceback

import numpy

import kernel_tuner
import kernel_tuner.interface as kt_interface
from kernel_tuner import core, util
from kernel_tuner.searchspace import Searchspace

MAX_THREADS = 1024
REAL_TUNE = kt_interface.tune_kernel
REAL_RUN = kt_interface.run_kernel
TUNE_SIGNATURE = inspect.signature(REAL_TUNE)
RUN_SIGNATURE = inspect.signature(REAL_RUN)

calls = []
run_kernel_outputs = set()  # id() of the arrays run_kernel handed back


def callable_kind(f):
    """'lambda', 'function', 'function(*args)', 'function(*args, **kwargs)' or the type name of another callable."""
    if inspect.isfunction(f):
        code = f.__code__
        kind = "lambda" if f.__name__ == "<lambda>" else "function"
        # Kernel Tuner 1.5 calls f(*args) with one dict, f(*args, **kwargs) with the values.
        if code.co_flags & inspect.CO_VARARGS:
            kind += "(*args, **kwargs)" if code.co_flags & inspect.CO_VARKEYWORDS else "(*args)"
        return kind
    return type(f).__name__


def closure_names(f):
    """Names a function takes from outside itself: its closure cells and the module globals it
    reads (not builtins)."""
    if not inspect.isfunction(f):
        return []
    code = f.__code__
    names = list(code.co_freevars)
    names += [n for n in code.co_names if n in f.__globals__ and not inspect.ismodule(f.__globals__[n])]
    return sorted(set(names))


def describe_value(v):
    if callable(v) and not isinstance(v, type):
        return {"callable": callable_kind(v), "uses": closure_names(v)}
    if isinstance(v, numpy.generic):
        return {"numpy_scalar": v.dtype.name, "value": v.item()}
    if isinstance(v, (list, tuple)):
        return [describe_value(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return {"type": type(v).__name__, "repr": repr(v)[:200]}


def describe_argument(a):
    if isinstance(a, numpy.ndarray):
        return {"kind": "array", "dtype": a.dtype.name, "shape": list(a.shape), "bytes": int(a.nbytes)}
    if isinstance(a, numpy.generic):
        return {"kind": "scalar", "dtype": a.dtype.name}
    if type(a).__name__ == "TunablePrecision":
        return {"kind": "TunablePrecision", "param": getattr(a, "param_key", None),
                "dtype": getattr(getattr(a, "array", None), "dtype", numpy.dtype("O")).name}
    return {"kind": type(a).__name__}


def source_text(kernel_source):
    """The kernel source as Kernel Tuner reads it (a file name relative to the working folder, or
    the code itself); the first file of a list."""
    first = kernel_source[0] if isinstance(kernel_source, (list, tuple)) else kernel_source
    if callable(first):
        return None
    if isinstance(first, str) and "\n" not in first and os.path.isfile(first):
        with open(first, errors="replace") as f:
            return f.read()
    return first if isinstance(first, str) else None


def includes(text):
    return sorted(set(re.findall(r'^\s*#\s*include\s*([<"][^>"]+[>"])', text or "", flags=re.M)))


def restriction_kinds(restrictions):
    if restrictions is None:
        return []
    items = restrictions if isinstance(restrictions, list) else [restrictions]
    kinds = []
    for r in items:
        if isinstance(r, str):
            kinds.append("string")
        elif isinstance(r, tuple):
            kinds.append("(" + callable_kind(r[0]) + ", names)")
        elif callable(r):
            kinds.append(callable_kind(r))
        else:
            kinds.append(type(r).__name__)
    return sorted(set(kinds))


def kt_steps(b):
    """Kernel Tuner 1.5's tune_kernel up to the search space; returns (searchspace, lang)."""
    a = b.arguments
    kernelsource = core.KernelSource(a["kernel_name"], a["kernel_source"], a["lang"], a["defines"])
    restrictions = util.possible_julia_vector_to_list(a["restrictions"])
    block_size_names = util.possible_julia_vector_to_list(a["block_size_names"])
    kt_interface._check_user_input(a["kernel_name"], kernelsource, a["arguments"], block_size_names)
    objective, higher = a["objective"], a["objective_higher_is_better"]
    if a["objectives"]:
        if not isinstance(a["objectives"], dict):
            raise ValueError("objectives should be a dict of (objective, higher_is_better) pairs")
    else:
        kt_interface.get_objective_defaults(objective, higher)
    util.check_tune_params_list(a["tune_params"], a["observers"], simulation_mode=a["simulation_mode"])
    block_size_names = util.check_block_size_params_names_list(block_size_names, a["tune_params"])
    util.append_default_block_size_names(block_size_names)
    strategy, options = a["strategy"], a["strategy_options"]
    if strategy and strategy not in kt_interface.strategy_map:
        if not (hasattr(strategy, "tune") and callable(strategy.tune)):
            raise ValueError(f"Unkown strategy {strategy}, must be one of: {', '.join(list(kt_interface.strategy_map.keys()))}")
    if a["cache"]:
        open_cache(b)
    construction = (options or {}).get("searchspace_construction_options", {})
    start = time.perf_counter()
    space = Searchspace(a["tune_params"], restrictions, MAX_THREADS, **construction)
    return space, kernelsource.lang, time.perf_counter() - start


class InterceptedDevice:
    """What util.process_cache asks of a runner: the device's name."""
    name = "kt-corpus-intercept"
    simulation_mode = False

    def get_device_info(self):
        return self


def open_cache(b):
    """Kernel Tuner's own cache handling (util.process_cache): a new file gets its header (and a
    missing folder raises FileNotFoundError), an existing one must hold the same device, kernel,
    problem size and parameters, as when tune_kernel opens it."""
    a = b.arguments
    cache = str(a["cache"].resolve()) if hasattr(a["cache"], "resolve") else a["cache"]
    if cache[-5:] != ".json":
        cache += ".json"
    kernel_options = kt_interface.Options(kernel_name=a["kernel_name"], problem_size=a["problem_size"])
    tuning_options = kt_interface.Options(tune_params=a["tune_params"], simulation_mode=a["simulation_mode"],
                                          objective=a["objective"])
    util.process_cache(cache, kernel_options, tuning_options, InterceptedDevice())


def key_of(config):
    return ",".join(str(v) for v in config)


def describe_call(b, kind):
    a = b.arguments
    tune_params = a.get("tune_params") or a.get("params") or {}
    defines = a.get("defines") or {}
    answer = a.get("answer")
    record = {
        "kind": kind,
        "kernel_name": a["kernel_name"] if isinstance(a["kernel_name"], str) else repr(a["kernel_name"]),
        "kernel_source": a["kernel_source"] if isinstance(a["kernel_source"], str) and "\n" not in a["kernel_source"]
        else ("<code string>" if isinstance(a["kernel_source"], str) else describe_value(a["kernel_source"])),
        "lang": a["lang"],
        "problem_size": describe_value(a["problem_size"]),
        "grid_div": {d: describe_value(a[f"grid_div_{d}"]) for d in "xyz" if a.get(f"grid_div_{d}") is not None},
        "block_size_names": a.get("block_size_names"),
        "tune_params": {k: describe_value(list(v)) for k, v in tune_params.items()} if kind == "tune_kernel"
        else {k: describe_value(v) for k, v in tune_params.items()},
        "restrictions": describe_value(a.get("restrictions")),
        "restriction_kinds": restriction_kinds(a.get("restrictions")),
        "defines": {k: describe_value(v) for k, v in defines.items()},
        "compiler_options": a.get("compiler_options"),
        "arguments": [describe_argument(x) for x in a["arguments"]],
        "cmem_args": sorted((a.get("cmem_args") or {}).keys()),
        "smem_args": describe_value(a.get("smem_args")),
        "texmem_args": sorted((a.get("texmem_args") or {}).keys()),
        "includes": includes(source_text(a["kernel_source"])),
    }
    if kind == "tune_kernel":
        record.update({
            "answer": None if answer is None else [
                None if x is None else ("run_kernel output" if id(x) in run_kernel_outputs else describe_argument(x))
                for x in (answer if isinstance(answer, (list, tuple)) else [answer])],
            "atol": a["atol"],
            "verify": None if a["verify"] is None else callable_kind(a["verify"]),
            "metrics": {k: describe_value(v) for k, v in (a["metrics"] or {}).items()},
            "objective": a["objective"],
            "strategy": a["strategy"] if isinstance(a["strategy"], (str, type(None))) else repr(a["strategy"]),
            "strategy_options": describe_value(a["strategy_options"]),
            "cache": None if a["cache"] is None else str(a["cache"]),
            "observers": [type(o).__name__ for o in (a["observers"] or [])],
            "iterations": a["iterations"],
            "simulation_mode": a["simulation_mode"],
        })
    return record


def first_result(space, tune_params, problem_size, metrics):
    config = dict(zip(tune_params.keys(), space.list[0])) if space.size else {}
    result = dict(config)
    # The fields Kernel Tuner 1.5 puts in every result (store_output_file reads them).
    result.update(time=math.nan, times=[], compile_time=0.0, verification_time=0, benchmark_time=0.0,
                  strategy_time=0, framework_time=0.0, timestamp="1970-01-01 00:00:00+00:00")
    for name in (metrics or {}):
        result[name] = math.nan
    evaluated = None
    if callable(problem_size) and config:
        evaluated = list(problem_size(config))
    return result, evaluated


def tune_kernel(*args, **kwargs):
    try:
        bound = TUNE_SIGNATURE.bind(*args, **kwargs)
    except TypeError as error:  # Kernel Tuner's own: tune_kernel has no such argument
        calls.append({"kind": "tune_kernel", "kernel_name": str(args[0]) if args else kwargs.get("kernel_name"),
                      "kt_error": {"type": "TypeError", "message": f"tune_kernel() {error}"}})
        raise
    bound.apply_defaults()
    record = describe_call(bound, "tune_kernel")
    calls.append(record)
    a = bound.arguments
    try:
        space, lang, seconds = kt_steps(bound)
    except Exception as error:
        # Kernel Tuner stops here; the space its Searchspace would build is still recorded (as
        # keys_despite_error) so that a tool accepting the call can be compared with it.
        record["kt_error"] = {"type": type(error).__name__, "message": str(error)[:2000]}
        try:
            space = Searchspace(a["tune_params"], util.possible_julia_vector_to_list(a["restrictions"]), MAX_THREADS)
            record["kt_valid"] = space.size
            record["kt_keys"] = [key_of(c) for c in space.list]
            record["keys_despite_error"] = True
        except Exception as inner:
            record["kt_space_error"] = {"type": type(inner).__name__, "message": str(inner)[:2000]}
        raise
    record["kt_lang"] = lang
    record["kt_valid"] = space.size
    record["kt_seconds"] = round(seconds, 4)
    record["kt_keys"] = [key_of(c) for c in space.list]
    result, evaluated = first_result(space, a["tune_params"], a["problem_size"], a["metrics"])
    if evaluated is not None:
        record["problem_size_first_valid"] = evaluated
    env = {"device_name": "kt-corpus-intercept", "kernel_name": a["kernel_name"], "problem_size": None,
           "best_config": result}
    return [result], env


def run_kernel(*args, **kwargs):
    bound = RUN_SIGNATURE.bind(*args, **kwargs)
    bound.apply_defaults()
    calls.append(describe_call(bound, "run_kernel"))
    outputs = [copy.deepcopy(x) if isinstance(x, numpy.ndarray) else x for x in bound.arguments["arguments"]]
    for x in outputs:
        run_kernel_outputs.add(id(x))
    return outputs


def main():
    out, script, script_args = sys.argv[1], sys.argv[2], sys.argv[3:]
    kernel_tuner.tune_kernel = kt_interface.tune_kernel = tune_kernel
    kernel_tuner.run_kernel = kt_interface.run_kernel = run_kernel
    # store_metadata_file asks nvidia-smi about the GPU, which this machine has not: recorded, not run.
    import kernel_tuner.file_utils as file_utils
    file_utils.store_metadata_file = lambda *a, **k: calls.append({"kind": "store_metadata_file"})
    sys.argv = [script] + script_args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    status = {"script_status": "ok"}
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            status = {"script_status": "exit", "exit_code": str(e.code)}
    except BaseException as e:  # the script's own failure is data for the table
        status = {"script_status": "error", "error": f"{type(e).__name__}: {str(e)[:1000]}",
                  "traceback_tail": traceback.format_exc().splitlines()[-6:]}
    with gzip.open(out, "wt") as f:
        json.dump({"status": status, "calls": calls}, f, default=str)


if __name__ == "__main__":
    main()
