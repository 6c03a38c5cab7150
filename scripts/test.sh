#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test,
# including the ones that need root for network namespaces and veth pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
# A clean build needs no incremental caches; they would double the disk it takes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Every step says when it starts, so a slow one is found in CI's log; the
# long ones have a time limit, so a hang fails the run and says where
# instead of using up CI's own limit in silence.
step() { printf '==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
# A demo is stopped as Ctrl-C stops it, so it still tears its network down.
limit() { timeout --signal=INT --kill-after=60 "$@"; }
# Style and lints first: they fail in minutes, the tests take many more.
step "cargo fmt --check"
cargo fmt --all --check
step "cargo clippy (warnings are errors; incompatible_msrv holds std calls to rust-version)"
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p intpath --no-default-features --all-targets --locked -- -D warnings
step "rust-version covers every locked dependency"
scripts/check_rust_version.py
scripts/install-deps.sh
step "PostgreSQL test server on loopback (INTPATH_TEST_PG)"
pg_dir="$(mktemp -d /tmp/intpath-pg.XXXXXX)"
INTPATH_TEST_PG="$(scripts/pg-test-server.sh start "$pg_dir")"
export INTPATH_TEST_PG
trap 'scripts/pg-test-server.sh stop "$pg_dir" || true; rm -rf "$pg_dir"' EXIT
step "cargo test"
limit 1800 cargo test --workspace --locked -- --include-ignored
step "the README's first look builds without the lab and the web view: its commands work, the others say how to build them"
cargo test --locked -p intpath --no-default-features --test usage_cli --test synth_cli --test diagnose_cli
step "store_scaling bench end to end at a smoke size (debug build; its numbers mean nothing)"
INTPATH_BENCH_HOPS=20000 cargo test --locked -p intpath-collector --bench store_scaling
step "P4 vectors up to date, and they translate into P4Runtime messages"
python3 p4/tests/make_vectors.py --check
python3 p4/tests/replay_bmv2.py --dry-run
cargo build --release --locked --bins
bin="${CARGO_TARGET_DIR:-target}/release"
step "Mininet launcher: every topology format, real networks, bmv2 failures"
INTPATH_BIN_DIR="$bin" \
  /usr/bin/python3 -m unittest discover -v -s mininet -p 'test_*.py'
# A demo tears everything down: none of the switch processes, Mininet links
# or workload services it started may remain. Others' may exist on the
# machine, so a demo is judged by what is there after it and was not before.
leftovers() {
  local pid
  for pid in $(pgrep -x intpath-switch || true); do echo "intpath-switch pid $pid"; done
  for pid in $(pgrep -f 'intpath-workload serve' || true); do echo "intpath-workload pid $pid"; done
  ip -o link | sed -nE 's/^[0-9]+: (s[0-9]+-eth[0-9]+)[@:].*/link \1/p'
}
nothing_left_since() {
  local left
  left="$(comm -13 <(printf '%s\n' "$1" | sort) <(leftovers | sort))"
  if [ -n "$left" ]; then
    echo "the demo left behind: $(paste -sd, <<<"$left")"; exit 1
  fi
}
step "end to end: intpath demo in Mininet (FatTree k=4, one congested link)"
out=target/demo-ci
rm -rf "$out"
before="$(leftovers)"
limit 300 "$bin/intpath" demo --duration 8 --out "$out"
for f in heatmap-timeline-qdepth heatmap-snapshot-qdepth heatmap-timeline-qdelay heatmap-snapshot-loss; do
  test -s "$out/$f.png" || { echo "missing $out/$f.png"; exit 1; }
done
nothing_left_since "$before"
step "end to end: intpath demo --collectors 2 into the PostgreSQL test server; the collectors' own counts must add up to the run"
out=target/demo-collectors
rm -rf "$out"
demo_db="${INTPATH_TEST_PG%/*}/demo_collectors"
psql -q "$INTPATH_TEST_PG" -c 'DROP DATABASE IF EXISTS demo_collectors' -c 'CREATE DATABASE demo_collectors'
# Exits non-zero unless both collectors joined one run and what each stored
# sums to what the database holds.
before="$(leftovers)"
limit 300 "$bin/intpath" demo --duration 8 --collectors 2 --db "$demo_db" --out "$out"
"$bin/intpath" query --db "$demo_db" paths
nothing_left_since "$before"
step "end to end: intpath demo --workload hotel in Mininet; diagnose must name the injected link, lossy link, then service, first"
for fault in link:auto loss:auto service:profile; do
  out="target/demo-workload-${fault%%:*}"
  rm -rf "$out"
  before="$(leftovers)"
  # Exits non-zero unless the top culprit is the injected fault.
  limit 300 "$bin/intpath" demo --workload hotel --fault "$fault" --duration 16 --out "$out" | tee "$out.log"
  for f in snapshot timeline; do
    test -s "$out/$f.png" || { echo "missing $out/$f.png"; exit 1; }
  done
  if [ "$fault" = loss:auto ]; then
    # Loss where it happens: the switches' port counters, which the loss
    # heatmap and query show, put the loss on the injected link; any other
    # link shows under a tenth of it.
    injected="$(sed -n 's/^verdict: the top culprit is the injected loss //p' "$out.log")"
    lossy="$("$bin/intpath" query --db "$out/telemetry.db" hottest --metric loss --top 5 | awk 'NR > 1 { print $1, $2 }')"
    awk -v want="$injected" 'NR == 1 { ok = $1 == want; top = $2 } NR > 1 && $2 >= top / 10 { ok = 0 } END { exit !(NR && ok) }' <<<"$lossy" ||
      { echo "links with loss (%): $(paste -sd, <<<"$lossy"); the injected lossy link: $injected"; exit 1; }
  fi
  nothing_left_since "$before"
done
step "end to end: intpath lab with an application intpath did not write (the OpenTelemetry shop); lab diagnose must name the throttled link first"
before="$(leftovers)"
INTPATH_BIN_DIR="$bin" limit 900 python3 scripts/lab_shop_test.py
nothing_left_since "$before"
step "end to end: the same lab, the link delaying every frame 20 ms with no queue growing; lab diagnose must name that link, not its callee's host"
before="$(leftovers)"
INTPATH_BIN_DIR="$bin" limit 900 python3 scripts/lab_shop_test.py --fault delay
nothing_left_since "$before"
step "all tests passed"
