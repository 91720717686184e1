#!/bin/bash
# Grade a class on a Slurm cluster: a job array over shards, then a merge job.
#
#   deploy/slurm/submit.sh SUBMISSIONS OUT_DIR [SHARDS]
#
# Prints "<array job id> <merge job id>". The merged gradebook lands in OUT_DIR/merged.
# Environment: GRES (default gpu:1, per task; empty: no GPU request), GRADER_GPU (default
# require), PARTITION, and grade-array.sbatch's GRADER_IMAGE / GRADER_VENV / GRADER_ROOT.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 SUBMISSIONS OUT_DIR [SHARDS]" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export SUBMISSIONS="$(realpath "$1")" OUT_DIR="$(realpath -m "$2")" GRADER_ROOT="${GRADER_ROOT:-$root}"
shards="${3:-4}"
gres="${GRES-gpu:1}"
mkdir -p "$OUT_DIR"
common=(--parsable --chdir "$OUT_DIR" ${PARTITION:+--partition "$PARTITION"})
array=$(sbatch "${common[@]}" --array "0-$((shards - 1))" ${gres:+--gres "$gres"} "$here/grade-array.sbatch")
array="${array%%;*}"
# afterany: a shard where some students crashed exits 1, but its results still merge; a shard
# that never ran has no output, and the merge says so.
merge=$(GRADER_STEP=merge GRADER_SHARDS="$shards" sbatch "${common[@]}" --dependency "afterany:$array" \
        --job-name grade-merge --output merge-%j.out "$here/grade-array.sbatch")
echo "$array ${merge%%;*}"
