"""The capture session: every tune_kernel/run_kernel call of the script becomes a T1 file,
its argument arrays and answers BinaryRaw files, and one entry of capture.json."""
import ast
import hashlib
import inspect
import json
import math
import numbers
import os
import sys

import numpy

from .expression import Untranslatable, parameters_in, translate_callable
from .translate import (CUDA_LANGS, OBJECTIVE_HIGHER_IS_BETTER, T1_TYPE_NAMES, T1_TYPES, Call, Unsupported, detect_language,
                        dumps, first_valid_config, is_identifier, kernel_signature_names, looks_like_a_filename,
                        native, parameter_type, relpath, resolve_block_size_names, restriction_checker, safe_name)

MAX_THREADS = 1024  # the bound Kernel Tuner's Searchspace applies to block_size_x*y*z (all CUDA GPUs)


class Session:
    def __init__(self, out_dir, script, kt_space=False):
        self.out_dir = os.path.abspath(out_dir)
        self.script = os.path.abspath(script)
        self.stem = safe_name(os.path.splitext(os.path.basename(script))[0])
        self.kt_space = kt_space
        self.calls = []
        self.data_files = {}       # (dtype, sha1) -> file name, so one array shared by calls is written once
        self.placeholders = []     # arrays the stand-in's run_kernel returned (kept alive: ids stay unique)
        os.makedirs(self.out_dir, exist_ok=True)

    # ---- data files
    HASH_LIMIT = 64 << 20

    def write_array(self, array, name_hint):
        a = numpy.ascontiguousarray(array)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        # by name: ml_dtypes' bfloat16 is "<V2" to numpy, and refuses memoryview (its format 'E')
        # Hashing costs about 1.3 s per GiB (measured here: 3.1 s of a 2.1 GiB run_kernel's 12.7 s
        # setup); above HASH_LIMIT the same memory (an array passed twice) is what is shared.
        if a.nbytes <= self.HASH_LIMIT:
            key = (a.dtype.name, a.size, hashlib.sha1(a.reshape(-1).view(numpy.uint8)).hexdigest())
        else:
            key = (a.dtype.name, a.size, a.__array_interface__["data"][0])
        if key not in self.data_files:
            name = f"{name_hint}.bin"
            a.tofile(os.path.join(self.out_dir, name))
            self.data_files[key] = name
        return self.data_files[key]

    def is_placeholder(self, array):
        return any(array is p for p in self.placeholders)

    # ---- the stand-in's entry points
    def record(self, kind, args, kwargs, fn_signature):
        bound = fn_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        opts = dict(bound.arguments)
        call = Call(kind, len(self.calls) + 1)
        call.kernel_name = str(opts["kernel_name"])
        base = f"{self.stem}_{call.index}_{safe_name(call.kernel_name)}"
        call.t1_name = base + ".json"
        entry = {"index": call.index, "kind": kind, "kernel_name": call.kernel_name}
        # What the lead's benchmark needs to run cutune as the script ran Kernel Tuner.
        for k in ("strategy", "strategy_options", "iterations", "cache", "simulation_mode", "parallel", "seed",
                  "observers", "objective", "device", "platform", "compiler", "verbose", "quiet"):
            v = opts.get(k)
            if v is not None:
                call.options[k] = v if isinstance(v, (str, int, float, bool, list, dict)) and k != "observers" \
                    else repr(v)
        try:
            json.dumps(call.options)
        except (TypeError, ValueError):
            call.options = {k: repr(v) for k, v in call.options.items()}
        try:
            doc, config = self.translate(call, base, opts)
            with open(os.path.join(self.out_dir, call.t1_name), "w") as f:
                f.write(dumps(doc))
            entry.update(status="captured", t1=call.t1_name)
            if self.kt_space and kind == "tune_kernel":
                from .kt_space import write_kt_space
                entry["kt_space"] = write_kt_space(self.out_dir, base, opts, call)
        except Unsupported as e:
            config = self.plain_config(kind, opts)
            written, failure = self.evaluated(kind, base, opts, call, e)
            if written:
                entry.update(status="captured", t1=written)
                if self.kt_space and kind == "tune_kernel":
                    from .kt_space import write_kt_space
                    call.block_size_names = resolve_block_size_names(opts.get("block_size_names"),
                                                                     opts["tune_params"])
                    call.tune_params = opts["tune_params"]
                    entry["kt_space"] = write_kt_space(self.out_dir, base, opts, call)
            else:
                message = f"{self.script}: {kind} call {call.index} ({call.kernel_name}): {e}"
                if failure:
                    message += f"; evaluated by Python instead, it fails too: {failure}"
                print(message, file=sys.stderr)
                entry.update(status="unsupported", message=message, option=e.option)
        except Exception as e:  # noqa: BLE001 -- a defect of the capture: said, and the script goes on
            message = (f"{self.script}: {kind} call {call.index} ({call.kernel_name}): the capture failed: "
                       f"{type(e).__name__}: {e}")
            print(message, file=sys.stderr)
            entry.update(status="error", message=message)
            config = self.plain_config(kind, opts)
        for w in call.warnings:
            print(f"{self.script}: {kind} call {call.index} ({call.kernel_name}): warning: {w}", file=sys.stderr)
        entry["warnings"] = call.warnings
        entry["notes"] = call.notes
        entry["options"] = call.options
        self.calls.append(entry)
        self.write_index()
        return opts, config, entry

    # What has no exact T1 translation but Python can evaluate per configuration. Not metrics:
    # `cutune tune` of the file cannot call the script's Python for them.
    EVALUATED = ("restrictions", "problem_size", "grid_div_x", "grid_div_y", "grid_div_z", "defines",
                 "smem_args")

    def evaluated(self, kind, base, opts, call, error):
        """(T1 file name, None) with cutune.Configurations (the cutune package's evaluation) when
        `error` is an untranslatable option of EVALUATED; (None, why) when that fails too; (None,
        None) for other options."""
        if not str(error.option).split("[")[0] in self.EVALUATED:
            return None, None
        try:
            from cutune.interface import write_evaluated_t1
            call.warnings = []
            name = write_evaluated_t1(self.out_dir, base, kind, opts, self, call)
        except Exception as e:  # noqa: BLE001 -- reported with the translation's failure, in its line
            return None, f"{type(e).__name__}: {e}"
        call.notes.append(f"{error.option}: no exact T1 translation; the space and the per-configuration values "
                          "were evaluated by Python (cutune.Configurations)")
        return name, None

    @staticmethod
    def plain_config(kind, opts):
        if kind == "tune_kernel":
            return {k: native(v[0]) for k, v in dict(opts.get("tune_params") or {}).items() if len(v)}
        return dict(opts.get("params") or {})

    def write_index(self, status=None, message=None):
        doc = {"script": self.script, "argv": sys.argv[1:], "calls": self.calls}
        if status:
            doc["status"] = status
        if message:
            doc["message"] = message
        with open(os.path.join(self.out_dir, "capture.json"), "w") as f:
            f.write(dumps(doc))

    # ---- translation of one call
    def translate(self, call, base, o):
        kind = call.kind
        tune_params = o.get("tune_params") if kind == "tune_kernel" else \
            {k: [v] for k, v in dict(o.get("params") or {}).items()}
        if not isinstance(tune_params, dict):
            raise Unsupported("tune_params", type(tune_params).__name__, "must be a dict")
        tune_params = {str(k): [native(v) for v in vals] for k, vals in tune_params.items()}
        names = list(tune_params)
        bsn = resolve_block_size_names(o.get("block_size_names"), tune_params)

        for opt in ("texmem_args",):
            if o.get(opt):
                raise Unsupported(opt, list(o[opt]), "texture memory is not supported by cutune")
        if kind == "tune_kernel" and o.get("objectives"):
            raise Unsupported("objectives", o["objectives"], "multi-objective (Pareto) tuning is not supported")

        # --- kernel source and language (core.KernelSource)
        src = o["kernel_source"]
        sources = list(src) if isinstance(src, (list, tuple)) else [src]
        if not sources or callable(sources[0]):
            raise Unsupported("kernel_source", repr(src)[:80], "a code-generator function is not supported")
        first = sources[0]
        extra_dirs = []
        if o.get("lang") is not None and str(o["lang"]).upper() not in CUDA_LANGS:
            raise Unsupported("lang", o["lang"], "cutune compiles CUDA kernels only (with NVRTC or nvcc)")
        if looks_like_a_filename(first):
            if not os.path.isfile(first):
                raise Unsupported("kernel_source", first, "no such file (relative to the working directory "
                                  f"{os.getcwd()})")
            with open(first) as f:
                code = f.read()
            kernel_file = relpath(first, self.out_dir)
        else:
            code = str(first)
            key = ("source", hashlib.sha1(code.encode()).hexdigest())
            if key not in self.data_files:  # one file for a source string that several calls share
                self.data_files[key] = base + ".cu"
                with open(os.path.join(self.out_dir, self.data_files[key]), "w") as f:
                    f.write(code)
            kernel_file = self.data_files[key]
            call.notes.append(f"kernel_source was a string: written to {kernel_file}")
        for s in sources[1:]:
            if looks_like_a_filename(s) and os.path.isfile(s):
                d = os.path.dirname(os.path.abspath(s))
                if d not in extra_dirs:
                    extra_dirs.append(d)
        lang = o.get("lang")
        lang = (lang or detect_language(code)).upper()
        if lang not in CUDA_LANGS:
            raise Unsupported("lang", o.get("lang") or f"{lang} (detected)",
                              "cutune compiles CUDA kernels only (with NVRTC or nvcc)")

        # --- configuration space
        params = []
        for k, vals in tune_params.items():
            if not vals:
                raise Unsupported("tune_params", k, "has no values")
            params.append({"Name": k, "Type": parameter_type(vals), "Values": vals})
        conditions = self.conditions(o.get("restrictions"), names)

        # --- problem size, grid division, block, shared memory
        ps = o["problem_size"]
        if callable(ps):  # a lambda returning a tuple gives one expression per dimension
            ps = self.expr(ps, "problem_size", names)
            tree = ast.parse(ps, mode="eval").body
            if isinstance(tree, (ast.Tuple, ast.List)):
                ps = [e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else ast.unparse(e)
                      for e in tree.elts]
        problem = [ps] if isinstance(ps, (str, numbers.Integral)) else list(ps)
        if not 1 <= len(problem) <= 3:
            raise Unsupported("problem_size", ps, "must have 1 to 3 dimensions")
        problem_size = []
        for d in problem:
            if isinstance(d, (numbers.Integral,)) and not isinstance(d, bool):
                problem_size.append(int(d))
            elif isinstance(d, str):
                problem_size.append(d)
            elif callable(d):
                problem_size.append(self.expr(d, "problem_size", names))
            else:
                raise Unsupported("problem_size", ps, "entries must be ints or strings")
        spec = {"Language": "CUDA", "KernelName": call.kernel_name, "KernelFile": kernel_file,
                "CompilerOptions": [str(x) for x in (o.get("compiler_options") or [])]
                + [f"-I{d}" for d in extra_dirs],
                "ProblemSize": problem_size,
                "LocalSize": {"X": bsn[0], "Y": bsn[1], "Z": bsn[2]}}
        for axis, opt in zip("XYZ", ("grid_div_x", "grid_div_y", "grid_div_z")):
            spec[f"GridDiv{axis}"] = self.grid_div(o.get(opt), bsn["XYZ".index(axis)], tune_params, opt, names)
        smem = o.get("smem_args")
        if smem:
            size = smem.get("size") if isinstance(smem, dict) else None
            if size is None:
                raise Unsupported("smem_args", smem, "needs a 'size'")
            if callable(size):
                size = self.expr(size, "smem_args['size']", names)
            spec["SharedMemory"] = int(size) if isinstance(size, numbers.Integral) else str(size)
        defines = o.get("defines")
        if defines:
            for k, v in defines.items():
                if callable(v):
                    expr = self.expr(v, f"defines['{k}']", names)
                    if expr == k and k in names:
                        continue  # defines the parameter as itself: cutune's prefix does that already
                    raise Unsupported(f"defines['{k}']", expr, "a define computed from the parameters has no "
                                      "T1 field (only constant defines are carried, as -D options)")
                spec["CompilerOptions"].append(f"-D{k}={native(v)}")
            call.warnings.append("defines: given as -D options; unlike Kernel Tuner, cutune still #defines every "
                                 "tuning parameter, the grid and block sizes")

        # --- arguments
        arguments = list(o["arguments"])
        answer = o.get("answer") if kind == "tune_kernel" else None
        if answer is not None and len(answer) != len(arguments):
            raise Unsupported("answer", f"{len(answer)} entries", f"the kernel has {len(arguments)} arguments "
                              "(Kernel Tuner raises TypeError)")
        verify = o.get("verify") if kind == "tune_kernel" else None
        sig = kernel_signature_names(code, call.kernel_name)
        arg_names = sig if sig and len(sig) == len(arguments) and len(set(sig)) == len(sig) else \
            [f"arg{i}" for i in range(len(arguments))]
        cmem = dict(o.get("cmem_args") or {})
        arg_names = [n if n not in cmem else f"{n}_arg" for n in arg_names]
        t1_args, refs, verification = [], [], {}
        for i, (name, a) in enumerate(zip(arg_names, arguments)):
            expected = answer[i] if answer is not None else None
            t1_args.append(self.argument(base, name, a, expected is not None and verify is None))
            if expected is None:
                continue
            if verify is not None:
                verification[name] = "none"
                continue
            if not isinstance(a, numpy.ndarray):
                raise Unsupported(f"answer[{i}]", type(expected).__name__, "an answer for a scalar argument")
            if self.is_placeholder(expected):
                call.warnings.append(f"answer[{i}] comes from run_kernel, which the capture does not run: "
                                     f"'{name}' is verified against the default configuration instead")
                t1_args[-1].update(AccessType="ReadWrite", Output=True)
                verification[name] = "default"
                continue
            expected = numpy.asarray(expected)
            if not numpy.can_cast(a.dtype, expected.dtype):
                raise Unsupported(f"answer[{i}]", expected.dtype, f"not compatible with the argument's {a.dtype} "
                                  "(Kernel Tuner raises TypeError)")
            if expected.size != a.size:
                raise Unsupported(f"answer[{i}]", f"{expected.size} elements",
                                  f"the argument has {a.size} (Kernel Tuner raises ValueError)")
            # Kernel Tuner compares in the answer's dtype; cutune reads references in the
            # argument's type: a float64 answer of a float32 output rounds by half an ulp,
            # far inside the 1e-5 relative tolerance. For a 16-bit output that half ulp is
            # a thousand times larger than Kernel Tuner's default tolerances: said.
            if expected.dtype != a.dtype and a.dtype.name in ("float16", "bfloat16"):
                call.warnings.append(f"answer[{i}] is {expected.dtype}, '{name}' is {a.dtype}: cutune compares in "
                                     f"{a.dtype} (the answer rounded to it), Kernel Tuner in {expected.dtype}")
            ref_file = self.write_array(expected.astype(a.dtype), f"{base}.{name}.answer")
            refs.append({"Name": f"{name}_answer", "TargetName": name, "FillType": "BinaryRaw",
                         "DataSource": ref_file})
            verification[name] = "reference"
        if verify is not None:
            call.warnings.append(f"verify={getattr(verify, '__name__', repr(verify))}: a custom verification "
                                 "function cannot run in cutune; the outputs its answer names "
                                 f"({', '.join(verification) or 'none'}) are not verified")
        for sym, a in cmem.items():
            arg = self.argument(base, sym, a, False)
            arg["MemType"] = "Constant"
            t1_args.append(arg)
        spec["Arguments"] = t1_args
        if refs:
            spec["ReferenceArguments"] = refs

        # --- General, metrics, objective, cutune section
        cut = {}
        if refs:
            cut["Tolerance"] = {"Relative": 1e-5, "Absolute": float(o.get("atol", 1e-6))}
        if verification:
            cut["Verification"] = verification
        if lang == "CUPY":  # CuPy's compile environment: its headers, cuda_fp16.h first
            cut["Lang"] = "CuPy"
        if o.get("compiler") in ("auto", "nvrtc", "nvcc"):
            cut["Compiler"] = o["compiler"]
        if cmem:
            # Kernel Tuner copies cmem_args into __constant__ symbols only; in a T1 file such an
            # argument would also be passed to the kernel: the launch lists the real ones.
            cut["Launches"] = [{"KernelName": call.kernel_name, "Arguments": arg_names}]
        general = {"BenchmarkName": f"{self.stem}_{call.index}_{call.kernel_name}", "FormatVersion": 1}
        if kind == "tune_kernel":
            metrics = self.metrics(o.get("metrics"), names)
            if metrics:
                cut["Metrics"] = metrics
            objective = o.get("objective") or "time"
            hib = o.get("objective_higher_is_better")
            if hib is None:
                if objective not in OBJECTIVE_HIGHER_IS_BETTER:
                    raise Unsupported("objective", objective, "objective_higher_is_better is not given "
                                      "(Kernel Tuner raises ValueError)")
                hib = OBJECTIVE_HIGHER_IS_BETTER[objective]
            general["Objective"] = objective
            general["Minimize"] = not hib
            if o.get("observers"):
                call.warnings.append("observers: not carried (cutune measures time only)")
            if o.get("cache"):
                call.warnings.append(f"cache={o['cache']}: not carried (cutune stores results in its database)")
        doc = {"General": general,
               "ConfigurationSpace": {"TuningParameters": params, "Conditions": conditions},
               "KernelSpecification": spec}
        if cut:
            doc["cutune"] = cut
        config = first_valid_config(tune_params, restriction_checker(o.get("restrictions"), tune_params),
                                    MAX_THREADS, bsn[:3])
        call.translated_restrictions = [c["Expression"] for c in conditions]
        call.block_size_names = bsn
        call.tune_params = tune_params
        return doc, config

    def expr(self, fn, option, names, **kw):
        try:
            text, _ = translate_callable(fn, names, **kw)
            return text
        except Untranslatable as e:
            raise Unsupported(option, getattr(fn, "__name__", repr(fn)), f"cannot be translated ({e})") from None

    def conditions(self, restrictions, names):
        if restrictions is None:
            return []
        items = restrictions if isinstance(restrictions, (list, tuple)) else [restrictions]
        out = []
        for r in items:
            if isinstance(r, str):
                text = r
            elif isinstance(r, tuple) and len(r) >= 2 and callable(r[0]):
                text = self.expr(r[0], "restrictions", names, param_names=list(r[1]))
            elif callable(r):
                text = self.expr(r, "restrictions", names)
            else:
                raise Unsupported("restrictions", repr(r), "must be strings or callables")
            out.append({"Expression": text, "Parameters": parameters_in(text, names)})
        return out

    def grid_div(self, div, block_name, tune_params, option, names):
        """Kernel Tuner's get_dimension_divisor: None -> the block size parameter (1 if absent);
        an iterable -> the product of its entries; [] -> 1 (an empty list here)."""
        if div is None:
            return [block_name] if block_name in tune_params else []
        items = [div] if isinstance(div, (str, numbers.Integral)) or callable(div) else list(div)
        out = []
        for d in items:
            if callable(d):
                out.append(self.expr(d, option, names))
            elif isinstance(d, numbers.Integral):
                out.append(str(int(d)))
            elif isinstance(d, str):
                out.append(d)
            else:
                raise Unsupported(option, repr(div), "entries must be strings, ints or callables")
        return out

    def metrics(self, metrics, names):
        if not metrics:
            return []
        out, inline, known = [], {}, list(names) + ["time", "time_s"]
        for name, m in metrics.items():
            if isinstance(m, str):
                text = m
                for prev, e in inline.items():  # Kernel Tuner replaces earlier metric names by their value
                    text = text.replace(prev, f"({e})")
            elif callable(m):
                text = self.expr(m, f"metrics['{name}']", known, inline=inline)
            else:
                raise Unsupported(f"metrics['{name}']", repr(m), "must be a string or callable")
            out.append({"Name": name, "Expression": text})
            if is_identifier(name):
                known.append(name)
            else:
                inline[name] = text
        return out

    def argument(self, base, name, a, is_output):
        if isinstance(a, numpy.ndarray):
            t = T1_TYPES.get(a.dtype.name)
            if t is None:
                raise Unsupported(f"argument '{name}'", a.dtype, f"element type not supported ({T1_TYPE_NAMES})")
            return {"Name": name, "Type": t, "MemoryType": "Vector",
                    # Outputs with an answer are ReadWrite: Kernel Tuner uploads their initial
                    # content and the kernel may read it. The rest are uploaded once and never
                    # restored, as in Kernel Tuner: ReadOnly.
                    "AccessType": "ReadWrite" if is_output else "ReadOnly",
                    "MemType": "Global", "FillType": "BinaryRaw", "Size": int(a.size),
                    "DataSource": self.write_array(a, f"{base}.{name}"), **({"Output": True} if is_output else {})}
        if isinstance(a, (numpy.generic, bool, int, float)):
            v = a if isinstance(a, numpy.generic) else numpy.asarray(a)[()]
            if isinstance(a, (bool, int, float)) and not isinstance(a, numpy.generic):
                v = numpy.int32(a) if isinstance(a, int) else numpy.float32(a)
            t = T1_TYPES.get(v.dtype.name)
            if t is None:
                raise Unsupported(f"argument '{name}'", v.dtype, f"scalar type not supported ({T1_TYPE_NAMES})")
            scalar = {"Name": name, "Type": t, "MemoryType": "Scalar", "AccessType": "ReadOnly"}
            value = float(v) if v.dtype.kind in "fV" else native(v)  # ml_dtypes' scalars are kind 'V'
            if v.dtype.kind == "c" or (isinstance(value, float) and not math.isfinite(value)):
                # Passed by value as its bytes: a complex (16 bytes for complex128), or a value
                # JSON cannot hold (inf, NaN), from a file of exactly the element's size.
                return {**scalar, "FillType": "BinaryRaw",
                        "DataSource": self.write_array(numpy.asarray(v).reshape(1), f"{base}.{name}")}
            return {**scalar, "FillType": "Constant", "FillValue": int(value) if v.dtype.kind == "b" else value}
        raise Unsupported(f"argument '{name}'", type(a).__name__, "only numpy arrays and numpy scalars are supported")


SESSION = None


def session():
    if SESSION is None:
        raise RuntimeError("cutune capture: the stand-in kernel_tuner was imported outside `python -m cutune_capture`")
    return SESSION


def tune_kernel_signature():
    def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                    grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                    verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None,
                    texmem_args=None, compiler=None, compiler_options=None, defines=None, log=None, iterations=7,
                    block_size_names=None, quiet=False, strategy=None, strategy_options=None, cache=None,
                    metrics=None, simulation_mode=None, parallel=None, observers=None, objective=None,
                    objective_higher_is_better=None, objectives=None, seed=None):
        pass

    def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
                   grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None,
                   texmem_args=None, compiler=None, compiler_options=None, defines=None, block_size_names=None,
                   quiet=False, log=None):
        pass
    return inspect.signature(tune_kernel), inspect.signature(run_kernel)


TUNE_SIG, RUN_SIG = tune_kernel_signature()
