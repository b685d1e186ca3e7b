#!/usr/bin/env python3
"""python's cutune.best_config without a GPU: the loader's selection through `cutune select`
(a template default from a wisdom file without winners; a selector's pick from a wisdom file
that has one), and bad input as ValueError with cutune's message.

    test_best_config.py CUTUNE_BIN
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy_python  # noqa: E402 -- beside this file

numpy_python.ensure()
os.environ["CUTUNE_BIN"] = sys.argv[1]
import cutune  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3/sm_90"
with tempfile.TemporaryDirectory() as tmp:
    empty = os.path.join(tmp, "empty.json")
    json.dump({"format": "cutune-wisdom", "version": 1, "generated_at": "", "winners": []}, open(empty, "w"))
    sel = cutune.best_config("reduction", {"n": 2**20}, winners=empty, gpu=H100)
    assert sel["rung_name"] == "template default", sel
    assert sel["config"]["block_size_x"] == 256, sel["config"]  # the template's default, as an int
    assert "rung 4 (template default)" in sel.describe(), sel.describe()

    # A selector with two configurations split at n <= 2**20.
    a = dict(sel["config"])
    b = dict(a, block_size_x=128)
    wisdom = os.path.join(tmp, "sel.json")
    json.dump({"format": "cutune-wisdom", "version": 1, "generated_at": "", "winners": [],
               "selectors": [{"kernel": "reduction", "gpu_model": H100, "bound": 0.05, "worst_slowdown": 0.01,
                              "shapes": ["n=1048576", "n=4194304"], "configs": [a, b],
                              "tree": [{"variable": "n", "at_most": 2**20, "low": 1, "high": 2},
                                       {"config": 0}, {"config": 1}]}]}, open(wisdom, "w"))
    assert cutune.best_config("reduction", "n=1000", winners=wisdom, gpu=H100)["config"]["block_size_x"] == 256
    big = cutune.best_config("reduction", "n=2**24", winners=wisdom, gpu=H100)
    assert big["rung_name"] == "selector" and big["config"]["block_size_x"] == 128, big
    assert cutune.best_config("reduction", "n=2**24", winners=wisdom, gpu=H100, selectors=False)["rung_name"] == \
        "template default"

    # Bad input: ValueError carrying cutune's one line.
    b["block_size_x"] = 4096
    json.dump({"format": "cutune-wisdom", "version": 1, "generated_at": "", "winners": [],
               "selectors": [{"kernel": "reduction", "gpu_model": H100, "bound": 0.05, "configs": [a, b],
                              "tree": [{"variable": "n", "at_most": 2**20, "low": 1, "high": 2},
                                       {"config": 0}, {"config": 1}]}]}, open(wisdom, "w"))
    for bad in (dict(kernel="reduction", problem="n=1000", winners=wisdom, gpu=H100),
                dict(kernel="reduction", problem="q=1", winners=empty, gpu=H100),
                dict(kernel="reduction", problem="n=1", winners=empty, gpu="H100")):
        try:
            cutune.best_config(**bad)
        except ValueError as e:
            assert str(e).startswith("cutune: ") and "\n" not in str(e), e
        else:
            raise AssertionError(f"accepted: {bad}")
print("ok")
