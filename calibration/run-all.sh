#!/usr/bin/env bash
# Measures this machine for podsim: builds the CUDA microbenchmarks (only CUDA and CMake needed), runs
# calib-gemm, calib-memory and calib-nccl (all GPUs of this node) and writes their CSVs, each with a
# provenance header, to calibration/data/NAME/. With a topology it then fits the device profile and
# imports the collective measurements (needs podsim built in build/, see README).
#
#   calibration/run-all.sh NAME [TOPOLOGY]
#   calibration/run-all.sh h200 topologies/dgx-h200-superpod.yaml
#
# Takes about 2-4 minutes on an 8-GPU H100/H200 node (GEMM sweep ~1 min in 3 dtypes, 30 s of sustained
# load, memory sweep ~10 s, NCCL sweep ~30 s). QUICK=1 runs a small sweep (~30 s) to check the setup.
# SUSTAIN=S changes the sustained-load time; CUDA_ARCH=90 builds for one architecture only.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: calibration/run-all.sh NAME [TOPOLOGY]  (NAME: folder under calibration/data, e.g. h200)}
topology=${2:-}
out=calibration/data/$name
mkdir -p "$out"

build=${CALIB_BUILD:-build-calib}
cmake -S calibration -B "$build" -DCMAKE_BUILD_TYPE=Release ${CUDA_ARCH:+-DPODSIM_CUDA_ARCHITECTURES=$CUDA_ARCH} > "$out/build.log"
cmake --build "$build" -j "$(nproc)" >> "$out/build.log"
[ -x "$build/calib-gemm" ] || { echo "run-all: calib-gemm was not built (no nvcc?); see $out/build.log" >&2; exit 1; }

gemm_args=(--sustain-seconds "${SUSTAIN:-30}")
memory_args=()
nccl_args=()
if [ "${QUICK:-0}" = 1 ]; then
  gemm_args=(--quick --sustain-seconds 5 --dtypes bf16,fp8)
  memory_args=(--max-bytes 268435456)
  nccl_args=(--max-bytes 268435456)
fi
echo "run-all: calib-gemm -> $out/gemm.csv" >&2
"$build/calib-gemm" --out "$out/gemm.csv" "${gemm_args[@]}"
echo "run-all: calib-memory -> $out/memory.csv" >&2
"$build/calib-memory" --out "$out/memory.csv" "${memory_args[@]}"
gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)
if [ -x "$build/calib-nccl" ] && [ "$gpus" -ge 2 ]; then
  echo "run-all: calib-nccl on $gpus GPUs -> $out/nccl.csv" >&2
  "$build/calib-nccl" --out "$out/nccl.csv" "${nccl_args[@]}"
else
  echo "run-all: calib-nccl skipped (needs NCCL and at least 2 GPUs; $gpus visible)" >&2
fi

if [ -n "$topology" ]; then
  podsim=${PODSIM:-build/podsim}
  if [ ! -x "$podsim" ]; then
    echo "run-all: $podsim not built; fit later with: podsim calibrate fit $out/gemm.csv $out/memory.csv --device NAME --topology $topology -o calibration/profiles/NAME.yaml" >&2
    exit 0
  fi
  device=$(sed -n 's/^# device: //p' "$out/gemm.csv" | head -1 | tr ' ' '-')
  "$podsim" calibrate fit "$out/gemm.csv" "$out/memory.csv" --device "$device" --topology "$topology" \
    -o "calibration/profiles/$name.yaml" | tee "$out/fit-report.txt"
  if [ -f "$out/nccl.csv" ]; then
    "$podsim" calibrate nccl-tests "$out/nccl.csv" --topology "$topology" -o "calibration/profiles/nccl-$name.yaml" \
      | tee "$out/nccl-report.txt"
  fi
fi
