#!/usr/bin/env bash
# The whole telemetry loop on a fresh machine: installs what the demo
# needs and is missing (Mininet, iproute2, ethtool, a font; nothing the
# tests alone use), builds intpath, then runs `intpath demo` (FatTree k=4 in Mininet with one
# congested link; heatmaps and a summary in ./intpath-demo). Needs root.
# Extra arguments go to `intpath demo` (see `intpath demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
echo "==> cargo build --release"
cargo build --release --locked --bins
exec target/release/intpath demo "$@"
