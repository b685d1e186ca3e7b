"""Writes the study's files in results/kt_corpus/ from the rows run_study.py made."""
import gzip
import json
from pathlib import Path

from . import kt_keys

COMMAND = ("python3 scripts/fetch_kt_corpus.py && scripts/kt_venv.sh && "
           "cmake --build build --target cutune cutune-worker && python3 -m studies.kt_corpus.run_study")


def load_rows(path, key):
    if not path.is_file():
        return {}
    return {r["id"]: r for r in json.loads(path.read_text())[key]}


def spaces_row(entry, row):
    src = entry["sources"][0]
    out = {"id": entry["id"], "repo": src["repo"], "commit": src["commit"], "script": entry["script"],
           "args": entry["args"], "kernel": entry["kernel"]}
    if row.get("skipped"):
        out["skipped"] = row["skipped"]
        return out
    out["kt_status"] = row["kt"]["status"]
    out["kt_outcome"] = row["outcome"]["kt"]
    out["calls"] = [{k: v for k, v in c.items() if k != "kt_keys"} for c in row["kt"]["calls"]]
    out["features"] = row["features"]
    return out


def keys_row(row):
    tune = [c for c in row.get("kt", {}).get("calls", []) if c["kind"] == "tune_kernel"]
    return [{"tune_call": i + 1, "kernel_name": c["kernel_name"], "valid": c.get("kt_valid"),
             "kt_error": c.get("kt_error", {}).get("type"),
             **(kt_keys.encode(c["kt_keys"]) if c.get("kt_keys") is not None else {})} for i, c in enumerate(tune)]


def capture_row(row):
    if row.get("skipped"):
        return {"id": row["id"], "outcome": row["outcome"]}
    return {"id": row["id"], "capture": row["capture"], "outcome": row["outcome"]}


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def call_cells(cap):
    tune = [c for c in cap.get("calls", []) if c["kind"] == "tune_kernel"]
    captured = sum(c["status"] == "captured" for c in tune)
    spaces = [c["space"] for c in tune if c.get("space")]
    equal = sum(s["equal"] for s in spaces)
    compiled = sum(c.get("compiled") is True for c in tune)
    counts = "; ".join(f"{s['kt']}/{s['cutune']}" for s in spaces)
    return (f"{captured}/{len(tune)}", f"{equal}/{len(spaces)}" + (f" ({counts})" if counts else ""),
            f"{compiled}/{captured}")


