#!/usr/bin/env bash
# The TPU pod and GShard MoE commands through the real binary (docs/tpu-moe.md): runs at 128, 512 and 2048
# cores, topo describe and collective on a torus, the GPU variant, and bad input exiting with status 2.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for run in "8,8 128" "16,16 512" "32,32 2048"; do
  set -- $run
  $PODSIM run -t topologies/tpu-v3-pod.yaml -w workloads/gshard-moe.yaml --set "topology.dims=[$1]" \
    --set workload.model.experts=$2 --set workload.model.layers=12 --set workload.training.batch_tokens=$(($2 * 2048)) \
    --out "$tmp/run$2" > "$tmp/run$2.txt" 2>&1
  check "run $2 cores exits 0" test $? -eq 0
  check "run $2 cores: steps/s" grep -q "steps/s" "$tmp/run$2.txt"
  check "run $2 cores: all-to-all share" grep -q "exposed expert all-to-all .*%" "$tmp/run$2.txt"
  check "run $2 cores: $2 devices" grep -q "$2 of $2 x TPU-v3-core" "$tmp/run$2.txt"
done
header=$(head -1 "$tmp/run2048/summary.csv")
for col in ep_exposed_s experts top_k capacity_factor expert_capacity samples_per_s; do
  check "summary.csv has $col" grep -q "\b$col\b" <<<"$header"
done

$PODSIM topo describe topologies/tpu-v3-pod.yaml > "$tmp/describe.txt" 2>&1
check "v3 pod bisection 6.40 TB/s" grep -q "bisection *6.40 TB/s" "$tmp/describe.txt"
check "v3 pod diameter" grep -q "diameter *32 hops" "$tmp/describe.txt"
$PODSIM collective -t topologies/tpu-v3-pod.yaml --op all_reduce --devices 2048 --bytes 256MB > "$tmp/coll.txt" 2>&1
check "collective on the torus, bound by ici" grep -q " ici  *torus  *Simple$" "$tmp/coll.txt"
$PODSIM run -t topologies/dgx-a100-superpod.yaml -w workloads/gshard-moe.yaml --set topology.nodes=4 \
  --set workload.model.experts=64 --set workload.training.batch_tokens=131072 > "$tmp/gpu.txt" 2>&1
check "MoE on a GPU cluster" grep -q "exposed expert all-to-all" "$tmp/gpu.txt"

W=workloads/gshard-moe.yaml
expect_error "dims beyond the pod" "topology.dims=\[64,32\] (field dims).*at most 32" run -t topologies/tpu-v3-pod.yaml -w $W --set "topology.dims=[64,32]"
expect_error "v4 dims not multiples of 4" "multiple of 4" topo describe topologies/tpu-v4-pod.yaml --set "topology.dims=[4,6,8]"
expect_error "experts not divisible" "model.experts.*cannot be sharded over 2048 devices" run -t topologies/tpu-v3-pod.yaml -w $W --set workload.model.experts=1000
expect_error "capacity <= 0" "model.capacity_factor.*more than 0" run -t topologies/tpu-v3-pod.yaml -w $W --set workload.model.capacity_factor=0
expect_error "twisted shape" "k x k x 2k" topo describe topologies/tpu-v4-pod.yaml --set "topology.dims=[8,8,8]" --set topology.twisted=true

finish cli_tpu
