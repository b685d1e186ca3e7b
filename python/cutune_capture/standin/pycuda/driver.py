"""The parts of pycuda.driver that host-side setup in Kernel Tuner scripts uses."""
import numpy


def init(flags=0):
    pass


class host_alloc_flags:  # noqa: N801 -- PyCUDA's spelling
    PORTABLE = 1
    DEVICEMAP = 2
    WRITECOMBINED = 4


class mem_attach_flags:  # noqa: N801
    GLOBAL = 1
    HOST = 2
    SINGLE = 4


class Context:
    def pop(self):
        pass

    def push(self):
        pass

    def detach(self):
        pass

    def synchronize(self):
        pass

    @staticmethod
    def get_device():
        return Device(0)


class Device:
    def __init__(self, number=0):
        self.number = number

    @staticmethod
    def count():
        return 1

    def make_context(self, flags=0):
        return Context()

    def name(self):
        return "cutune capture (no device)"

    def compute_capability(self):
        return (0, 0)


def pagelocked_empty(shape, dtype, order="C", mem_flags=0):
    return numpy.empty(shape, dtype, order=order)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0):
    return numpy.zeros(shape, dtype, order=order)


def pagelocked_empty_like(array, mem_flags=0):
    return numpy.empty_like(array)


def pagelocked_zeros_like(array, mem_flags=0):
    return numpy.zeros_like(array)


def __getattr__(name):
    raise AttributeError(f"cutune capture: pycuda.driver.{name} is not provided by the stand-in "
                         "(a capture launches nothing on a GPU)")
