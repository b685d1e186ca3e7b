"""The compact form of Kernel Tuner's valid keys in results/kt_corpus/kt_keys.json.gz. A space's
keys ("v1,v2,...") are stored as the values seen at each position (sorted as strings) and a bitmap
over their product, first position slowest: 116,928 CLBlast GEMM keys take a few kilobytes where
the strings took hundreds."""
import base64
import gzip
import itertools
import json
import math


def encode(keys):
    if not keys:
        return {"values": [], "bitmap": "", "count": 0}
    parts = [k.split(",") for k in keys]
    values = [sorted({p[i] for p in parts}) for i in range(len(parts[0]))]
    index = [{v: j for j, v in enumerate(vs)} for vs in values]
    radix = [len(vs) for vs in values]
    bits = bytearray(math.ceil(math.prod(radix) / 8))
    for p in parts:
        n = 0
        for i, v in enumerate(p):
            n = n * radix[i] + index[i][v]
        bits[n // 8] |= 1 << (n % 8)
    return {"values": values, "bitmap": base64.b64encode(bytes(bits)).decode(), "count": len(keys)}


def decode(entry):
    """The set of keys of one encoded space."""
    if not entry.get("values"):
        return set()
    bits = base64.b64decode(entry["bitmap"])
    return {",".join(combo) for n, combo in enumerate(itertools.product(*entry["values"]))
            if bits[n // 8] >> (n % 8) & 1}


def load(path):
    """{script id: [set of valid keys, or None where Kernel Tuner built no space, per tune_kernel call]}"""
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    return {sid: [decode(c) if "values" in c else None for c in calls] for sid, calls in doc.items()}
