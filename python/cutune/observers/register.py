"""kernel_tuner.observers.register, as Kernel Tuner 1.5 has it: the registers per thread of each
configuration's kernel. cutune gives the device it registers (observing.Device) the count its GPU
worker read from the driver (CU_FUNC_ATTRIBUTE_NUM_REGS, as Kernel Tuner's backends do)."""
from .observer import BenchmarkObserver


class RegisterObserver(BenchmarkObserver):
    def get_results(self):
        try:
            registers_per_thread = self.dev.num_regs
        except AttributeError:
            raise NotImplementedError(
                f"Backend '{type(self.dev).__name__}' does not support count of registers per thread") from None
        return {"num_regs": registers_per_thread}
