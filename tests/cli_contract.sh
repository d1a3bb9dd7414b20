#!/usr/bin/env bash
# The CLI contract through the real binary: the documented commands work, write the documented files with
# the documented columns, and bad input exits with status 2 and a message naming file, line and field.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

$PODSIM run --topology topologies/dgx-a100-superpod.yaml --workload workloads/gpt3-175b.yaml \
  --set workload.parallel.virtual_stages=2 --out "$tmp/out" > "$tmp/run.txt" 2>&1
check "run exits 0" test $? -eq 0
check "summary printed" grep -q "TFLOP/s per device" "$tmp/run.txt"
check "breakdown printed" grep -q "pipeline bubble" "$tmp/run.txt"
header=$(head -1 "$tmp/out/summary.csv")
for col in devices step_time_s tflops_per_device mfu memory_per_device_GiB tokens_per_s; do
  check "summary.csv has $col" grep -q "\b$col\b" <<<"$header"
done
check "summary.csv has one row" test "$(wc -l < "$tmp/out/summary.csv")" -eq 2
check "breakdown.csv per stage" test "$(grep -c '^stage [0-9]' "$tmp/out/breakdown.csv")" -eq 8
check "result.json written" grep -q '"summary"' "$tmp/out/result.json"
check "no temp files left" test -z "$(ls "$tmp/out" | grep tmp)"

$PODSIM run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.pp=16 \
  --set topology.nodes=128 --set workload.parallel.virtual_stages=2 --out "$tmp/out2" > /dev/null 2>&1
check "--set pp=16 nodes=128" grep -q ',16,' "$tmp/out2/summary.csv"

printf 'name: x\nkind: transformer_lm\nmodel: {layers: 4, hidden: [1,\n' > "$tmp/syntax.yaml"
expect_error "YAML syntax" "syntax.yaml:[0-9]*:[0-9]*: YAML syntax error" run -t topologies/dgx-a100-superpod.yaml -w "$tmp/syntax.yaml"
expect_error "unknown key" "unknown key 'layerz'" run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.model.layerz=3
expect_error "too many devices" "tp\*pp\*dp" run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.dp=64
expect_error "heads vs tp" "heads" run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.tp=7
expect_error "bad prefix" "must start with 'topology.' or 'workload.'" run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set parallel.pp=2
expect_error "missing file" "cannot open file" run -t nope.yaml -w workloads/gpt3-175b.yaml
expect_error "wrong type" "expected a whole number" run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set workload.parallel.pp=two
expect_error "missing option" "topology" run -w workloads/gpt3-175b.yaml

$PODSIM topo describe topologies/dgx-h100-superpod.yaml > "$tmp/describe.txt" 2>&1
check "topo describe" grep -q "bisection" "$tmp/describe.txt"
$PODSIM collective -t topologies/dgx-a100-superpod.yaml --op all_reduce --devices 8 --bytes 1GB > "$tmp/coll.txt" 2>&1
check "collective busbw near 230 GB/s" awk '/^ / { exit !($6 > 200 && $6 < 240) }' "$tmp/coll.txt"
$PODSIM --help > "$tmp/help.txt" 2>&1
check "--help teaches" grep -q "Examples" "$tmp/help.txt"

finish cli_contract
