#!/usr/bin/env bash
# Re-runs the golden cases and compares them with the accepted predictions in tests/golden/results.csv.
set -euo pipefail
PODSIM=$(readlink -f "${PODSIM:-build/podsim}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PODSIM" sweep tests/golden/cases.yaml --out "$tmp" --quiet
python3 tests/golden/compare.py tests/golden/results.csv "$tmp/results.csv"
