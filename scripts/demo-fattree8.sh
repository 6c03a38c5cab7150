#!/usr/bin/env bash
# The demo at FatTree k=8 (80 switches, 128 hosts, 256 switch links): every
# path probed, background traffic, one congested link that must come out as
# the hottest, and a limit on the loss of the paths that avoid it. Needs root
# and release binaries (`cargo build --release --bins`, or scripts/demo.sh
# once). The switch usage sampler runs beside it and prints threads, RSS and
# CPU per switch at the end (the BENCHMARKS.md figures). Extra arguments go
# to `intpath demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CARGO_TARGET_DIR:-target}/release"
/usr/bin/python3 scripts/switch_usage.py --wait 300 >"${TMPDIR:-/tmp}/intpath-switch-usage.log" &
sampler=$!
status=0
"$bin/intpath" demo --topo fattree:k=8 --duration 15 --traffic-pps 25 --max-loss 1 \
  --out intpath-demo-k8 "$@" || status=$?
wait "$sampler" || true
echo "switch usage: $(tail -n 1 "${TMPDIR:-/tmp}/intpath-switch-usage.log")"
exit "$status"
