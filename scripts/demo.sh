#!/usr/bin/env bash
# The whole telemetry loop on a fresh machine: installs what the demo
# needs and is missing (Mininet, iproute2, ethtool, a font; nothing the
# tests alone use), builds intpath, then runs `intpath demo` (FatTree k=4 in Mininet with one
# congested link; heatmaps and a summary in ./intpath-demo). Needs root.
# Extra arguments go to `intpath demo` (see `intpath demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
# Only the programs this demo runs: the microservice workload
# (`intpath-workload`, an OpenTelemetry stack of its own, 7 % of a clean
# build) only when `--workload` asks for it.
bins=(intpath intpath-switch intpath-collector probe-gen)
for arg in "$@"; do
  case "$arg" in --workload | --workload=*) bins+=(intpath-workload) ;; esac
done
echo "==> cargo build --release (${bins[*]})"
cargo build --release --locked "${bins[@]/#/--bin=}"
exec target/release/intpath demo "$@"
