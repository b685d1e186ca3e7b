"""One tune_kernel/run_kernel call of a Kernel Tuner 1.5 script -> a T1 file cutune reads.

The rules mirror Kernel Tuner 1.5's own handling of each option (interface.py, util.py,
core.py), so that `cutune tune` of the file tunes what the script would have tuned.
"""
import inspect
import itertools
import json
import keyword
import os
import re
import numbers

import numpy


DEFAULT_BLOCK_SIZE_NAMES = ["block_size_x", "block_size_y", "block_size_z"]
CUDA_LANGS = {"CUDA", "CUPY", "NVCUDA", "PYCUDA"}
# Kernel Tuner's util.objective_default_map: objectives whose direction it knows.
OBJECTIVE_HIGHER_IS_BETTER = {"time": False, "energy": False, "fitness": True, "cost": False, "loss": False,
                              "GFLOP/s": True, "TFLOP/s": True, "GB/s": True, "TB/s": True,
                              "GFLOPS/W": True, "TFLOPS/W": True, "GFLOP/J": True, "TFLOP/J": True}
# numpy dtype name -> T1 Type, for every dtype Kernel Tuner passes to a CUDA kernel. T1 spells
# numpy's float16 "half" (its "float16" is 16 floats) and the complex types as the CUDA vector
# types Kernel Tuner pairs them with (float2, double2); bfloat16 (ml_dtypes) is cutune's own;
# bool travels as one byte, as Kernel Tuner's PyCUDA backend sends it.
T1_TYPES = {"int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
            "uint32": "uint32", "int64": "int64", "uint64": "uint64", "float32": "float", "float64": "double",
            "float16": "half", "bfloat16": "bfloat16", "complex64": "float2", "complex128": "double2",
            "bool": "bool"}
T1_TYPE_NAMES = "bool, int8..uint64, float16, bfloat16, float32, float64, complex64, complex128"


class Unsupported(Exception):
    """A call cutune cannot take: the message names the option and its value."""

    def __init__(self, option, value, why):
        super().__init__(f"{option}: {value}: {why}")
        self.option = option


def looks_like_a_filename(kernel_source):
    """Kernel Tuner 1.5's util.looks_like_a_filename, verbatim in effect."""
    if not isinstance(kernel_source, str):
        return False
    result = len(kernel_source) <= 250
    if any(c in kernel_source for c in "();{}\\"):
        result = False
    if any(s in kernel_source for s in ["__global__ ", "__kernel ", "void ", "float "]):
        result = False
    return result and any(s in kernel_source for s in (".c", ".opencl", ".F", ".jl"))


def detect_language(kernel_string):
    """Kernel Tuner 1.5's util.detect_language."""
    s = kernel_string.lower().strip()
    if "__global__" in s:
        return "CUDA"
    if "__kernel" in s:
        return "OpenCL"
    if any(t in s for t in ["@cuda", "@kernel", "@device_code"]):
        return "Julia"
    return "C"


def resolve_block_size_names(block_size_names, tune_params):
    """Kernel Tuner 1.5's check_block_size_params_names_list + append_default_block_size_names."""
    if block_size_names is not None:
        names = list(block_size_names)
    else:
        alternative = [k for k in tune_params if k.lower() in DEFAULT_BLOCK_SIZE_NAMES and k not in DEFAULT_BLOCK_SIZE_NAMES]
        names = sorted(alternative, key=str.casefold) if alternative else None
    if names is None:
        return list(DEFAULT_BLOCK_SIZE_NAMES)
    for i, name in enumerate(DEFAULT_BLOCK_SIZE_NAMES):
        if len(names) < i + 1:
            names.append(name)
    return names


def native(v):
    """numpy scalars -> Python values (results and JSON must not hold numpy types)."""
    return v.item() if isinstance(v, numpy.generic) else v


def parameter_type(values):
    if all(isinstance(v, (bool, numpy.bool_)) for v in values):
        return "bool"
    if all(isinstance(v, numbers.Integral) for v in values):
        return "int"
    if all(isinstance(v, numbers.Real) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "string"
    raise Unsupported("tune_params", values, "values must be all numbers or all strings")


def kernel_signature_names(source, kernel_name):
    """The parameter names of kernel_name's definition in source, or None."""
    base = kernel_name.split("<")[0].split("::")[-1].strip()
    for m in re.finditer(r"__global__[^;{()]*?\b" + re.escape(base) + r"\s*\(", source):
        depth, i = 1, m.end()
        while i < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        params, depth, cur = [], 0, ""
        for c in source[m.end():i - 1]:
            if c in "(<[":
                depth += 1
            elif c in ")>]":
                depth -= 1
            if c == "," and depth == 0:
                params.append(cur)
                cur = ""
            else:
                cur += c
        if cur.strip():
            params.append(cur)
        names = []
        for p in params:
            p = re.sub(r"\[.*?\]", "", p.split("=")[0])
            ids = re.findall(r"[A-Za-z_]\w*", p)
            if not ids:
                return None
            names.append(ids[-1])
        return names
    return None


class Call:
    """What the capture learnt from one call: T1 document, data to write, notes."""

    def __init__(self, kind, index):
        self.kind = kind
        self.index = index
        self.warnings = []
        self.notes = []
        self.options = {}


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "kernel"


def first_valid_config(tune_params, restrictions_fn, max_threads, block_size_names, limit=1_000_000):
    """The first configuration in declaration order that passes the restrictions: what the
    stand-in reports as its result, so scripts that post-process results go on."""
    keys = list(tune_params)
    for n, values in enumerate(itertools.product(*tune_params.values())):
        if n >= limit:
            break
        config = dict(zip(keys, values))
        threads = 1
        for name in block_size_names:
            threads *= config.get(name, 1)
        if threads > max_threads:
            continue
        try:
            if restrictions_fn(config):
                return config
        except Exception:  # noqa: BLE001 -- a restriction the capture cannot evaluate: take it as passed
            return config
    return {k: v[0] for k, v in tune_params.items()}


def restriction_checker(restrictions, tune_params):
    """A Python predicate over a config dict for Kernel Tuner's restrictions argument."""
    if restrictions is None:
        return lambda c: True
    items = restrictions if isinstance(restrictions, (list, tuple)) else [restrictions]

    def check(config):
        for r in items:
            if isinstance(r, str):
                if not eval(r, {"__builtins__": __builtins__}, dict(config)):
                    return False
            elif isinstance(r, tuple) and len(r) >= 2 and callable(r[0]):
                if not r[0](*[config[n] for n in r[1]]):
                    return False
            elif callable(r):
                try:
                    n = len(inspect.signature(r).parameters)
                except (TypeError, ValueError):
                    n = 1
                if n == 1 and len(tune_params) != 1:
                    ok = r(config)
                else:
                    names = list(inspect.signature(r).parameters)
                    ok = r(*[config[a] for a in names]) if all(a in config for a in names) else r(config)
                if not ok:
                    return False
        return True
    return check


def dumps(doc):
    return json.dumps(doc, indent=2) + "\n"


def is_identifier(name):
    return name.isidentifier() and not keyword.iskeyword(name)


def relpath(path, start):
    return os.path.relpath(os.path.abspath(path), os.path.abspath(start))
