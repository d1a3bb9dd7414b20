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

# Unwritable outputs and odd names are input errors (exit 2) that name the path and what is wrong, checked
# before the simulation runs.
T=topologies/dgx-a100-superpod.yaml
W=workloads/gpt3-175b.yaml
small="--set topology.nodes=1 --set workload.parallel.pp=1 --set workload.parallel.dp=1 --set workload.parallel.schedule=1f1b --set workload.parallel.virtual_stages=1 --set workload.model.layers=2 --set workload.training.global_batch=8"
touch "$tmp/a-file"
expect_error "--out below a file" "--out $tmp/a-file/out: cannot create the directory" run -t $T -w $W $small --out "$tmp/a-file/out"
expect_error "--out is a file" "--out $tmp/a-file: exists and is not a directory" run -t $T -w $W $small --out "$tmp/a-file"
mkdir -p "$tmp/tracedir"
expect_error "validate --out below a file" "--out $tmp/a-file/out: cannot create the directory" validate --out "$tmp/a-file/out"
# A table in NVIDIA's schema: a mapping naming a preset that does not exist is exit 2 at the mapping's line.
sed -e "s#\.\./#$PWD/#g" -e 's#gpt3-175b.yaml#no-such-preset.yaml#' validation/nvidia-presets.yaml > "$tmp/map.yaml"
expect_error "validate mapping names a missing preset" "map.yaml:[0-9]*:[0-9]*: models.GPT3-175B.workload: preset .*no-such-preset.yaml does not exist" validate --table validation/nvidia-pretraining-h100-b200.csv --mapping "$tmp/map.yaml" --rows 286
expect_error "validate --rows on the SC21 table" "--system/--rows select rows" validate --rows 1
expect_error "--trace is a directory" "--trace $tmp/tracedir: is a directory; give a file name" run -t $T -w $W $small --trace "$tmp/tracedir"
if [ "$(id -u)" != 0 ]; then  # permissions do not bind root
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  expect_error "--out read-only" "--out $tmp/ro: cannot write files in this directory" run -t $T -w $W $small --out "$tmp/ro"
  chmod 755 "$tmp/ro"
fi
cp $W "$tmp/w"$'\xff'".yaml"
expect_error "non-UTF-8 file name" 'w\\xFF.yaml: the file name is not valid UTF-8' run -t $T -w "$tmp/w"$'\xff'".yaml" --out "$tmp/utf8"
sed 's/^name: .*/name: GPT \xff/' $W > "$tmp/latin1.yaml"
expect_error "non-UTF-8 YAML" "latin1.yaml:[0-9]*:[0-9]*: the file is not valid UTF-8 (byte 0xFF)" run -t $T -w "$tmp/latin1.yaml"
expect_error "directory as workload" "workloads: is a directory, expected a file" run -t $T -w workloads
$PODSIM run -t $T -w $W $small --out "$tmp/non-utf8-out"$'\xfe' > /dev/null 2>&1
check "a non-UTF-8 --out directory works" test -f "$tmp/non-utf8-out"$'\xfe'/summary.csv

# Silently accepted before: a key given twice, a quoted number or boolean, a value that overflows.
printf 'name: x\nname: y\n' > "$tmp/dup.yaml"
expect_error "duplicate key (workload)" "dup.yaml:2:1: name: duplicate key 'name' (first given at line 1)" run -t $T -w "$tmp/dup.yaml"
sed 's/^kind: gpu_cluster/kind: gpu_cluster\nnodes: 2/' $T > "$tmp/duptopo.yaml"
sed -i 's|\.\./calibration|'"$PWD"'/calibration|' "$tmp/duptopo.yaml"
expect_error "duplicate key (topology)" "duptopo.yaml:[0-9]*:1: nodes: duplicate key 'nodes'" run -t "$tmp/duptopo.yaml" -w $W
printf 'name: s\ntopology: a.yaml\nworkload: b.yaml\nname: t\n' > "$tmp/dupstudy.yaml"
expect_error "duplicate key (study)" "dupstudy.yaml:4:1: name: duplicate key 'name'" sweep "$tmp/dupstudy.yaml" --out "$tmp/dupsweep"
sed 's/^  layers: 96/  layers: "96"/' $W > "$tmp/quoted.yaml"
expect_error "quoted number" 'quoted.yaml:[0-9]*:[0-9]*: model.layers: expected a whole number, got the quoted text .96.: .*remove the quotes' run -t $T -w "$tmp/quoted.yaml"
sed 's/^  sequence_parallel: false/  sequence_parallel: "true"/' $W > "$tmp/quotedbool.yaml"
expect_error "quoted boolean" 'quotedbool.yaml:19:[0-9]*: parallel.sequence_parallel: expected true or false, got the quoted text .true.' run -t $T -w "$tmp/quotedbool.yaml"
expect_error "quoted --set value" "(field model.layers): expected a whole number, got the quoted text" run -t $T -w $W --set "workload.model.layers='96'"
expect_error "overflowing number" "device.hbm_GiB): '1e300' is out of range" run -t $T -w $W --set topology.device.hbm_GiB=1e300
expect_error ".inf" "expected a finite number" run -t $T -w $W --set topology.device.hbm_GiB=.inf
expect_error ".nan" "expected a finite number" run -t $T -w $W --set topology.device.hbm_bandwidth_GBps=.nan

# collective: options that were silently ignored or reinterpreted.
expect_error "collective --per-node 0" "--per-node 0: must be at least 1" collective -t $T --devices 8 --per-node 0
expect_error "send_recv --devices 3" "send_recv is one transfer between exactly 2 ranks" collective -t $T --op send_recv --devices 3
expect_error "collective --protocol fast" "unknown protocol 'fast' (valid: auto, LL, LL128, Simple)" collective -t $T --protocol fast
expect_error "collective --protocol LL on a torus" "describes no LL protocol" collective -t topologies/tpu-v3-pod.yaml --protocol LL
$PODSIM collective -t $T --op send_recv > "$tmp/sr.txt" 2>&1
check "send_recv defaults to 2 ranks" grep -q "over 2 ranks" "$tmp/sr.txt"
expect_error "collective --set workload" "a collective has no workload" collective -t $T --set workload.model.layers=4
expect_error "topo describe --set workload" "topo describe reads no workload" topo describe $T --set workload.model.layers=4

# podsim validate writes each row's `podsim run` command; running it reproduces the row's step time (a
# Megatron-Bridge row whose recipe passes a YAML list through a quoted --set, and a 24.07 row).
$PODSIM validate --table validation/nvidia-pretraining-h100-b200.csv --rows 288,280 --out "$tmp/val" > /dev/null 2>&1
check "validate --out writes validation.csv" test -f "$tmp/val/validation.csv"
for row in 288 280; do
  line=$(python3 -c "
import csv, sys
for r in csv.DictReader(open('$tmp/val/validation.csv')):
    if r['row_id'] == '$row': print(r['step_time_s'] + '|' + r['command'])")
  step=${line%%|*}
  cmd=${line#*|}
  check "row $row command is a podsim run" test "${cmd:0:11}" = "podsim run "
  eval "$PODSIM ${cmd#podsim } --out \"$tmp/val-$row\"" > /dev/null 2>&1
  got=$(python3 -c "import csv; print(next(csv.DictReader(open('$tmp/val-$row/summary.csv')))['step_time_s'])")
  check "row $row command reproduces its step time" python3 -c "import sys; sys.exit(abs($got / $step - 1) > 1e-4)"
done

finish cli_contract
