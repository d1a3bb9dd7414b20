#!/usr/bin/env bash
# Speed of podsim as a user meets it: wall time and peak memory of `podsim run` for one training step of
# GPT-3 175B on 1024 A100s and of the Megatron 1T model on 3072 A100s, pinned to one core, compared with
# the targets (README "Speed"). Then the Google Benchmark figures of the same two cases.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
A100=topologies/dgx-a100-superpod.yaml
GPT3=workloads/gpt3-175b.yaml
ONE_T="--set topology.nodes=384 --set workload.model.layers=128 --set workload.model.hidden=25600 --set workload.model.heads=160 \
  --set workload.model.ffn_hidden=102400 --set workload.parallel.pp=64 --set workload.parallel.schedule=1f1b \
  --set workload.parallel.virtual_stages=1 --set workload.training.global_batch=3072"
measure() {  # measure NAME ARGS...
  local name=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$log" taskset -c 0 build/podsim run "$@" --quiet
  read -r wall rss < "$log"
  rm -f "$log"
  awk -v n="$name" -v w="$wall" -v r="$rss" 'BEGIN {
    printf "%-34s %7.2f s  %7.0f MiB   %5.1fx under the 10 s bar, %4.1fx the 1 s aim; peak memory %4.1f%% of 2 GiB\n",
           n, w, r / 1024, 10 / w, w / 1, 100 * r / 1024 / 2048 }'
}
echo "one core (taskset -c 0), wall time and peak resident memory of 'podsim run':"
measure "GPT-3 175B, 1024 A100, v=4" -t $A100 -w $GPT3 --set workload.parallel.virtual_stages=4
# shellcheck disable=SC2086
measure "Megatron 1T, 3072 A100 (Table 1)" -t $A100 -w $GPT3 $ONE_T
measure "GPT-3 175B, 1024 A100, auto (5 runs)" -t $A100 -w $GPT3
# Expert all-to-alls across two NVL72 domains: 28,000 phases contend in SimGrid.
measure "DeepSeek-V3, 512 GB200 (NVL72)" -t topologies/dgx-gb200-superpod.yaml -w workloads/deepseek-v3.yaml
echo
echo "one core, 'podsim plan' (the bound over every combination, then the simulations it cannot rule out):"
plan_measure() {  # plan_measure NAME ARGS...
  local name=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$log" taskset -c 0 build/podsim plan "$@" -j 1 -q --out "$(mktemp -d)" > /dev/null
  read -r wall rss < "$log"
  rm -f "$log"
  awk -v n="$name" -v w="$wall" -v r="$rss" 'BEGIN { printf "%-34s %7.2f s  %7.0f MiB\n", n, w, r / 1024 }'
}
plan_measure "DeepSeek-V3 search, 1024 H100" -t topologies/dgx-h100-superpod.yaml -w workloads/deepseek-v3.yaml \
  --set topology.nodes=128 --set 'workload.parallel.tp=[1,2]' --set 'workload.parallel.ep=[8,16,32,64]' \
  --set 'workload.training.recompute=[selective,full]' --top 5
echo
taskset -c 0 build/bench/podsim_bench --benchmark_counters_tabular=true
echo
echo "one core, the plan search's per-candidate memory model and lower bound (Mixtral 8x7B, 64 H100):"
taskset -c 0 build/bench/podsim_bench_plan_bound --benchmark_counters_tabular=true
echo
echo "very large SuperPODs (8 microbatches, v=1; minutes per size):"
taskset -c 0 build/bench/podsim_bench_scale
