"""Kernel Tuner's observer base classes, as inert stand-ins."""


class BenchmarkObserver:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return f"{type(self).__name__}(...)"

    def register_device(self, dev):
        pass

    def before_start(self):
        pass

    def after_start(self):
        pass

    def during(self):
        pass

    def after_finish(self):
        pass

    def get_results(self):
        return {}


class IterationObserver(BenchmarkObserver):
    pass


class ContinuousObserver(BenchmarkObserver):
    pass


class OutputObserver(BenchmarkObserver):
    pass


class PrologueObserver(BenchmarkObserver):
    pass
