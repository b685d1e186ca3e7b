"""kernel_tuner.file_utils: the T4 output and metadata files."""
import json
import platform
import warnings

from . import util


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Kernel Tuner's T4 results file: one entry per result, its parameters, times and status."""
    if not str(output_filename).endswith(".json"):
        output_filename = str(output_filename) + ".json"
    out = []
    for r in results:
        t = r.get(objective)
        invalid = isinstance(t, util.ErrorConfig)
        out.append({"timestamp": r.get("timestamp"),
                    "configuration": {k: r[k] for k in tune_params if k in r},
                    "invalidity": {"InvalidConfig": "constraints", "CompilationFailedConfig": "compile",
                                   "RuntimeFailedConfig": "runtime"}.get(str(t), "runtime") if invalid else "correct",
                    "correctness": 1,
                    "measurements": [] if invalid else [{"name": objective, "value": t,
                                                          "unit": "ms" if objective == "time" else ""}],
                    "objectives": [objective],
                    "times": {k: r.get(k) for k in ("compile_time", "verification_time", "benchmark_time",
                                                     "strategy_time", "framework_time") if k in r}})
    with open(output_filename, "w") as f:
        json.dump({"results": out, "schema_version": "1.0.0"}, f, indent=1)


def store_metadata_file(metadata_filename):
    """Kernel Tuner writes the host's hardware and software (lshw, nvidia-smi); cutune records
    what it knows without running those tools."""
    if not str(metadata_filename).endswith(".json"):
        metadata_filename = str(metadata_filename) + ".json"
    warnings.warn("cutune: kernel_tuner.file_utils.store_metadata_file writes the platform only (no lshw or "
                  "nvidia-smi output)", stacklevel=2)
    with open(metadata_filename, "w") as f:
        json.dump({"metadata": {"platform": platform.platform(), "python": platform.python_version()},
                   "schema_version": "1.0.0"}, f, indent=1)


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.file_utils.{name} is not provided by cutune")
