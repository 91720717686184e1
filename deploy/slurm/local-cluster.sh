#!/bin/bash
# A single-node Slurm cluster on this machine, and the whole grading flow on it, for real:
# a job array over shards (submit.sh), the merge job, and a check that the merged gradebook is
# byte for byte the one an unsharded `batch` writes.
#
#   deploy/slurm/local-cluster.sh [SUBMISSIONS]     # default: a small generated class
#
# As root on Debian bookworm (installs slurmctld slurmd slurm-client munge if missing).
# Environment: SHARDS (3), GRES (empty here: no GPU gres on this node; gpu:1 on a GPU node),
# GRADER_GPU (skip here), ONLY (the problems to grade, default intensity: quick),
# STATE (/tmp/grader-slurm: config, logs, spool), KEEP=1 leaves the cluster running.
# Exit 0 only if the merged gradebook equals the unsharded one.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
state="${STATE:-/tmp/grader-slurm}"
shards="${SHARDS:-3}"
only="${ONLY:-intensity}"
export GRES="${GRES-}" GRADER_GPU="${GRADER_GPU:-skip}" SLURM_CONF="$state/slurm.conf"
log() { echo "[local-cluster] $*" >&2; }

# -- install ---------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    log "installing slurmctld slurmd slurm-client munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

# -- bring it up -----------------------------------------------------------------------------
stop() {
    for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid"; do
        [[ -f "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    rm -f "$state"/*.pid
}
[[ "${KEEP:-0}" == 1 ]] || trap stop EXIT
stop
rm -rf "$state/spool"
mkdir -p "$state/spool/ctld" "$state/spool/d"

# munge: its own uid, a key, and a socket folder other users can reach (mode 755)
[[ -s /etc/munge/munge.key ]] || { mkdir -p /etc/munge; dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
install -d -m 755 -o munge -g munge /run/munge
install -d -m 700 -o munge -g munge /var/lib/munge /var/log/munge
if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
fi
munge -n | unmunge >/dev/null

host="$(hostname -s)"
node="$(slurmd -C | head -1)"              # NodeName=... CPUs=... RealMemory=... as this machine is
cat > "$SLURM_CONF" <<CONF
ClusterName=grader-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
$node
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
    sinfo -h -o %T 2>/dev/null | grep -q idle && break
    sleep 0.2
done
sinfo -h -o %T | grep -q idle || { log "the node did not come up; see $state/*.log"; exit 1; }
log "up: $(sinfo -h -o '%P %D %T %c CPUs')"

# -- the class and the flow --------------------------------------------------------------------
work="$state/run"
rm -rf "$work" && mkdir -p "$work"
if [[ $# -ge 1 ]]; then
    class="$(realpath "$1")"
else
    class="$work/class"
    mkdir -p "$class"
    for s in ada grace alan emmy kurt john; do cp -r "$root/reference" "$class/$s"; done
    rm -rf "$class"/*/__pycache__
    printf 'def matmul_intensity(b, d, f, n):\n    return 0.0\n' > "$class/alan/intensity.py"  # a wrong answer
    rm -rf "$class/emmy" && mkdir "$class/emmy"                                          # an empty upload
fi

cd "$root"
export GRADER_ONLY="$only"
read -r array merge < <(deploy/slurm/submit.sh "$class" "$work/out" "$shards")
log "submitted array job $array ($shards shards) and merge job $merge"
# sbatch --wait lags; poll the queue (no sacct without slurmdbd)
while squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do sleep 0.5; done
log "queue empty"
cat "$work/out"/merge-*.out >&2 || true

python -m grader batch "$class" --out "$work/unsharded" --gpu "$GRADER_GPU" --only "$only" 2>/dev/null || true
if cmp "$work/out/merged/gradebook.csv" "$work/unsharded/gradebook.csv"; then
    log "merged gradebook == unsharded gradebook (byte for byte):"
    cat "$work/out/merged/gradebook.csv"
    for i in $(seq 0 $((shards - 1))); do
        echo "shard $i: $(ls "$work/out/shard-$i/students" 2>/dev/null | tr '\n' ' ')"
    done
else
    log "MISMATCH between $work/out/merged/gradebook.csv and $work/unsharded/gradebook.csv"
    exit 1
fi
