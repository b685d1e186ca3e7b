"""Studies and benchmark drivers behind the figures under results/.

Each module answers one question (how cutune's strategies score against Kernel Tuner's, what a
GPU measures, how the loop scales over GPUs...) and writes the table, JSON and command that
results/<study>/ keeps. Run one from the repository root as a module, so that the modules
import each other by name:

    python3 -m studies.bench_strategies --help

The tools users and CI run stay in scripts/.
"""
