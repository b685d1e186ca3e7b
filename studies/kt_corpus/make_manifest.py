#!/usr/bin/env python3
"""Expands corpus_spec.json into manifest.json: every file each corpus script needs, with the
sha256 of its content at the pinned commit, read from local git copies of the repositories.

    python3 studies/kt_corpus/make_manifest.py --git-root DIR

DIR holds one git directory per repository, DIR/<owner>+<name>/repo (or repo/.git), as the search
tool's fetch brings them. A spec pattern is matched against the commit's file list: '**' spans
folders, '*' and '?' stay inside one. A pattern that matches nothing is an error, so a typo or a
moved file shows here and not later as a script that cannot find its kernel.
"""
import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git_dir(root, repo):
    base = Path(root) / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def pattern_regex(pattern):
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def git(gdir, *args):
    return subprocess.run(["git", f"--git-dir={gdir}", *args], check=True, capture_output=True).stdout


def expand_source(root, source):
    gdir = git_dir(root, source["repo"])
    listing = git(gdir, "ls-tree", "-r", source["commit"]).decode().splitlines()
    blobs = {}
    for line in listing:
        meta, path = line.split("\t", 1)
        mode, kind, _ = meta.split()
        if kind == "blob" and mode != "120000":
            blobs[path] = True
    files = []
    for pattern in source["include"]:
        regex = pattern_regex(pattern)
        matched = sorted(p for p in blobs if regex.match(p))
        if not matched:
            sys.exit(f"make_manifest: {source['repo']}@{source['commit'][:10]}: pattern '{pattern}' matches no file")
        for path in matched:
            if any(f["path"] == path for f in files):
                continue
            data = git(gdir, "show", f"{source['commit']}:{path}")
            files.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    out = {k: v for k, v in source.items() if k != "include"}
    out["patterns"] = source["include"]
    out["files"] = files
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-root", required=True)
    parser.add_argument("--spec", default=str(HERE / "corpus_spec.json"))
    parser.add_argument("--out", default=str(HERE / "manifest.json"))
    args = parser.parse_args()
    spec = json.loads(Path(args.spec).read_text())
    by_id = {s["id"]: s for s in spec["scripts"]}
    scripts = []
    for entry in spec["scripts"]:
        entry = dict(entry)
        if "same_sources_as" in entry:
            entry["sources"] = by_id[entry.pop("same_sources_as")]["sources"]
        entry["sources"] = [expand_source(args.git_root, s) for s in entry["sources"]]
        main_paths = [f["path"] for f in entry["sources"][0]["files"]]
        if entry["script"] not in main_paths:
            sys.exit(f"make_manifest: {entry['id']}: script {entry['script']} is not among its files")
        scripts.append(entry)
    manifest = {
        "about": "Third-party Kernel Tuner scripts for cutune's tests and benchmarks. Not in this "
                 "repository: scripts/fetch_kt_corpus.py restores them from GitHub at the pinned "
                 "commits and checks every sha256. A script runs in <dest>/<id>/<cwd> with <args>.",
        "scripts": scripts,
    }
    Path(args.out).write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"make_manifest: {len(scripts)} scripts, "
          f"{sum(len(s['files']) for e in scripts for s in e['sources'])} files -> {args.out}")


if __name__ == "__main__":
    main()
