#!/usr/bin/env bash
# Issue 11 ("every answer physically possible"), workload layer: the adversarial driver's repros through the
# real binary. Every run must report MFU <= HFU < 100% and devices within the topology; every bad input
# must exit 2 naming file/flag, field and what is valid.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The summary's column COL of a run's output directory.
column() {  # column DIR COL
  python3 -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1] + "/summary.csv")))[sys.argv[2]])' "$1" "$2"
}
physical() {  # physical DIR: 0 <= mfu <= hfu < 1
  python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1] + "/summary.csv")));
m,h=float(r["mfu"]),float(r["hfu"]); sys.exit(0 if 0<=m<=h<1 else 1)' "$1"
}

# 1. virtual_stages: auto with a schedule that has no virtual stages (was MFU 198%, 824 TFLOP/s per A100).
$PODSIM run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.schedule=1f1b \
  --set topology.nodes=16 --out "$tmp/1f1b" > "$tmp/1f1b.txt" 2>&1
check "1f1b with virtual_stages auto runs" test $? -eq 0
check "1f1b: virtual_stages 1" test "$(column "$tmp/1f1b" virtual_stages)" = 1
check "1f1b: MFU <= HFU < 100%" physical "$tmp/1f1b"
expect_error "virtual_stages 4 with 1f1b" "parallel.virtual_stages.*only the interleaved schedule.*virtual_stages: 1 or auto" \
  run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.schedule=gpipe \
  --set workload.parallel.virtual_stages=4
expect_error "pp 1 with the file's interleaved schedule" \
  "parallel.schedule: the interleaved schedule needs pp > 1 .*--set workload.parallel.pp=1.*schedule=1f1b" \
  run -t topologies/dgx-h100-superpod.yaml -w workloads/llama3-70b.yaml --set workload.parallel.pp=1

# 2. GShard with a capacity that drops most tokens (was MFU 183.8%, HFU 34.9%).
$PODSIM run -t topologies/tpu-v3-pod.yaml -w workloads/gshard-moe.yaml --set "topology.dims=[8,8]" \
  --set workload.model.experts=128 --set workload.training.batch_tokens=262144 \
  --set workload.model.capacity_factor=0.001 --out "$tmp/drop" > "$tmp/drop.txt" 2>&1
check "capacity 0.001 runs" test $? -eq 0
check "capacity 0.001: MFU <= HFU < 100%" physical "$tmp/drop"

# 3. ZeRO-3 for GPT-3 175B on 384 A100s, tp 1, pp 1 (was 651 GiB of buffers): fits.
$PODSIM run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set topology.nodes=48 \
  --set workload.parallel.tp=1 --set workload.parallel.pp=1 --set workload.parallel.schedule=1f1b \
  --set workload.parallel.zero=3 --out "$tmp/zero3" > "$tmp/zero3.txt" 2>&1
check "zero 3 on 384 A100s fits" test "$(column "$tmp/zero3" status)" = ok
check "zero 3: under 80 GiB" python3 -c "import sys; sys.exit(0 if float('$(column "$tmp/zero3" memory_per_device_GiB)') < 80 else 1)"

# 4. Cerebras auto: the faster of both modes (was layer-pipelined, up to 1.84x slower).
for mode in auto layer_pipelined weight_streaming; do
  $PODSIM run -t topologies/cerebras-cs2-cluster.yaml -w workloads/gpt2-small.yaml --set workload.training.global_batch=128 \
    --set workload.training.execution_mode=$mode --out "$tmp/cs-$mode" > /dev/null 2>&1
done
check "cerebras auto is the fastest mode" python3 -c "
import sys
a, l, w = float('$(column "$tmp/cs-auto" step_time_s)'), float('$(column "$tmp/cs-layer_pipelined" step_time_s)'), float('$(column "$tmp/cs-weight_streaming" step_time_s)')
sys.exit(0 if a <= min(l, w) * (1 + 1e-9) else 1)"

# 5. GShard on a Cerebras cluster: 16 compute devices, not 22 (MemoryX and SwarmX endpoints).
$PODSIM run -t topologies/cerebras-cs2-cluster.yaml -w workloads/gshard-moe.yaml --set workload.model.experts=32 \
  --out "$tmp/cs-moe" > "$tmp/cs-moe.txt" 2>&1
check "gshard on CS-2: 16 of 16 devices" grep -q "16 of 16 x WSE-2" "$tmp/cs-moe.txt"

# 6. Input that overflowed.
expect_error "tiny gradient buckets" "parallel.dp_bucket_MB.*from 0.001 to" \
  run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.dp_bucket_MB=1e-6
expect_error "embedding dimension 1e9" "model.embedding.dimension.*at most 65536" \
  run -t topologies/gpu-ps-4node.yaml -w workloads/ctr-sparse-ps.yaml --set workload.model.embedding.dimension=1e9
expect_error "capacity factor 1e300" "model.capacity_factor.*out of range" \
  run -t topologies/tpu-v3-pod.yaml -w workloads/gshard-moe.yaml --set workload.model.capacity_factor=1e300
expect_error "capacity factor 1001" "model.capacity_factor.*at most 1000" \
  run -t topologies/tpu-v3-pod.yaml -w workloads/gshard-moe.yaml --set workload.model.capacity_factor=1001
expect_error "fp8 on an A100" "training.precision.*A100.*valid on this device: .*bf16" \
  run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.training.precision=fp8

finish workload_trust
