#!/usr/bin/env bash
# Soak test: runs the property generator (tests/test_properties.cpp) for MINUTES minutes with fresh random
# seeds, in batches, printing progress and every failing seed with a one-line repro command. Run it for
# hours on a spare machine; add what it finds to tests/data/property-regressions.txt.
#
#   scripts/soak.sh MINUTES            (build/tests/podsim_tests must be built)
#   PODSIM_SOAK_SEED_BASE=N            first seed (default: random); batches continue from there
#   PODSIM_SOAK_BATCH=N                cases per batch (default 200)
# Exit status: 0 when nothing new was found, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: scripts/soak.sh MINUTES}
tests=${PODSIM_TESTS:-build/tests/podsim_tests}
[[ -x $tests ]] || { echo "soak: $tests is not built (cmake --build build --target podsim_tests)" >&2; exit 2; }
batch=${PODSIM_SOAK_BATCH:-200}
base=${PODSIM_SOAK_SEED_BASE:-$(( (RANDOM << 30 | RANDOM << 15 | RANDOM) + 1000000 ))}
deadline=$(( $(date +%s) + minutes * 60 ))
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failures=0 cases=0 known=0
echo "soak: $minutes min from seed $base, $batch cases per batch"
while (( $(date +%s) < deadline )); do
  PODSIM_PROPERTY_SEED_BASE=$base PODSIM_PROPERTY_CASES=$batch \
    "$tests" --gtest_filter='Properties.RandomValidConfigurationsArePhysicallyPossible' > "$log" 2>&1
  rc=$?
  summary=$(grep -m1 '^properties:' "$log")
  if [[ -z $summary ]]; then  # the test binary itself failed (crash, timeout)
    echo "soak: seeds $base..$((base + batch - 1)) did not finish (exit $rc):"; tail -20 "$log"
    failures=$((failures + 1))
  else
    echo "soak: seeds $base..$((base + batch - 1)): ${summary#properties: }"
  fi
  while read -r _ _ seed; do
    repro=$(grep -A1 "^PROPERTY-FAILURE seed $seed\$" "$log" | sed -n 's/^  repro: //p')
    echo "FAIL seed $seed: PODSIM_PROPERTY_SEED=$seed $tests --gtest_filter='Properties.Random*'"
    echo "     $repro"
    failures=$((failures + 1))
  done < <(grep '^PROPERTY-FAILURE seed ' "$log")
  cases=$((cases + batch))
  known=$((known + $(grep -c '^\[known defect' "$log")))
  base=$((base + batch))
done
echo "soak: $cases cases, $failures new failures, $known known-defect hits; next seed base $base"
(( failures == 0 ))
