#!/usr/bin/env bash
# One command from a fresh Debian machine to a tested podsim: installs what is missing, builds, runs every
# test (unit tests, the CLI contract through the real binary, the Megatron SC21 validation bar).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build -j "$(nproc)" --output-on-failure
