#!/usr/bin/env bash
# The main job: set up, build, and tune the reduction template on GPU 0. On a machine with
# no GPU it says so and shows what it can do there: the space, and an NVRTC compile of it.
# Extra arguments go to `cutune tune` (e.g. --problem n=2**26); CUTUNE_DB picks the DB.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cutune=build/tuner/cli/cutune
$cutune devices
if $cutune devices --json | grep -q '"uuid"'; then
  $cutune tune reduction --device 0 "$@"
  $cutune query --kernel reduction
else
  echo
  echo "No GPU here, so no tuning. What this machine can do for the same job:"
  $cutune space reduction --show 5
  $cutune compile reduction --all --quiet
fi
