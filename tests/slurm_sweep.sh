#!/usr/bin/env bash
# A sweep as a Slurm job array on a real one-node Slurm started here (recipe: ../shared/notes/slurm-one-node.md):
# `podsim sweep --slurm` submits one task per shard, `podsim merge` joins them, and the merged results.csv
# must equal a single-machine run of the same study; `podsim plan --slurm` likewise (its merged ranking must be
# the local search's). Skipped (exit 77) where Slurm cannot be installed.
set -u
PODSIM=$(readlink -f "${PODSIM:-build/podsim}")
STUDY=tests/data/study-small.yaml
if [ "$(id -u)" != 0 ]; then echo "slurm_sweep: needs root to start slurmctld/slurmd; skipped"; exit 77; fi
if ! scripts/setup.sh slurmctld slurmd slurm-client munge > /dev/null 2>&1; then
  echo "slurm_sweep: cannot install Slurm here; skipped"; exit 77
fi
tmp=$(mktemp -d /tmp/podsim-slurm.XXXXXX)
chmod 755 "$tmp"
export SLURM_CONF=$tmp/slurm.conf
cleanup() {
  for f in "$tmp/slurmd.pid" "$tmp/slurmctld.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 0.5
  rm -rf "$tmp"
}
trap cleanup EXIT

# munge: key and daemon.
install -d -o munge -g munge -m 755 /run/munge
if [ ! -f /etc/munge/munge.key ]; then mungekey --create > /dev/null 2>&1 || /usr/sbin/mungekey -c; chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key; fi
if ! pgrep -x munged > /dev/null; then runuser -u munge -- /usr/sbin/munged || { echo "FAIL munged did not start"; exit 1; }; fi

mem_mb=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024 ))
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/out"
cat > "$SLURM_CONF" <<CONF
ClusterName=podsimtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
NodeName=localhost CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
/usr/sbin/slurmctld -f "$SLURM_CONF" || { echo "FAIL slurmctld did not start"; exit 1; }
/usr/sbin/slurmd -f "$SLURM_CONF" || { echo "FAIL slurmd did not start"; cat "$tmp/slurmd.log"; exit 1; }
for _ in $(seq 1 60); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %t | grep -q idle || { echo "FAIL the Slurm node never became idle"; tail "$tmp/slurmctld.log"; exit 1; }

out=$("$PODSIM" sweep $STUDY --out "$tmp/out/array" --slurm --slurm-shards 3 2>&1)
echo "$out"
job=$(grep -o 'job array [0-9]*' <<<"$out" | awk '{print $3}')
[ -n "$job" ] || { echo "FAIL podsim sweep --slurm did not submit"; exit 1; }
for _ in $(seq 1 240); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || { echo "FAIL the job array did not finish in 2 minutes"; exit 1; }
if scontrol -o show job "$job" 2>/dev/null | grep -v 'ExitCode=0:0' | grep -q ExitCode; then
  echo "FAIL an array task failed:"; scontrol -o show job "$job"; cat "$tmp"/out/array/slurm-*.out; exit 1
fi
"$PODSIM" merge "$tmp/out/array" || { echo "FAIL podsim merge"; exit 1; }
"$PODSIM" sweep $STUDY --out "$tmp/out/local" --quiet
if cmp -s "$tmp/out/array/results.csv" "$tmp/out/local/results.csv"; then
  echo "ok   Slurm job array + merge equals a single-machine sweep"
else
  echo "FAIL merged Slurm results differ from the single-machine run"; diff "$tmp/out/array/results.csv" "$tmp/out/local/results.csv" | head; exit 1
fi

# podsim plan on the same Slurm: three shards, merged; the ranked rows must be those of one local search.
plan_args=(-t topologies/dgx-h100-superpod.yaml -w workloads/llama3-8b.yaml --set topology.nodes=2
           --set 'workload.parallel.tp=[1, 2, 4]' --set 'workload.parallel.pp=[1, 2, 4]'
           --set 'workload.training.micro_batch=[1, 2]' --set workload.training.global_batch=32
           --set workload.model.seq_len=4096 --as-written --top 3)
out=$("$PODSIM" plan "${plan_args[@]}" --out "$tmp/out/plan-array" --slurm --slurm-shards 3 2>&1)
echo "$out"
job=$(grep -o 'job array [0-9]*' <<<"$out" | awk '{print $3}')
[ -n "$job" ] || { echo "FAIL podsim plan --slurm did not submit"; exit 1; }
for _ in $(seq 1 240); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || { echo "FAIL the plan job array did not finish in 2 minutes"; exit 1; }
"$PODSIM" merge "$tmp/out/plan-array" > /dev/null || { echo "FAIL podsim merge of plan shards"; cat "$tmp"/out/plan-array/slurm-*.out; exit 1; }
"$PODSIM" plan "${plan_args[@]}" --out "$tmp/out/plan-local" --quiet > /dev/null
ranked() { awk -F, 'NR > 1 && $1 != "" && $1 <= 3 { print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$1"; }
if [ -n "$(ranked "$tmp/out/plan-local/plan.csv")" ] &&
   [ "$(ranked "$tmp/out/plan-array/plan.csv")" = "$(ranked "$tmp/out/plan-local/plan.csv")" ]; then
  echo "ok   Slurm plan shards + merge rank what one local search ranks"
else
  echo "FAIL merged plan differs from the local search"; ranked "$tmp/out/plan-array/plan.csv"; ranked "$tmp/out/plan-local/plan.csv"; exit 1
fi
