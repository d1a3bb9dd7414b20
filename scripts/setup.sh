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
  python3                   # tests/golden/compare.py, tests/sweep_contract.sh
  libnlopt-dev              # calibration fits (podsim calibrate fit)
  libeigen3-dev             # least squares of the calibration fits (column-pivoted QR)
  libssl-dev                # SHA-256 of input files in result.json (OpenSSL libcrypto EVP)
)
packages+=("$@")  # callers may ask for extra packages (e.g. the browser the report test needs)

command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)  # Chart.js for the HTML reports (below)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
install_js() {  # the JavaScript the HTML reports embed, pinned by reports/assets/package-lock.json
  local assets; assets="$(dirname "$0")/../reports/assets"
  if [ ! -f "$assets/node_modules/chart.js/dist/chart.umd.min.js" ]; then
    echo "setup: npm ci in reports/assets" >&2
    npm ci --prefix "$assets" --no-audit --no-fund --loglevel=error >&2
  fi
}
if ((${#missing[@]} == 0)); then
  install_js
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
install_js
