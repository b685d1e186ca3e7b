#!/usr/bin/env python3
"""Writes docs/reference/cli.md: `cutune --help` and every subcommand's `--help`, as the binary
prints them, so that the reference cannot drift from the code. With --check it writes nothing and
exits 1 when the committed file differs from what the binary prints (CTest docs:cli-reference).

Usage: python3 scripts/gen_cli_reference.py [--cutune build/tuner/cli/cutune] [--out docs/reference/cli.md] [--check]
"""
import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def help_text(cutune, words):
    """The --help of `cutune WORDS...`, with the binary's path shown as `cutune`."""
    p = subprocess.run([cutune, *words, "--help"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(['cutune', *words, '--help'])} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout.replace(str(cutune), "cutune").rstrip() + "\n"


def subcommands(text):
    """The names listed under 'Subcommands:' in a CLI11 help text."""
    part = text.split("\nSubcommands:\n", 1)
    if len(part) < 2:
        return []
    return [m.group(1) for m in re.finditer(r"^  (\S+)", part[1], re.M)]


def reference(cutune):
    top = help_text(cutune, [])
    lines = ["# Command reference", "",
             "Generated from the binary's own `--help` by `python3 scripts/gen_cli_reference.py` (run it",
             "after changing an option; CTest `docs:cli-reference` fails while this file differs). The guides",
             "in [../](../README.md) say when to use what.", "", "## cutune", "", "```text", top.rstrip(), "```", ""]
    todo = [[name] for name in subcommands(top)]
    while todo:
        words = todo.pop(0)
        text = help_text(cutune, words)
        lines += [f"## cutune {' '.join(words)}", "", "```text", text.rstrip(), "```", ""]
        todo[0:0] = [words + [name] for name in subcommands(text)]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutune", default=str(ROOT / "build" / "tuner" / "cli" / "cutune"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "reference" / "cli.md"))
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args()
    if not Path(args.cutune).is_file():
        print(f"gen_cli_reference.py: --cutune {args.cutune}: no such binary (cmake --build build --target cutune)",
              file=sys.stderr)
        return 2
    text = reference(args.cutune)
    out = Path(args.out)
    if args.check:
        old = out.read_text() if out.is_file() else ""
        if old == text:
            return 0
        diff = difflib.unified_diff(old.splitlines(), text.splitlines(), str(out), "cutune --help", lineterm="", n=1)
        print("\n".join(list(diff)[:60]))
        print(f"{out} differs from the binary's --help: run python3 scripts/gen_cli_reference.py", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
