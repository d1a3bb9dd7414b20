#!/usr/bin/env bash
# Studies the headline of Zhao et al., MLSys 2020 ("a 4-node hierarchical GPU parameter server can train a
# model more than 2X faster than a 150-node in-memory distributed parameter server in an MPI cluster";
# validation/baidu-ps-mlsys2020.md) with podsim: the same workload file (workloads/ctr-sparse-ps.yaml) on
# the GPU preset (topologies/gpu-ps-4node.yaml) and the CPU preset (topologies/cpu-mpi-cluster.yaml), and
# variants of the parameters the comparison depends on: GPU servers 1..8, CPU servers 50..300, the Zipf
# exponent of key popularity, the DRAM cache, the NIC, the MLP precision.
#
# Usage: scripts/study-baidu-ps.sh [OUT_DIR]   (default out/baidu-ps; needs build/podsim: scripts/build.sh)
# Writes OUT_DIR/<case>/{summary,breakdown}.csv, result.json and OUT_DIR/study.csv, and prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/baidu-ps}
podsim=${PODSIM:-build/podsim}
[ -x "$podsim" ] || { echo "study-baidu-ps: $podsim not found; run scripts/build.sh first" >&2; exit 2; }
GPU=topologies/gpu-ps-4node.yaml
CPU=topologies/cpu-mpi-cluster.yaml
W=workloads/ctr-sparse-ps.yaml

# case|topology|--set flags (space separated)
cases=(
  "gpu-4|$GPU|"
  "cpu-150|$CPU|"
  "gpu-1|$GPU|topology.nodes=1"
  "gpu-2|$GPU|topology.nodes=2"
  "gpu-8|$GPU|topology.nodes=8"
  "cpu-50|$CPU|topology.nodes=50"
  "cpu-75|$CPU|topology.nodes=75"
  "cpu-100|$CPU|topology.nodes=100"
  "cpu-200|$CPU|topology.nodes=200"
  "cpu-300|$CPU|topology.nodes=300"
  "gpu-4-zipf-1.0|$GPU|workload.model.zipf_exponent=1.0"
  "cpu-150-zipf-1.0|$CPU|workload.model.zipf_exponent=1.0"
  "gpu-4-zipf-1.2|$GPU|workload.model.zipf_exponent=1.2"
  "cpu-150-zipf-1.2|$CPU|workload.model.zipf_exponent=1.2"
  "gpu-4-zipf-1.3|$GPU|workload.model.zipf_exponent=1.3"
  "gpu-4-zipf-1.3-fp16|$GPU|workload.model.zipf_exponent=1.3 workload.training.precision=fp16"
  "cpu-150-zipf-1.3|$CPU|workload.model.zipf_exponent=1.3"
  "gpu-4-cache-128G|$GPU|workload.ps.dram_cache_GiB=128"
  "gpu-4-cache-256G|$GPU|workload.ps.dram_cache_GiB=256"
  "gpu-4-cache-640G|$GPU|workload.ps.dram_cache_GiB=640"
  "gpu-4-no-pipeline|$GPU|workload.ps.pipeline=false"
  "gpu-4-nic-200G|$GPU|topology.node.nic_bandwidth_Gbps=200"
  "gpu-4-fp16-mlp|$GPU|workload.training.precision=fp16"
  "cpu-150-10GbE|$CPU|topology.node.nic_bandwidth_Gbps=10"
  "cpu-150-3to1-racks|$CPU|topology.network.oversubscription=3"
)

rm -rf "$out.partial"
mkdir -p "$out.partial"
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r name topo sets <<<"$c"
  i=$((i + 1))
  echo "[$i/${#cases[@]}] $name" >&2
  args=()
  for s in $sets; do args+=(--set "$s"); done
  "$podsim" run --topology "$topo" --workload "$W" "${args[@]}" --out "$out.partial/$name" --quiet
done
{
  printf 'case,'; head -1 "$out.partial/gpu-4/summary.csv"
  for c in "${cases[@]}"; do
    name=${c%%|*}
    printf '%s,' "$name"; tail -n +2 "$out.partial/$name/summary.csv"
  done
} > "$out.partial/study.csv"
rm -rf "$out"
mv "$out.partial" "$out"

echo
echo "Hierarchical GPU parameter server vs in-memory CPU parameter server ($out/study.csv):"
python3 - "$out" <<'PY' || column -s, -t < "$out/study.csv"
import csv, json, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "study.csv"))))
base = {r["case"]: r for r in rows}
def rate(r):
    try: return float(r["samples_per_s"])
    except (ValueError, KeyError): return 0.0
ref = rate(base["cpu-150"])
# The CPU baseline at the same key popularity: cpu-150 (the workload's exponent) or cpu-150-zipf-X.
same = {r["zipf_exponent"]: rate(r) for r in rows if r["case"] == "cpu-150" or r["case"].startswith("cpu-150-zipf-")}
EXPOSED = {"compute_s": "compute", "stream_exposed_s": "pull/push", "storage_exposed_s": "host/SSD",
           "dp_exposed_s": "all-reduce", "bubble_s": "idle"}
def exposed(r):
    if r["status"] != "ok": return "-"
    k = max(EXPOSED, key=lambda c: float(r[c] or 0))
    return f"{EXPOSED[k]} {100 * float(r[k]) / float(r['step_time_s']):.0f}%"
def bottleneck(r):
    if r["status"] != "ok": return r["status"]
    m = json.load(open(os.path.join(out, r["case"], "result.json")))["metrics"]
    busy = {k[:-2]: v for k, v in m.items() if k.endswith("_s")}
    k = max(busy, key=busy.get)
    step = float(r["step_time_s"])
    return f"{k} {100 * busy[k] / step:.0f}%"
head = ["case", "servers", "devices", "zipf", "cache GiB", "batch (examples)", "examples/s", "vs cpu-150",
        "vs cpu-150 same zipf", "most time (exposed)", "busiest resource (busy % of step)"]
table = [head]
for r in rows:
    servers = str(int(r["devices"]) // 8) if "V100" in r["device"] else r["devices"]
    x = rate(r)
    table.append([r["case"], servers, r["devices"], r["zipf_exponent"], r["dram_cache_GiB"] or "-",
                  f'{float(r["examples_per_batch"]):.3g}' if r["examples_per_batch"] else "-",
                  f"{x:.3g}" if x else "-", f"{x / ref:.2f}x" if x and ref else "-",
                  f"{x / same[r['zipf_exponent']]:.2f}x" if x and same.get(r["zipf_exponent"]) else "-",
                  exposed(r), bottleneck(r)])
widths = [max(len(row[i]) for row in table) for i in range(len(head))]
for row in table:
    print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
PY
