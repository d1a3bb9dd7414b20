#!/usr/bin/env bash
# `podsim calibrate` through the real binary: fitting the example CSVs and importing the hand-written
# nccl-tests logs write profiles that podsim then runs with; bad input exits 2 naming file, line and fix.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
data=tests/data

$PODSIM calibrate fit $data/calib/example-gemm.csv $data/calib/example-memory.csv --device H200-example \
  --topology topologies/dgx-h200-superpod.yaml -o "$tmp/h200.yaml" > "$tmp/fit.txt" 2>&1
check "fit exits 0" test $? -eq 0
check "fit reports error per shape class" grep -q "gemm transformer" "$tmp/fit.txt"
check "fit reports held-out error" grep -q "held out" "$tmp/fit.txt"
check "fit recovers the example's main-loop efficiency (0.82)" \
  awk '/gemm.mainloop_efficiency/ { exit !($2 > 0.81 && $2 < 0.83) }' "$tmp/fit.txt"
check "fitted profile marks synthetic input" grep -q "NOT A MEASUREMENT" "$tmp/h200.yaml"
$PODSIM topo describe topologies/dgx-h200-superpod.yaml --set "topology.device.profile=$tmp/h200.yaml" > "$tmp/describe.txt" 2>&1
check "topology loads the fitted profile" grep -q "compute profile.*$tmp/h200.yaml" "$tmp/describe.txt"
$PODSIM run -t topologies/dgx-h200-superpod.yaml -w workloads/gpt3-175b.yaml --set topology.nodes=8 \
  --set workload.parallel.dp=1 --set workload.training.global_batch=64 \
  --set "topology.device.profile=$tmp/h200.yaml" > "$tmp/run.txt" 2>&1
check "run with the fitted profile" grep -q "TFLOP/s per device" "$tmp/run.txt"

$PODSIM calibrate nccl-tests $data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log $data/nccl-tests/all_gather_perf.dgx-a100.8gpu.log \
  $data/nccl-tests/all_reduce_perf.dgx-a100.2node.log -t topologies/dgx-a100-superpod.yaml -o "$tmp/nccl.yaml" > "$tmp/nccl.txt" 2>&1
check "nccl-tests import exits 0" test $? -eq 0
check "import names the bounding link class" grep -q "infiniband" "$tmp/nccl.txt"
check "import reports per size range" grep -q "16 MiB - 8 GiB" "$tmp/nccl.txt"
check "fabric profile has the measured collectives" grep -q "^collectives:" "$tmp/nccl.yaml"
$PODSIM collective -t topologies/dgx-a100-superpod.yaml --set "topology.fabric_profile=$tmp/nccl.yaml" --op all_reduce \
  --devices 8 --bytes 1GB > "$tmp/coll.txt" 2>&1
check "collective with the imported profile (busbw ~231 GB/s)" awk '/^ / { exit !($6 > 215 && $6 < 240) }' "$tmp/coll.txt"

{ grep '^#' $data/calib/example-gemm.csv; grep -v '^#' $data/calib/example-gemm.csv | cut -d, -f1-6,8-; } > "$tmp/nocol.csv"
expect_error "missing column" "nocol.csv: missing column 'median_time_us'" calibrate fit "$tmp/nocol.csv" \
  $data/calib/example-memory.csv --device X --topology topologies/dgx-h200-superpod.yaml
head -20 $data/calib/example-gemm.csv > "$tmp/trunc.csv"; echo "square,bf16,4096,4096" >> "$tmp/trunc.csv"
expect_error "truncated CSV row" "trunc.csv:21: 4 values but the header has 10" calibrate fit "$tmp/trunc.csv" \
  $data/calib/example-memory.csv --device X --topology topologies/dgx-h200-superpod.yaml
expect_error "wrong machine" "measured on a device with 132 SMs" calibrate fit $data/calib/example-gemm.csv \
  $data/calib/example-memory.csv --device X --topology topologies/dgx-a100-superpod.yaml
sed '/^  *8192  *2048 /d' $data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log > "$tmp/ar.log"
sed -n '/^        4096 /p' $data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log >> "$tmp/ar.log"
expect_error "non-monotone sizes" "does not increase" calibrate nccl-tests "$tmp/ar.log" -t topologies/dgx-a100-superpod.yaml
sed '/^  *65536 /s/ -1 .*/ -1    28.1/' $data/nccl-tests/all_reduce_perf.dgx-a100.8gpu.log > "$tmp/cut.log"
expect_error "truncated log line" "truncated line" calibrate nccl-tests "$tmp/cut.log" -t topologies/dgx-a100-superpod.yaml
expect_error "log from a bigger machine" "topology.nodes=2" calibrate nccl-tests $data/nccl-tests/all_reduce_perf.dgx-a100.2node.log \
  -t topologies/dgx-a100-superpod.yaml --set topology.nodes=1
expect_error "missing log" "cannot open file" calibrate nccl-tests "$tmp/none.log" -t topologies/dgx-a100-superpod.yaml

finish calibrate_cli
