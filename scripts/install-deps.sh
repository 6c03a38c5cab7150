#!/usr/bin/env bash
# Installs what intpath needs on a fresh Debian machine, from the package
# registries only. Safe to run again: it skips what is present.
#
#   scripts/install-deps.sh demo   what `intpath demo` runs on: Mininet,
#                                  iproute2 (ip, tc), ethtool, the heatmaps' font
#   scripts/install-deps.sh        (or `test`) everything the tests use too
set -euo pipefail
purpose="${1:-test}"

# Mininet, ip and tc (iproute2), ethtool (the launcher turns offloads off)
# and the font the heatmaps are drawn with.
apt_pkgs=(mininet iproute2 ethtool fonts-dejavu-core)
# For the tests: tcpdump (captures in the root-only tests); postgresql: the
# server the PostgreSQL store is tested and benchmarked on
# (scripts/pg-test-server.sh starts our own, on loopback); prometheus: the
# real scraper of the collector's /metrics; groff-base: renders the
# generated man pages in cli/tests/docs_cli.rs; chromium: the headless
# browser the web view's page is tested in (web/tests/browser.rs).
case "$purpose" in
  demo) ;;
  test) apt_pkgs+=(tcpdump prometheus postgresql groff-base chromium) ;;
  *)
    echo "usage: $0 [demo|test]" >&2
    exit 2
    ;;
esac

# On a fresh machine unattended-upgrades (or another apt) often holds the
# apt/dpkg locks, and apt-get then fails at once (exit 100). Wait for them
# instead, up to 10 minutes, saying so once. lslocks sees the locks without
# taking them; apt-get's own lock timeout covers a lock taken in between.
apt_locks="/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock"
lock_wait_s=600
apt_lock_holder() {
  lslocks --noheadings --notruncate --output PID,PATH 2>/dev/null |
    awk -v locks="$apt_locks" 'BEGIN { split(locks, l, " "); for (i in l) held[l[i]] = 1 }
      $2 in held { print $1; exit }'
}
apt_get() {
  local deadline=$((SECONDS + lock_wait_s)) holder said=""
  while holder="$(apt_lock_holder)" && [ -n "$holder" ]; do
    if [ -z "$said" ]; then
      echo "==> waiting for $(ps -o comm= -p "$holder" || echo "process") (pid $holder) to release the apt/dpkg lock (up to $((lock_wait_s / 60)) minutes)"
      said=1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the apt/dpkg lock is still held by pid $holder after $((lock_wait_s / 60)) minutes; giving up" >&2
      return 1
    fi
    sleep 2
  done
  apt-get -o DPkg::Lock::Timeout="$lock_wait_s" "$@"
}

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_get update -qq
  apt_get install -y -qq "${missing[@]}" >/dev/null
fi

# Python packages only the tests use.
[ "$purpose" = test ] || exit 0

# The official P4Runtime Python bindings and grpcio (gRPC C-core), used to
# check our .proto definitions against the real ones and to run a P4Runtime
# server on C-core for the client's tests (p4rt/tests/ccore_server.rs).
# The official OpenTelemetry Python SDK and its OTLP/HTTP and OTLP/gRPC
# exporters: clients we did not write for the collector's OTLP receiver
# (collector/tests/otel). Flask, requests, psycopg (with its libpq wheel)
# and their official OpenTelemetry instrumentations: the shop application
# (apps/shop; psycopg for its PostgreSQL database); gunicorn serves the
# workers app (apps/workers) from worker processes; the gRPC
# instrumentation traces the orders app (apps/orders).
# (Asked of pip, not `import p4`: run from the repository root, that import
# finds our own p4/ directory.)
pip_pkgs=(p4runtime grpcio opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
  opentelemetry-exporter-otlp-proto-grpc flask requests opentelemetry-instrumentation-flask
  opentelemetry-instrumentation-requests psycopg psycopg-binary
  opentelemetry-instrumentation-psycopg gunicorn opentelemetry-instrumentation-grpc)
missing=()
for pkg in "${pip_pkgs[@]}"; do
  python3 -m pip show -q "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
# All of them in one resolution, not only the missing ones: each
# instrumentation release pins the exact opentelemetry-api and
# semantic-conventions versions, so the SDK must be chosen together with it
# (0.66b1 takes SDK 1.45.1), or pip leaves a mismatched pair behind.
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> pip install ${missing[*]}"
  python3 -m pip install -q "${pip_pkgs[@]}"
fi
