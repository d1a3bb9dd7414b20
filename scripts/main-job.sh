#!/usr/bin/env bash
# One command from a fresh Debian machine to a what-if study: installs what is missing, builds podsim, and
# asks "what step time, TFLOP/s per GPU and MFU will GPT-3 175B get on a DGX A100 SuperPOD, and what if we
# change the pipeline depth, the machine size, the recomputation strategy or the GPU generation?".
# Results: reports/latest/<case>/{summary,breakdown}.csv, result.json, and reports/latest/study.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh

out=reports/latest
rm -rf "$out.partial"
mkdir -p "$out.partial"
A100=topologies/dgx-a100-superpod.yaml
H100=topologies/dgx-h100-superpod.yaml
GPT3=workloads/gpt3-175b.yaml

cases=(
  "baseline|$A100|"
  "pp16|$A100|--set workload.parallel.pp=16"
  "64-nodes|$A100|--set topology.nodes=64 --set workload.training.global_batch=768"
  "256-nodes|$A100|--set topology.nodes=256 --set workload.training.global_batch=3072"
  "selective-recompute+sp|$A100|--set workload.training.recompute=selective --set workload.parallel.sequence_parallel=true"
  "micro-batch-auto|$A100|--set workload.training.micro_batch=auto"
  "h100-superpod|$H100|--set topology.nodes=128 --set workload.training.precision=bf16"
  "oversubscribed-2to1|$A100|--set topology.fabric.oversubscription=2"
)
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r name topo sets <<<"$c"
  i=$((i + 1))
  echo "[$i/${#cases[@]}] $name" >&2
  # shellcheck disable=SC2086
  build/podsim run --topology "$topo" --workload "$GPT3" $sets --out "$out.partial/$name" --quiet
done

# One table of all cases: the case name, then summary.csv's columns.
{
  printf 'case,'; head -1 "$out.partial/baseline/summary.csv"
  for c in "${cases[@]}"; do
    name=${c%%|*}
    printf '%s,' "$name"; tail -n +2 "$out.partial/$name/summary.csv"
  done
} > "$out.partial/study.csv"
rm -rf "$out"
mv "$out.partial" "$out"

echo
echo "GPT-3 175B what-if study (reports/latest/study.csv):"
python3 - "$out/study.csv" <<'PY' 2>/dev/null || column -s, -t < "$out/study.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = [("case", "case", "{}"), ("devices", "GPUs", "{}"), ("device", "device", "{}"), ("tp", "tp", "{}"), ("pp", "pp", "{}"),
        ("dp", "dp", "{}"), ("micro_batch", "mb", "{}"), ("virtual_stages", "v", "{}"), ("step_time_s", "step (s)", "{:.2f}"),
        ("tflops_per_device", "TFLOP/s/GPU", "{:.1f}"), ("mfu", "MFU", "{:.3f}"), ("memory_per_device_GiB", "mem (GiB)", "{:.1f}"),
        ("tokens_per_s", "tokens/s", "{:.0f}"), ("bubble_s", "bubble (s)", "{:.2f}"), ("tp_exposed_s", "TP comm (s)", "{:.2f}")]
def fmt(f, v):
    try: return f.format(float(v)) if f != "{}" else v
    except ValueError: return v
table = [[h for _, h, _ in cols]] + [[fmt(f, r[k]) for k, _, f in cols] for r in rows]
widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
for row in table:
    print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
PY
