#!/usr/bin/env bash
# The same inputs give byte-identical summary.csv, breakdown.csv and result.json on every run, for every
# topology family (sweep results with any number of workers are checked in sweep_contract.sh).
set -u
PODSIM=$(readlink -f "${PODSIM:-build/podsim}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=(
  "-t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set topology.nodes=16 --set workload.training.global_batch=192"
  "-t topologies/cerebras-cs2-cluster.yaml -w workloads/gpt3-xl.yaml --set topology.systems=4"
)
i=0
for args in "${runs[@]}"; do
  i=$((i + 1))
  for k in a b; do
    # shellcheck disable=SC2086
    "$PODSIM" run $args --out "$tmp/$i$k" --quiet || fail=1
    # result.json's provenance names the run (its --out, its time): everything else must be identical.
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j.pop("provenance"); json.dump(j, open(sys.argv[1], "w"), indent=2)' "$tmp/$i$k/result.json" || fail=1
  done
  for f in summary.csv breakdown.csv result.json; do
    if cmp -s "$tmp/${i}a/$f" "$tmp/${i}b/$f"; then echo "ok   run $i: $f identical"; else echo "FAIL run $i: $f differs"; fail=1; fi
  done
done
exit $fail
