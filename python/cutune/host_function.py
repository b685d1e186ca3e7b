"""run_kernel with lang="C": a C/C++ function run once on the CPU, as Kernel Tuner 1.5's
compiler backend runs it (kernel_tuner/backends/compiler.py). Scripts use it for their reference
answer (`run_kernel("reference", src, 1, args, {}, lang="C")`) before tuning the CUDA kernel.

The source gets the same #define prefix Kernel Tuner writes (grid and block sizes, the
parameters, kernel_tuner 1), is compiled with the compiler the call names (g++ by default; nvcc
where the source has device code, as Kernel Tuner switches) into a shared library, loaded with
ctypes and called with pointers to the caller's own arrays: like Kernel Tuner, the function
writes into them, and the returned list holds copies."""
import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy

from . import util

# Kernel Tuner's compiler backend passes exactly these element types (its dtype_map).
CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
          "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
          "float32": ctypes.c_float, "float64": ctypes.c_double}
DEVICE_CODE_SIGNALS = ("__global", "__syncthreads()", "threadIdx")


def defines_prefix(params, grid, threads, block_size_names, defines):
    """Kernel Tuner's prepare_kernel_string prefix for a non-CUDA language."""
    if defines is None:
        defines = {}
        for name, g in zip(("grid_size_x", "grid_size_y", "grid_size_z"), grid):
            defines[name] = g
        for name, t in zip(block_size_names, threads):
            defines[name] = t
        defines.update(params)
        defines["kernel_tuner"] = 1
    lines = [f"#define {k} {v}\n" for k, v in zip(defines, util.defines_values(defines, params))]
    return "".join(lines)


def c_arguments(arguments):
    """(ctypes values, the arrays they point into); TypeError as Kernel Tuner's ready_argument_list."""
    out = []
    for arg in arguments:
        if not isinstance(arg, (numpy.ndarray, numpy.number)):
            raise TypeError(f"Argument is not numpy or cupy ndarray or numpy scalar or HIP Python DeviceArray "
                            f"but a {type(arg)}")
        dtype = str(arg.dtype)
        if isinstance(arg, numpy.ndarray):
            if dtype not in CTYPES:
                raise TypeError("unknown dtype for ndarray")
            out.append(arg.ctypes.data_as(ctypes.POINTER(CTYPES[dtype])))
        else:
            out.append(CTYPES[dtype](arg))
    return out


def _suffix(kernel_source, code):
    suffix = None
    if isinstance(kernel_source, str) and util.looks_like_a_filename(kernel_source):
        suffix = os.path.splitext(kernel_source)[1] or None
    if any(s in code for s in DEVICE_CODE_SIGNALS):
        suffix = ".cu"
    return suffix


def compile_library(code, suffix, compiler, compiler_options, folder):
    """The shared library's path; CalledProcessError (with the compiler's output) on failure."""
    compiler = compiler or "g++"
    if (suffix == ".cu" or "#include <cuda" in code or "cudaMemcpy" in code) and compiler == "g++" \
            and shutil.which("nvcc"):
        compiler = "nvcc"
    suffix = suffix or ".cc"
    options = ["-fPIC"]
    if compiler == "nvcc":
        options = ["-Xcompiler=" + o for o in options]
    if ".c" in suffix and 'extern "C"' not in code:
        code = 'extern "C" {\n' + code + "\n}"
    options += list(compiler_options or [])
    libs = ["-lOpenCL"] if "CL/cl.h" in code else []
    source = os.path.join(folder, "kernel" + suffix)
    with open(source, "w") as f:
        f.write(code)
    obj, lib = os.path.join(folder, "kernel.o"), os.path.join(folder, "kernel.so")
    for cmd in ([compiler, "-c", source] + options + ["-o", obj], [compiler, obj] + options + ["-shared", "-o", lib] + libs):
        subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    return lib


def run(o, params, block_size_names):
    """run_kernel's outputs for lang="C" (o: run_kernel's arguments by name)."""
    code = util.kernel_string_of(o["kernel_source"])
    current = util.get_problem_size(o["problem_size"], params)
    grid = util.get_grid_dimensions(current, params, (o["grid_div_x"], o["grid_div_y"], o["grid_div_z"]),
                                    block_size_names)
    threads = util.get_thread_block_dimensions(params, block_size_names)
    code = defines_prefix(params, grid, threads, block_size_names, o.get("defines")) + code
    arguments = list(o["arguments"])
    c_args = c_arguments(arguments)
    folder = tempfile.mkdtemp(prefix="cutune-c-")
    try:
        lib = ctypes.CDLL(compile_library(code, _suffix(o["kernel_source"], code), o.get("compiler"),
                                          o.get("compiler_options"), folder))
        func = getattr(lib, o["kernel_name"])
        func.restype = ctypes.c_float
        func(*c_args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return [a if numpy.isscalar(a) else numpy.array(a, copy=True) for a in arguments]
