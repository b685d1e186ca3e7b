"""Kernel Tuner 1.5's util functions that the package and scripts use, with its semantics
(kernel_tuner/util.py: the checks raise the same exception types with the same messages)."""
import os
import re
import sys
import warnings

import numpy as np

from cutune_capture.translate import detect_language, looks_like_a_filename

default_block_size_names = ["block_size_x", "block_size_y", "block_size_z"]
objective_default_map = {"time": False, "energy": False, "fitness": True, "cost": False, "loss": False,
                         "GFLOP/s": True, "TFLOP/s": True, "GB/s": True, "TB/s": True, "GFLOPS/W": True,
                         "TFLOPS/W": True, "GFLOP/J": True, "TFLOP/J": True}


class ErrorConfig(str):
    def __str__(self):
        return self.__class__.__name__

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    pass


class CompilationFailedConfig(ErrorConfig):
    pass


class RuntimeFailedConfig(ErrorConfig):
    pass


def error_config(name):
    """The ErrorConfig a cache's "time" string names (None when it names none)."""
    cls = {"InvalidConfig": InvalidConfig, "CompilationFailedConfig": CompilationFailedConfig,
           "RuntimeFailedConfig": RuntimeFailedConfig, "ErrorConfig": ErrorConfig}.get(name)
    return cls(name) if cls else None


def kernel_string_of(kernel_source):
    if isinstance(kernel_source, (list, tuple)):
        kernel_source = kernel_source[0] if kernel_source else ""
    if callable(kernel_source):
        return None
    if isinstance(kernel_source, os.PathLike):
        with open(kernel_source) as f:
            return f.read()
    if not isinstance(kernel_source, str):
        raise TypeError("Error kernel_source is not a string nor a callable function")
    if looks_like_a_filename(kernel_source):
        with open(kernel_source) as f:  # FileNotFoundError, as Kernel Tuner's open()
            return f.read()
    return kernel_source


def check_argument_list(kernel_name, kernel_string, args, lang=None):
    """Raise TypeError for an argument Kernel Tuner cannot pass; warn on a mismatch."""
    from .accuracy import Tunable
    for i, arg in enumerate(args):
        if isinstance(arg, Tunable):  # as Kernel Tuner: each array it holds is checked when selected
            continue
        if not isinstance(arg, (np.ndarray, np.generic)):
            raise TypeError(f"Argument at position {i} of type: {type(arg)} should be of type "
                            "np.ndarray, numpy scalar, HIP Python DeviceArray, Julia VectorValue type")
    collected = []
    for it in re.finditer(re.escape(kernel_name) + "[ \n\t]*" + r"\(", kernel_string):
        kargs = kernel_string[it.end():kernel_string.find(")", it.end())].split(",")
        if len(kargs) != len(args):
            collected.append(f"Kernel ({len(kargs)}) and host argument ({len(args)}) lists do not match in size.")
            continue
        return
    for e in collected[:1]:
        warnings.warn(e, UserWarning)


def check_block_size_names(block_size_names):
    if block_size_names is not None:
        if not isinstance(block_size_names, list):
            raise ValueError("block_size_names should be a list of strings!", block_size_names, type(block_size_names))
        if len(block_size_names) > 3:
            raise ValueError("block_size_names should not contain more than 3 names!", block_size_names)
        if not all(isinstance(name, str) for name in block_size_names):
            raise ValueError("block_size_names should contain only strings!", block_size_names,
                             [type(name) for name in block_size_names])


def check_user_input(kernel_name, kernel_source, arguments, block_size_names, lang=None):
    """interface._check_user_input: the argument list against the kernel, block_size_names."""
    code = kernel_string_of(kernel_source)
    if code is not None:
        check_argument_list(kernel_name, code, arguments, lang or detect_language(code))
    check_block_size_names(block_size_names)


def check_tune_params_list(tune_params, observers, simulation_mode=False):
    forbidden_names = ("grid_size_x", "grid_size_y", "grid_size_z", "time")
    for name, param in tune_params.items():
        if name in forbidden_names:
            raise ValueError("Tune parameter " + name + " with value " + str(param) + " has a forbidden name!")
    if any("nvml_" in param for param in tune_params):
        from .observers.nvml import NVMLObserver
        if not simulation_mode and (not observers or not any(isinstance(o, NVMLObserver) for o in observers)):
            raise ValueError("Tune parameters starting with nvml_ require an NVMLObserver!")


