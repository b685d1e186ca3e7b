"""Stand-in: kernel_tuner.observers.ncu (constructible, never run)."""
from kernel_tuner.observers.observer import PrologueObserver


class NCUObserver(PrologueObserver):
    pass
