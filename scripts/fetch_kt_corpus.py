#!/usr/bin/env python3
"""Restores the corpus of third-party Kernel Tuner scripts (studies/kt_corpus/manifest.json) into a
folder, one sub-folder per script holding the files it needs at their repository paths, and checks
the sha256 of every file. The third-party files are never part of this repository.

    scripts/fetch_kt_corpus.py [--dest DIR] [--git-root DIR] [--only ID ...] [--check]

--dest      default $CUTUNE_TEST_MATERIAL/kt_corpus; CUTUNE_TEST_MATERIAL defaults to ../shared
            (next to the checkout), where the other test material lives.
--git-root  read the pinned commits from local git directories, DIR/<owner>+<name>/repo[/.git],
            instead of GitHub (machines without a route to github.com).
--check     download nothing: say which files are missing or differ.

Each script runs in DEST/<id>/<cwd> with the manifest's args. Files already there with the right
hash are kept, so a second run is quick. Exit 0 when every file is in place with its hash, 1 if any
is missing or differs (each named on one line), 2 on bad arguments.
"""
import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = REPO_ROOT / "studies" / "kt_corpus" / "manifest.json"


def default_dest():
    material = os.environ.get("CUTUNE_TEST_MATERIAL") or str(REPO_ROOT.parent / "shared")
    return Path(material) / "kt_corpus"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def github_reader(repo, commit):
    """All files of repo at commit, from GitHub's tarball of that commit: path -> bytes."""
    url = f"https://codeload.github.com/{repo}/tar.gz/{commit}"
    with urllib.request.urlopen(url, timeout=120) as response:
        blob = response.read()
    files = {}
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for member in tar:
            if member.isfile():
                # The tarball's top folder is <name>-<commit>/.
                path = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[path] = tar.extractfile(member).read()
    return lambda path: files.get(path)


def git_reader(root, repo, commit):
    base = Path(root) / repo.replace("/", "+") / "repo"
    gdir = base / ".git" if (base / ".git").is_dir() else base

    def read(path):
        done = subprocess.run(["git", f"--git-dir={gdir}", "show", f"{commit}:{path}"], capture_output=True)
        return done.stdout if done.returncode == 0 else None
    return read


def wanted(scripts):
    """(repo, commit) -> [(target path, repo path, sha256)] for every file of every script."""
    plan = {}
    for entry in scripts:
        for source in entry["sources"]:
            prefix = source.get("dest", "")
            for f in source["files"]:
                target = Path(entry["id"]) / prefix / f["path"]
                plan.setdefault((source["repo"], source["commit"]), []).append((target, f["path"], f["sha256"]))
    return plan


def current_hash(path):
    return sha256(path.read_bytes()) if path.is_file() else None


def restore(plan, dest, git_root, check_only):
    problems = []
    for (repo, commit), files in sorted(plan.items()):
        todo = [f for f in files if current_hash(dest / f[0]) != f[2]]
        if not todo:
            continue
        if check_only:
            problems += [f"{dest / t}: missing or differs ({repo}@{commit[:10]}:{p})" for t, p, _ in todo]
            continue
        try:
            read = git_reader(git_root, repo, commit) if git_root else github_reader(repo, commit)
        except OSError as error:
            problems.append(f"{repo}@{commit[:10]}: could not download: {error}")
            continue
        for target, path, digest in todo:
            data = read(path)
            if data is None:
                problems.append(f"{repo}@{commit[:10]}:{path}: not in that commit")
            elif sha256(data) != digest:
                problems.append(f"{repo}@{commit[:10]}:{path}: sha256 {sha256(data)}, manifest says {digest}")
            else:
                (dest / target).parent.mkdir(parents=True, exist_ok=True)
                (dest / target).write_bytes(data)
        print(f"fetch_kt_corpus: {repo}@{commit[:10]}: {len(todo)} files", file=sys.stderr)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=None)
    parser.add_argument("--git-root", default=None)
    parser.add_argument("--only", nargs="+", default=None, metavar="ID")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args()
    scripts = json.loads(args.manifest.read_text())["scripts"]
    if args.only:
        unknown = sorted(set(args.only) - {e["id"] for e in scripts})
        if unknown:
            print(f"fetch_kt_corpus: --only: no script named {', '.join(unknown)} in {args.manifest}", file=sys.stderr)
            return 2
        scripts = [e for e in scripts if e["id"] in args.only]
    dest = (args.dest or default_dest()).resolve()
    problems = restore(wanted(scripts), dest, args.git_root, args.check)
    for entry in scripts:  # folders the scripts write into, which git cannot hold empty
        for folder in entry.get("make_dirs", []):
            if args.check and not (dest / entry["id"] / folder).is_dir():
                problems.append(f"{dest / entry['id'] / folder}: folder missing")
            elif not args.check:
                (dest / entry["id"] / folder).mkdir(parents=True, exist_ok=True)
    for line in problems:
        print(f"fetch_kt_corpus: {line}", file=sys.stderr)
    if problems:
        return 1
    print(f"fetch_kt_corpus: {len(scripts)} scripts in place under {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
