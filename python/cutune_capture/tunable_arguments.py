"""Kernel Tuner's Tunable arguments (kernel_tuner.accuracy.Tunable, TunablePrecision) as T1
arguments with Variants: every array the Tunable can select, each its own data file, and per
configuration the index of the one Kernel Tuner's select_for_configuration picks (a column of
cutune.Configurations, written by the cutune package, which evaluates the selection)."""
import numpy


def is_tunable(argument):
    """Duck-typed: the cutune package's Tunable and Kernel Tuner's own both qualify."""
    return hasattr(argument, "select_for_configuration") and hasattr(argument, "param_key") and \
        hasattr(argument, "data")


def leaves(tunable):
    """(key path, array) for every array a Tunable can select, nested Tunables walked in their
    keys' order; the path joins the keys with '/'."""
    out = []
    for key, value in tunable.data.items():
        if is_tunable(value):
            out.extend((f"{key}/{k}", v) for k, v in leaves(value))
        else:
            out.append((str(key), value))
    return out


def selection_column(tunable, configs):
    """Per configuration (dicts of parameter values), the index into leaves() of the array the
    configuration selects, found by identity: select_for_configuration returns the very object
    it holds. Its KeyError (a value that is not a key) passes through, as in Kernel Tuner."""
    index = {}
    for i, (_, value) in enumerate(leaves(tunable)):
        index.setdefault(id(value), i)
    column = numpy.empty(len(configs), dtype="<u4")
    for row, config in enumerate(configs):
        column[row] = index[id(tunable.select_for_configuration(dict(config)))]
    return column
