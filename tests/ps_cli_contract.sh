#!/usr/bin/env bash
# The parameter-server CLI contract through the real binary: one workload file runs on the GPU preset and
# on the CPU preset, the outputs have the documented columns and metrics, and bad input (cache larger than
# its tier, negative Zipf exponent, dimension 0) exits with status 2 naming file, line and field.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
W=workloads/ctr-sparse-ps.yaml

$PODSIM run -t topologies/gpu-ps-4node.yaml -w $W --set workload.training.minibatches_per_batch=256 \
  --out "$tmp/gpu" > "$tmp/gpu.txt" 2>&1
check "gpu run exits 0" test $? -eq 0
check "gpu: examples/s printed" grep -q "samples/s" "$tmp/gpu.txt"
for m in ssd_busy_s dram_busy_s pcie_busy_s hbm_embedding_s network_pull_s network_push_s mlp_compute_s allreduce_s; do
  check "gpu: metric $m" grep -q "$m" "$tmp/gpu.txt"
done
check "gpu: host/SSD tiers in the breakdown" grep -q "exposed host/SSD tiers" "$tmp/gpu.txt"
header=$(head -1 "$tmp/gpu/summary.csv")
for col in samples_per_s storage_exposed_s stream_exposed_s examples_per_batch embedding_TB zipf_exponent; do
  check "summary.csv has $col" grep -q "\b$col\b" <<<"$header"
done
check "gpu: result.json metrics" grep -q '"ssd_read_GB_per_server"' "$tmp/gpu/result.json"
# The lane name "server 0 (GPU 0, its host and SSD)" has a comma: every CSV must still parse to its columns.
csv_ok() {  # csv_ok FILE: every record has as many fields as the header, read by Python's RFC 4180 reader
  python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1], newline=""))); sys.exit(not rows or any(len(r) != len(rows[0]) for r in rows))' "$1"
}
check "gpu: breakdown.csv is well-formed CSV" csv_ok "$tmp/gpu/breakdown.csv"
check "gpu: summary.csv is well-formed CSV" csv_ok "$tmp/gpu/summary.csv"
check "gpu: lane name intact" python3 -c 'import csv, sys; sys.exit(list(csv.DictReader(open(sys.argv[1])))[0]["stage"] != "server 0 (GPU 0, its host and SSD)")' "$tmp/gpu/breakdown.csv"

$PODSIM run -t topologies/cpu-mpi-cluster.yaml -w $W --out "$tmp/cpu" > "$tmp/cpu.txt" 2>&1
check "cpu run exits 0" test $? -eq 0
check "cpu: 150 servers" grep -q "150 of 150" "$tmp/cpu.txt"
check "cpu: ok" grep -q ",ok," "$tmp/cpu/summary.csv"
$PODSIM run -t topologies/cpu-mpi-cluster.yaml -w $W --set topology.nodes=40 --out "$tmp/small" > "$tmp/small.txt" 2>&1
check "cpu: too few servers is out_of_memory, exit 0" grep -q "out_of_memory" "$tmp/small/summary.csv"
# An out_of_memory run in the directory of an earlier ok run replaces every file and says so exactly.
sleep 0.01; touch "$tmp/before-oom"; sleep 0.01
$PODSIM run -t topologies/cpu-mpi-cluster.yaml -w $W --set topology.nodes=40 --out "$tmp/cpu" > "$tmp/oom.txt" 2>&1
check "oom: exit 0" test $? -eq 0
check "oom: wrote line lists the files" grep -q "wrote        $tmp/cpu/summary.csv, breakdown.csv, result.json, report.html$" "$tmp/oom.txt"
for f in summary.csv breakdown.csv result.json report.html; do
  check "oom: $f is this run's" test "$tmp/cpu/$f" -nt "$tmp/before-oom"
done
check "oom: breakdown.csv is well-formed CSV" csv_ok "$tmp/cpu/breakdown.csv"
field() {  # field FILE ROW COLUMN: one cell, by column name
  python3 -c 'import csv, sys; print(list(csv.DictReader(open(sys.argv[1])))[int(sys.argv[2])][sys.argv[3]])' "$@"
}
check "oom: breakdown has no time" test -z "$(field "$tmp/cpu/breakdown.csv" 0 total_s)"
check "oom: breakdown has memory" test "$(field "$tmp/cpu/breakdown.csv" 0 memory_GiB)" = "258.3"
check "oom: summary names what did not fit" test -n "$(field "$tmp/cpu/summary.csv" 0 out_of_memory_tier)"
# Host DRAM, not the GPUs' HBM, is what overflows here: summary.csv must say so (its GPUs fit).
$PODSIM run -t topologies/gpu-ps-4node.yaml -w $W --set workload.ps.dram_cache_GiB=1000 \
  --set workload.training.minibatches_per_batch=256 --out "$tmp/dram" > "$tmp/dram.txt" 2>&1
check "host DRAM: out_of_memory" test "$(field "$tmp/dram/summary.csv" 0 status)" = out_of_memory
check "host DRAM: named as the tier" test "$(field "$tmp/dram/summary.csv" 0 out_of_memory_tier)" = "host DRAM"
check "host DRAM: needed > available" python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' \
  "$(field "$tmp/dram/summary.csv" 0 memory_needed_GiB)" "$(field "$tmp/dram/summary.csv" 0 memory_available_GiB)"
check "host DRAM: the terminal says what did not fit" grep -q "did not fit  host DRAM" "$tmp/dram.txt"
check "oom: needed > available" python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' \
  "$(field "$tmp/cpu/summary.csv" 0 memory_needed_GiB)" "$(field "$tmp/cpu/summary.csv" 0 memory_available_GiB)"

# Bad values in a file: the message names the file, line and column, the field, and what is valid.
sed 's/dram_cache_GiB: 512 /dram_cache_GiB: 2048 /' $W > "$tmp/cache.yaml"
sed 's/zipf_exponent: 1.1 /zipf_exponent: -0.5 /' $W > "$tmp/zipf.yaml"
sed 's/dimension: 8 /dimension: 0 /' $W > "$tmp/dim.yaml"
expect_error "cache larger than its tier" "cache.yaml:[0-9]*:[0-9]*: ps.dram_cache_GiB: .*larger than its tier.*1024 GiB" \
  run -t topologies/gpu-ps-4node.yaml -w "$tmp/cache.yaml"
expect_error "negative Zipf exponent" "zipf.yaml:[0-9]*:[0-9]*: model.zipf_exponent: must be 0" \
  run -t topologies/gpu-ps-4node.yaml -w "$tmp/zipf.yaml"
expect_error "dimension 0" "dim.yaml:[0-9]*:[0-9]*: model.embedding.dimension: must be a whole number of at least 1" \
  run -t topologies/cpu-mpi-cluster.yaml -w "$tmp/dim.yaml"
expect_error "--set names the flag" "workload.model.zipf_exponent=-1 (field model.zipf_exponent)" \
  run -t topologies/cpu-mpi-cluster.yaml -w $W --set workload.model.zipf_exponent=-1
expect_error "gpu cluster without host specs" "host_memory_GiB" \
  run -t topologies/dgx-a100-superpod.yaml -w $W --set topology.nodes=4

finish ps_cli_contract
