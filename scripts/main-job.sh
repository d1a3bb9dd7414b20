#!/usr/bin/env bash
# One command from a fresh Debian machine to a what-if study: installs what is missing, builds podsim, and
# asks "what step time, TFLOP/s per GPU and MFU will GPT-3 175B get on a DGX A100 SuperPOD, what if we change
# the pipeline depth, the machine size, the recomputation strategy, the fabric or the GPU generation, and how
# does it scale from 64 to 1024 GPUs on A100 and H100 SuperPODs?".
# Results: reports/latest/{what-if,weak-scaling}/{results.csv,report.html} (open report.html in a browser).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh

out=reports/latest
rm -rf "$out"
mkdir -p "$out"
build/podsim sweep workloads/studies/gpt3-what-if.yaml --out "$out/what-if"
echo
build/podsim sweep workloads/studies/llama3-70b-what-if.yaml --out "$out/llama3-70b-what-if"
echo
build/podsim sweep workloads/studies/gpt3-weak-scaling.yaml --out "$out/weak-scaling"
echo
echo "Reports: $out/what-if/report.html, $out/llama3-70b-what-if/report.html and $out/weak-scaling/report.html"
