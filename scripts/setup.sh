#!/usr/bin/env bash
# Installs every Debian package podsim needs to build, test and run. Idempotent: when everything is
# already installed it only runs `dpkg -s` and returns in well under a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsimgrid-dev            # event engine + flow-level network model (3.32 on Debian 12)
  libboost-graph-dev        # topology graphs: connectivity, shortest paths, max-flow bisection
  libyaml-cpp-dev           # topology / workload / study YAML
  libfmt-dev                # formatting
  libcli11-dev              # command line parsing
  nlohmann-json3-dev        # JSON output
  libgtest-dev libgmock-dev googletest  # unit tests
  libbenchmark-dev          # bench/
  libnlopt-dev              # calibration fits (podsim calibrate fit)
)
packages+=("$@")  # callers may ask for extra packages (e.g. the browser the report test needs)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
