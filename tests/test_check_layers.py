#!/usr/bin/env python3
"""scripts/check_layers.py catches an upward include and passes a downward one (a tree
made in a temporary folder with every layer of its LAYERS)."""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_layers.py"
sys.path.insert(0, str(SCRIPT.parent))
import check_layers  # noqa: E402


def tree(upward: bool) -> Path:
    root = Path(tempfile.mkdtemp(prefix="cutune-layers-"))
    for folder in check_layers.LAYERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "model/include/cutune/model").mkdir(parents=True)
    (root / "search/include/cutune/search").mkdir(parents=True)
    (root / "model/include/cutune/model/space.hpp").write_text("#pragma once\n")
    (root / "search/include/cutune/search/strategy.hpp").write_text(
        '#pragma once\n#include "cutune/model/space.hpp"\n')
    if upward:
        (root / "model/src").mkdir()
        (root / "model/src/space.cpp").write_text('#include <vector>\n#include "cutune/search/strategy.hpp"\n')
    return root


def run(root: Path):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


def main():
    ok = run(tree(upward=False))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = run(tree(upward=True))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "model/src/space.cpp:2: cutune/search/strategy.hpp: model may not include search" in bad.stdout, bad.stdout
    real = run(ROOT)
    assert real.returncode == 0, "the repository breaks its layers:\n" + real.stdout
    print("ok")


if __name__ == "__main__":
    main()
