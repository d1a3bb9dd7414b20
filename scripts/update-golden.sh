#!/usr/bin/env bash
# Accepts the current predictions of the golden cases as the new reference, after showing what moved.
# Run it only for an intended change (a model fix, a recalibration), and say in the commit message why the
# predictions moved; the diff of tests/golden/results.csv is then part of the review.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/podsim sweep tests/golden/cases.yaml --out "$tmp" --quiet
if [ -f tests/golden/results.csv ]; then
  python3 tests/golden/compare.py tests/golden/results.csv "$tmp/results.csv" --tolerance 0 || true
fi
cp "$tmp/results.csv" tests/golden/results.csv
echo "updated tests/golden/results.csv; review 'git diff tests/golden/results.csv' and commit it with the reason"