def status_markdown(manifest, captures):
    lines = ["# cutune's capture on the Kernel Tuner corpus", "",
             "Made by `python3 -m studies.kt_corpus.run_study` (see README.md). Per script: Kernel Tuner "
             "1.5.0's outcome without a GPU; the capture's status; tune_kernel calls captured; spaces equal to "
             "Kernel Tuner's key set (equal/compared, and Kernel Tuner/cutune valid counts); defaults that "
             "compile (`cutune compile --arch sm_90`); the issue's classes (1 Python not translatable, "
             "2 compilation, 3 element types, 4 paths/modules, 5 workflow; 'KT fails too': Kernel Tuner "
             "1.5 fails as well) with the messages behind them.", "",
             "| script | Kernel Tuner 1.5 | capture | captured | space equal | default compiles | classes | reasons |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for entry in manifest:
        row = captures.get(entry["id"])
        if row is None:
            continue
        o = row["outcome"]
        if "capture" not in row:
            lines.append(f"| {entry['id']} | {cell(o['reasons'][0])} | — | — | — | — | skipped | |")
            continue
        cap = row["capture"]
        captured, equal, compiled = call_cells(cap)
        reasons = "<br>".join(cell(r) for r in o["reasons"]) or "none"
        lines.append(f"| {entry['id']} | {cell(o['kt'])} | {cap.get('status')} | {captured} | {equal} | {compiled} "
                     f"| {', '.join(o['classes']) or 'ok'} | {reasons} |")
    totals = {}
    for row in captures.values():
        for c in row["outcome"]["classes"]:
            totals[c] = totals.get(c, 0) + 1
    tune = [c for row in captures.values() for c in row.get("capture", {}).get("calls", []) if c["kind"] == "tune_kernel"]
    spaces = [c["space"] for c in tune if c.get("space")]
    compiled = [c for c in tune if c.get("status") == "captured"]
    lines += ["", f"tune_kernel calls: {len(tune)}; captured: {len(compiled)}; spaces compared with Kernel "
              f"Tuner's: {len(spaces)}, equal: {sum(s['equal'] for s in spaces)}; defaults compiled: "
              f"{sum(c.get('compiled') is True for c in compiled)} of {len(compiled)}.",
              "", "Scripts per class: " + ", ".join(f"{k}: {v}" for k, v in sorted(totals.items())), ""]
    return "\n".join(lines)


def readme(manifest, spaces):
    lines = ["# Kernel Tuner scripts from public projects: what Kernel Tuner 1.5 builds, what cutune captures",
             "", f"{len(manifest)} real Kernel Tuner scripts from public GitHub repositories (none from "
             "Kernel Tuner's own examples or BAT), pinned in `studies/kt_corpus/manifest.json` (repository, "
             "commit, every file with its sha256, licence, the kernel). The files are not in this repository.",
             "", "Reproduce (no GPU needed; about half an hour on 2 cores):", "", "```sh", COMMAND.replace(" && ", " &&\n"),
             "```", "", "`fetch_kt_corpus.py --git-root DIR` reads local git copies instead of GitHub. Files:", "",
             "- `spaces_summary.json`: per script, Kernel Tuner 1.5.0's view without a GPU: each tune_kernel/run_kernel "
             "call's problem size, grid divisors, defines, argument dtypes, compiler options, language, restrictions, "
             "metrics, answer, the valid-configuration count, the exception Kernel Tuner raises if any, and the Python "
             "features the script uses;",
             "- `kt_keys.json.gz`: the valid keys (`\"v1,v2,...\"`) Kernel Tuner's Searchspace builds "
             "for every tune_kernel call (max_threads 1024), for equality tests: a bitmap over the product of the values "
             "seen per position; `studies.kt_corpus.kt_keys.load(path)` gives {script: [set of keys per call]};",
             "- `capture_status.md` / `.json`: cutune's current capture, space and default compile per script, with the "
             "issue's failure classes.", "",
             "| script | kernel | Kernel Tuner 1.5 | features used | kernel_tuner imports |", "| --- | --- | --- | --- | --- |"]
    for entry in manifest:
        s = spaces.get(entry["id"])
        if s is None:
            continue
        if "skipped" in s:
            lines.append(f"| {entry['id']} | {cell(entry['kernel'])} | {cell(s['skipped'])} | | |")
            continue
        f = s["features"]
        lines.append(f"| {entry['id']} | {cell(entry['kernel'])} | {cell(s['kt_outcome'])} | "
                     f"{cell('; '.join(f['used']))} | {cell(', '.join(f['kernel_tuner_imports']))} |")
    return "\n".join(lines) + "\n"


def write(out, manifest, rows, merge):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    by_id = {e["id"]: e for e in manifest}
    spaces = load_rows(out / "spaces_summary.json", "scripts") if merge else {}
    captures = load_rows(out / "capture_status.json", "scripts") if merge else {}
    keys = {}
    if merge and (out / "kt_keys.json.gz").is_file():
        with gzip.open(out / "kt_keys.json.gz", "rt") as f:
            keys = json.load(f)
    for row in rows:
        spaces[row["id"]] = spaces_row(by_id[row["id"]], row)
        captures[row["id"]] = capture_row(row)
        if not row.get("skipped"):
            keys[row["id"]] = keys_row(row)
    order = [e["id"] for e in manifest]
    ordered = lambda d: [d[i] for i in order if i in d]  # noqa: E731
    (out / "spaces_summary.json").write_text(json.dumps({"kernel_tuner": "1.5.0", "max_threads": 1024,
                                                         "scripts": ordered(spaces)}, indent=1) + "\n")
    (out / "capture_status.json").write_text(json.dumps({"scripts": ordered(captures)}, indent=1) + "\n")
    with gzip.GzipFile(out / "kt_keys.json.gz", "wb", mtime=0) as f:
        f.write(json.dumps({i: keys[i] for i in order if i in keys}, separators=(",", ":")).encode())
    (out / "capture_status.md").write_text(status_markdown(manifest, captures))
    (out / "README.md").write_text(readme(manifest, spaces))