def check_block_size_params_names_list(block_size_names, tune_params):
    if block_size_names is not None:
        for name in block_size_names:
            if name not in tune_params.keys():
                warnings.warn("Block size name " + name + " is not specified in the tunable parameters list!",
                              UserWarning)
    else:
        if not any(k.lower() in default_block_size_names for k in tune_params.keys()):
            warnings.warn("None of the tunable parameters specify thread block dimensions!", UserWarning)
        else:
            result = [k for k in tune_params if k.lower() in default_block_size_names and k not in default_block_size_names]
            block_size_names = sorted(result, key=str.casefold)
    return block_size_names


def get_objective_defaults(objective, objective_higher_is_better):
    objective = objective or "time"
    if objective_higher_is_better is None:
        if objective in objective_default_map:
            objective_higher_is_better = objective_default_map[objective]
        else:
            raise ValueError(f"Please specify objective_higher_is_better for objective {objective}")
    return objective, objective_higher_is_better


def replace_param_occurrences(string, params):
    result = ""
    for part in re.split("([a-zA-Z0-9_]+)", string):
        result += str(params[part]) if part in params else part
    return result


def defines_values(defines, params):
    """Each define's value for one configuration as Kernel Tuner's prepare_kernel_string writes
    it: a callable called, a string with parameter names substituted, newlines escaped."""
    out = []
    for k, v in defines.items():
        if callable(v):
            v = v(params)
        elif isinstance(v, str):
            v = replace_param_occurrences(v, params)
        if not k.isidentifier():
            raise ValueError(f"name is not a valid identifier: {k}")
        out.append(str(v).replace("\n", "\\\n"))
    return out


def get_problem_size(problem_size, params):
    if callable(problem_size):
        problem_size = problem_size(params)
    if isinstance(problem_size, (str, int, np.integer)):
        problem_size = (problem_size,)
    current_problem_size = [1, 1, 1]
    for i, s in enumerate(problem_size):
        if isinstance(s, str):
            current_problem_size[i] = int(eval(replace_param_occurrences(s, params)))
        elif isinstance(s, (int, np.integer)):
            current_problem_size[i] = s
        else:
            raise TypeError("Error: problem_size should only contain strings or integers")
    return current_problem_size


def get_grid_dimensions(current_problem_size, params, grid_div, block_size_names):
    def get_dimension_divisor(divisor, default, params):
        divisor_num = 1
        if divisor is None:
            divisor_num = params.get(default, 1)
        elif isinstance(divisor, int):
            divisor_num = divisor
        elif callable(divisor):
            divisor_num = divisor(params)
        elif isinstance(divisor, str):
            divisor_num = int(eval(replace_param_occurrences(divisor, params)))
        elif np.iterable(divisor):
            for div in divisor:
                divisor_num *= get_dimension_divisor(div, 1, params)
        else:
            raise ValueError("Error: unrecognized type in grid divisor list, should be any of int, str, callable, "
                             "or iterable")
        return divisor_num

    divisors = [get_dimension_divisor(d, block_size_names[i], params) for i, d in enumerate(grid_div)]
    return tuple(int(np.ceil(float(current_problem_size[i]) / float(d))) for i, d in enumerate(divisors))


def get_smem_args(smem_args, params):
    result = smem_args.copy()
    if "size" in result:
        size = result["size"]
        if callable(size):
            size = size(params)
        elif isinstance(size, str):
            size = int(eval(replace_param_occurrences(size, params)))
        result["size"] = size
    return result


def get_thread_block_dimensions(params, block_size_names=None):
    if not block_size_names:
        block_size_names = default_block_size_names
    return (int(params.get(block_size_names[0], 256)), int(params.get(block_size_names[1], 1)),
            int(params.get(block_size_names[2], 1)))


def get_best_config(results, objective, objective_higher_is_better=False):
    func = max if objective_higher_is_better else min
    ignore_val = sys.float_info.max if not objective_higher_is_better else -sys.float_info.max
    return func(results, key=lambda x: x[objective] if "__error__" not in x and isinstance(x[objective], float)
                else ignore_val)


def get_config_string(params, keys=None, units=None):
    def compact_number(v):
        return "{:.3f}".format(round(v, 3)) if isinstance(v, float) else str(v)
    items = []
    if not keys:
        keys = params.keys()
    for k, v in params.items():
        if k in keys:
            unit = units.get(k, "") if isinstance(units, dict) and not isinstance(v, ErrorConfig) else ""
            items.append(k + "=" + compact_number(v) + unit)
    return ", ".join(items)


def get_instance_string(params):
    return "_".join([str(i) for i in params.values()])


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.util.{name} is not provided by cutune (cutune.util has the "
                         "checks, problem size, grid and config-string helpers)")
