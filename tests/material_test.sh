#!/bin/sh
# material_test.sh DEFAULT_DIR REQUIRED... -- COMMAND [ARGS...]
# Runs a test that needs the test material (tests/material/manifest.txt). The folder is
# $CUTUNE_TEST_MATERIAL, else DEFAULT_DIR (CMake's CUTUNE_TEST_MATERIAL). When a REQUIRED path
# (relative to it) is not there, the test is skipped: one line naming it, exit 77 (CTest's
# SKIP_RETURN_CODE). Otherwise COMMAND runs with $CUTUNE_TEST_MATERIAL set to the folder and
# each argument starting with @MATERIAL@ starting with the folder instead.
set -eu
dir=${CUTUNE_TEST_MATERIAL:-$1}
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  if [ ! -e "$dir/$1" ]; then
    echo "SKIPPED: no test material at $dir/$1 (set CUTUNE_TEST_MATERIAL, or fetch it: scripts/fetch_test_material.sh)"
    exit 77
  fi
  shift
done
[ $# -gt 1 ] || { echo "material_test.sh: no command after --" >&2; exit 2; }
shift
export CUTUNE_TEST_MATERIAL="$dir"
n=$#
for a in "$@"; do
  case $a in @MATERIAL@*) a="$dir${a#@MATERIAL@}" ;; esac
  set -- "$@" "$a"
done
shift "$n"
exec "$@"
