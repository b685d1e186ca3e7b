"""kernel_tuner.observers.nvml: NVMLObserver with Kernel Tuner 1.5's observables. cutune does not
read NVML in Python: the observables its engine measures (nvml_power, nvml_energy, core_freq,
temperature) are asked of `cutune tune --observe` and come back under these names; tune_kernel
warns naming any other (power_readings, mem_freq, gr_voltage)."""
from .observer import BenchmarkObserver

SUPPORTED = ["power_readings", "nvml_power", "nvml_energy", "core_freq", "mem_freq", "temperature", "gr_voltage"]
# What cutune's engine measures (cutune tune --observe), by Kernel Tuner's names.
MEASURED = ["nvml_power", "nvml_energy", "core_freq", "temperature"]


class NVMLObserver(BenchmarkObserver):
    def __init__(self, observables, device=None, save_all=False, nvidia_smi_fallback=None, use_locked_clocks=False,
                 continuous_duration=1):
        for obs in observables:
            if obs not in SUPPORTED:
                raise ValueError(f"Observable {obs} not in supported: {SUPPORTED}")
        self.observables = list(observables)
        self.device = device
        self.save_all = save_all
        self.continuous_duration = continuous_duration

    def get_results(self):
        return {}
