#!/usr/bin/env bash
# Fetches the test material (tests/material/manifest.txt: real kernels by others with their
# tuning scripts, Kernel Tuner's format files, recorded search spaces) from the public
# repositories it was copied from, at the pinned commits, and checks every file's sha256; then the
# Kernel Tuner script corpus (scripts/fetch_kt_corpus.py) into DIR/kt_corpus.
#
#   scripts/fetch_test_material.sh [DIR]
#
# DIR: $CUTUNE_TEST_MATERIAL, else ../shared beside the checkout (where the tests look by
# default, as CI lays it out). Needs git and access to github.com; only the listed files'
# contents are downloaded (a blob-less fetch of each commit, then those paths). A file already
# in DIR with the listed hash is kept. CUTUNE_MATERIAL_GIT_BASE replaces https://github.com
# (a mirror holding OWNER/NAME repositories). Exit 0: every listed file is in DIR and verified;
# 1: some are not (each named; the tests that need them stay skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest=$root/tests/material/manifest.txt
dir=${1:-${CUTUNE_TEST_MATERIAL:-$(dirname "$root")/shared}}
base=${CUTUNE_MATERIAL_GIT_BASE:-https://github.com}
command -v git >/dev/null || { echo "fetch_test_material: git is needed (Debian package git)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

# Rows still to fetch, grouped by "repository commit".
declare -A todo=()
total=0 kept=0
while read -r sha dest repo commit src; do
  case $sha in ''|'#'*) continue ;; esac
  total=$((total + 1))
  if [ -f "$dir/$dest" ] && [ "$(hash_of "$dir/$dest")" = "$sha" ]; then
    kept=$((kept + 1))
    continue
  fi
  todo["$repo $commit"]+="$sha $dest $src"$'\n'
done <"$manifest"
echo "fetch_test_material: $total files listed, $kept already in $dir with their hash"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
fetched=0
for key in "${!todo[@]}"; do
  read -r repo commit <<<"$key"
  clone=$work/${repo//\//+}-$commit
  rows=${todo[$key]}
  srcs=()
  while read -r sha dest src; do [ -n "$sha" ] && srcs+=("$src"); done <<<"$rows"
  echo "fetch_test_material: $repo @ $commit (${#srcs[@]} files)"
  git init -q "$clone"
  git -C "$clone" remote add origin "$base/$repo"
  # A full commit id is fetched alone; an abbreviated one is looked for in the branches.
  if [[ $commit =~ ^[0-9a-f]{40}$ ]]; then
    git -C "$clone" fetch -q --depth 1 --filter=blob:none origin "$commit" || true
  else
    git -C "$clone" fetch -q --filter=blob:none origin '+refs/heads/*:refs/remotes/origin/*' || true
  fi
  if ! full=$(git -C "$clone" rev-parse -q --verify "$commit^{commit}" 2>/dev/null) ||
     ! git -C "$clone" -c advice.detachedHead=false checkout -q "$full" -- "${srcs[@]}"; then
    echo "fetch_test_material: could not fetch $repo @ $commit from $base" >&2
    while read -r sha dest src; do [ -n "$sha" ] && failed+=("$dest (not fetched)"); done <<<"$rows"
    continue
  fi
  while read -r sha dest src; do
    [ -n "$sha" ] || continue
    got=$(hash_of "$clone/$src")
    if [ "$got" != "$sha" ]; then
      failed+=("$dest (sha256 $got, listed $sha)")
      continue
    fi
    mkdir -p "$(dirname "$dir/$dest")"
    cp "$clone/$src" "$dir/$dest.part"
    mv -f "$dir/$dest.part" "$dir/$dest"
    fetched=$((fetched + 1))
  done <<<"$rows"
done

# The corpus of third-party Kernel Tuner scripts (studies/kt_corpus/manifest.json, its own pins:
# GitHub tarballs of each commit), for the kt-corpus tests, into DIR/kt_corpus.
if ! python3 "$root/scripts/fetch_kt_corpus.py" --dest "$dir/kt_corpus"; then
  failed+=("kt_corpus (scripts/fetch_kt_corpus.py said which files above)")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fetch_test_material: ${#failed[@]} of $total files missing from $dir:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fetch_test_material: $total files verified in $dir ($fetched fetched)"
