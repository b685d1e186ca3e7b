#!/usr/bin/env python3
"""Checks every #include of cutune's own headers against the intended layers.

A folder may include only the folders listed for it in LAYERS (and itself): nothing
includes a header from a folder that depends on it. The folder that provides an include
is found from the tree (`<folder>/include/cutune/<name>/...`), so a header that moves is
followed without editing this script. Exit 0 when every include is allowed; 1 with one
line per offending include (file:line, the include, both folders) otherwise.

Usage: scripts/check_layers.py [REPO_ROOT] [--graph]   (--graph prints the folder graph)
"""
import re
import sys
from pathlib import Path

# Folder -> the folders it may include. Order is bottom-up; the README's layout table says
# the same in words.
LAYERS = {
    "model": [],
    "search": ["model"],
    "db/store": ["model"],
    "kernel_templates": ["model"],
    # The replay target in db/formats (recorded spaces for simulation) reads search's
    # model of a recording; the formats target itself links no search.
    "db/formats": ["model", "db/store", "search"],
    # cutune report: the store's rows as charts; the scoring's random-search expectation.
    "report": ["model", "db/store", "search"],
    "tuner/process": [],
    "tuner/jit": ["model"],
    "tuner/cuda": ["model"],
    "tuner/measure": ["model", "tuner/cuda"],
    "tuner/worker": ["model", "kernel_templates", "tuner/jit", "tuner/cuda", "tuner/measure", "tuner/process"],
    "tuner/runner": ["model", "search", "db/store", "db/formats", "kernel_templates", "tuner/jit", "tuner/cuda",
                     "tuner/measure", "tuner/process", "tuner/worker"],
    "tuner/loader": ["model", "db/store", "db/formats", "kernel_templates", "tuner/jit", "tuner/cuda"],
    "tuner/cluster": ["model", "tuner/cuda", "tuner/jit", "tuner/process", "tuner/worker", "tuner/runner",
                      "search", "db/store", "db/formats", "kernel_templates", "tuner/measure"],
    "tuner/cli": ["model", "search", "db/store", "db/formats", "report", "kernel_templates", "tuner/jit",
                  "tuner/cuda", "tuner/measure", "tuner/process", "tuner/worker", "tuner/runner", "tuner/cluster", "tuner/loader"],
}
# Users of everything: they are not layers, nothing includes them.
TOP = ["bench", "tests", "examples"]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cutune/[^">]+)[">]')


def folder_of(path: Path, root: Path):
    rel = path.relative_to(root).as_posix()
    for folder in sorted(LAYERS, key=len, reverse=True):
        if rel.startswith(folder + "/"):
            return folder
    for folder in TOP:
        if rel.startswith(folder + "/"):
            return folder
    return None


def providers(root: Path):
    """'cutune/model/space.hpp' -> 'model', from where each header lives."""
    out = {}
    for folder in LAYERS:
        inc = root / folder / "include"
        if not inc.is_dir():
            continue
        for h in inc.rglob("*"):
            if h.is_file():
                out[h.relative_to(inc).as_posix()] = folder
    return out


def main(argv):
    graph = "--graph" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = Path(args[0]).resolve() if args else Path(__file__).resolve().parent.parent
    missing = [f for f in LAYERS if not (root / f).is_dir()]
    if missing:
        print(f"check_layers: folders named in LAYERS are missing: {', '.join(missing)}")
        return 1
    provided = providers(root)
    problems, edges = [], {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("build", ".")) or "/build" in rel:
            continue
        here = folder_of(path, root)
        if here is None:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            there = provided.get(m.group(1))
            if there is None:
                # Generated headers (embedded images) and the templates' device headers live
                # in build folders or are included by kernels; nothing to check.
                continue
            if there == here:
                continue
            edges.setdefault(here, set()).add(there)
            if here in LAYERS and there not in LAYERS[here]:
                problems.append(f"{rel}:{n}: {m.group(1)}: {here} may not include {there}")
    if graph:
        for here in sorted(edges):
            print(f"{here} -> {', '.join(sorted(edges[here]))}")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) against the layers (scripts/check_layers.py LAYERS)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
