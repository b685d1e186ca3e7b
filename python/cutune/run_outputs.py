"""The files `cutune run --outputs DIR` writes (tuner/cli/run_command.hpp), read back as
Kernel Tuner's run_kernel returns its results: one numpy array per array argument, with the
argument's dtype and shape, and every scalar as it was given."""
import json
import os

import numpy


class OutputsError(RuntimeError):
    """The folder does not hold what `cutune run` writes for these arguments."""


def read(out_dir, arguments):
    path = os.path.join(out_dir, "outputs.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise OutputsError(f"cutune run: {path}: {e}") from None
    entries = doc.get("arguments")
    if not isinstance(entries, list) or len(entries) != len(arguments):
        raise OutputsError(f"cutune run: {path}: {len(entries) if isinstance(entries, list) else 'no'} arguments "
                           f"for the {len(arguments)} given")
    results = []
    for i, (arg, entry) in enumerate(zip(arguments, entries)):
        if numpy.isscalar(arg):  # as Kernel Tuner: a scalar comes back as it was given
            results.append(arg)
            continue
        arg = numpy.asarray(arg)
        if entry.get("bytes") != arg.nbytes:
            raise OutputsError(f"cutune run: {path}: arguments[{i}] ({entry.get('name')}) has {entry.get('bytes')} "
                               f"bytes, the array given {arg.nbytes}")
        with open(os.path.join(out_dir, entry["file"]), "rb") as f:
            data = f.read()
        if len(data) != arg.nbytes:
            raise OutputsError(f"cutune run: {entry['file']}: {len(data)} bytes where {arg.nbytes} were announced")
        # Kernel Tuner copies the device buffer into numpy.zeros_like(arg); the buffer was
        # uploaded in C order, little-endian (the argument's data file).
        flat = numpy.frombuffer(data, dtype=arg.dtype.newbyteorder("<")).astype(arg.dtype, copy=False)
        out = numpy.zeros_like(arg)
        out[...] = flat.reshape(arg.shape)
        results.append(out)
    return results
