"""Kernel Tuner's observer base classes (constructible; cutune does not call them)."""


class BenchmarkObserver:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.results = {}

    def register_device(self, dev):
        self.dev = dev

    def register_configuration(self, params):
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
    def process_output(self, answer, output):
        pass


class PrologueObserver(BenchmarkObserver):
    def before_start(self):
        pass
