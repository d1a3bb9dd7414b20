#!/usr/bin/env bash
# Scaling study of GPT-3 XL (1.3B) on 1 to 16 CS-2 systems with weight streaming: efficiency per system,
# and where SwarmX or MemoryX bandwidth breaks Cerebras' near-linear scaling. Until a generic sweep
# command exists this is a loop over `podsim run`. Results: out/cerebras-scaling/<series>-<N>/ and
# out/cerebras-scaling/scaling.csv; a table on stdout.
#   scripts/cerebras-scaling.sh [--build]   (--build: configure and build first)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--build" ]]; then scripts/build.sh; fi
PODSIM=${PODSIM:-build/podsim}
TOPO=topologies/cerebras-cs2-cluster.yaml
XL=workloads/gpt3-xl.yaml
out=out/cerebras-scaling
rm -rf "$out"
mkdir -p "$out"

# series | --set flags; {N} is the number of systems.
series=(
  "strong-512|--set workload.training.global_batch=512"
  "weak-32-per-system|--set workload.training.global_batch={32N}"
  "strong-128|--set workload.training.global_batch=128"
  "strong-128-swarmx-300G|--set workload.training.global_batch=128 --set topology.swarmx.link_bandwidth_Gbps=300"
  "strong-512-memoryx-200G|--set workload.training.global_batch=512 --set topology.memoryx.bandwidth_Gbps=200"
)
for s in "${series[@]}"; do
  IFS='|' read -r name sets <<<"$s"
  for n in 1 2 4 8 16; do
    flags=${sets//\{32N\}/$((32 * n))}
    # shellcheck disable=SC2086
    "$PODSIM" run --topology "$TOPO" --workload "$XL" --set topology.systems=$n $flags \
      --set workload.training.execution_mode=weight_streaming --out "$out/$name-$n" --quiet
  done
done

python3 - "$out" "${series[@]}" <<'PY'
import csv, json, sys
out, series = sys.argv[1], [s.split("|")[0] for s in sys.argv[2:]]
rows = []
for name in series:
    base = None
    for n in (1, 2, 4, 8, 16):
        d = f"{out}/{name}-{n}"
        s = next(csv.DictReader(open(f"{d}/summary.csv")))
        m = json.load(open(f"{d}/result.json"))["metrics"]
        tps = float(s["tokens_per_s"])
        base = base or tps
        parts = {"compute": m["wafer_compute_s"], "weight streaming": m["weight_stream_s"],
                 "gradient reduction": m["grad_reduce_s"]}
        rows.append({"series": name, "systems": n, "global_batch": s["global_batch"], "micro_batch": s["micro_batch"],
                     "micro_batches": s["microbatches"], "step_s": float(s["step_time_s"]), "tokens_per_s": tps,
                     "speedup": tps / base, "efficiency_per_system": tps / (n * base), "mfu": float(s["mfu"]),
                     "bound_by": max(parts, key=parts.get)})
with open(f"{out}/scaling.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
print(f"GPT-3 XL weight streaming on CS-2 systems ({out}/scaling.csv)")
print(f"{'series':<26}{'N':>3}{'batch':>6}{'mb':>4}{'mbs':>5}{'step (s)':>10}{'tokens/s':>11}{'speedup':>8}{'eff/sys':>8}{'MFU':>7}  bound by")
for r in rows:
    print(f"{r['series']:<26}{r['systems']:>3}{r['global_batch']:>6}{r['micro_batch']:>4}{r['micro_batches']:>5}"
          f"{r['step_s']:>10.3f}{r['tokens_per_s']:>11.4g}{r['speedup']:>8.2f}{r['efficiency_per_system']:>8.3f}"
          f"{r['mfu']:>7.3f}  {r['bound_by']}")
PY
