#!/usr/bin/env bash
# The diagnosis on the shop (apps/shop), an application we did not write,
# on loopback with no INT and no host map: for each seed, one run with a
# service slowed by +40 ms on 30 % of its requests from halfway (the
# service rotating over the shop's eight) and one run with no fault. Each
# run's spans go to a fresh `intpath-collector receive`; `intpath diagnose
# culprits --db DB --format json` judges them. Prints one line per run and
# the totals: a fault is found when its service is named first; a run
# with no fault is right when nobody is named.
#
# With SHOP_DB set to a PostgreSQL URL (scripts/pg-test-server.sh start
# prints one), inventory reads its stock from that database in every run,
# and each seed also runs with the database's queries slowed the same way
# (found when the database is named first: `dependency postgresql@…`) and
# with the job worker `activity` slowed the same way (found when it is
# named first: nobody waits on its jobs, so no client span times it).
#
#   scripts/eval-shop.sh [SEEDS] [DURATION_S] [RATE] [FIRST_SEED]
#                                            (defaults: 10 30 15 1)
#
# With APP=orders the same runs judge the orders app (apps/orders: six gRPC
# services, the slowed one rotating over them) instead; SHOP_DB is the
# shop's alone. SLOW=MS:SHARE sets the slowing (default 40:0.3).
#
# Needs the release binaries (cargo build --release --bins) and the shop's
# Python packages (scripts/install-deps.sh). Output under target/eval-shop/.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${1:-10}" duration="${2:-30}" rate="${3:-15}" first="${4:-1}"
bin="${INTPATH_BIN_DIR:-target/release}"
python="${PYTHON:-python3}"
app="${APP:-shop}"
case "$app" in
  shop) services=(inventory pricing catalog reviews auth cart recommend frontend) ;;
  orders) services=(ledger stock payments users orders gateway)
    [ -z "${SHOP_DB:-}" ] || { echo "SHOP_DB is the shop's alone" >&2; exit 2; } ;;
  *) echo "APP must be shop or orders, not $app" >&2; exit 2 ;;
esac
slow="${SLOW:-40:0.3}"
out="target/eval-$app"
mkdir -p "$out"

# One run: SEED, FAULT ("none" or SERVICE:MS:SHARE:AFTER), DIR. Prints the
# culprits' names, in order, comma-separated ("-" for none).
one() {
  local seed="$1" fault="$2" dir="$3" port recv
  rm -rf "$dir" && mkdir -p "$dir"
  port="$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$bin/intpath-collector" receive --db "$dir/t.db" --otlp-listen "127.0.0.1:$port" \
    >"$dir/receive.json" 2>"$dir/receive.log" &
  recv=$!
  local args=(run-local --duration "$duration" --rate "$rate" --seed "$seed" --otlp "http://127.0.0.1:$port")
  [ "$fault" = none ] || args+=(--fault "$fault")
  [ -z "${SHOP_DB:-}" ] || args+=(--db "$SHOP_DB")
  if ! "$python" "apps/$app/$app.py" "${args[@]}" >"$dir/app.json" 2>"$dir/app.log"; then
    kill "$recv"; wait "$recv" || true
    echo "$app failed: $(tail -1 "$dir/app.log")" >&2; return 1
  fi
  kill -TERM "$recv"; wait "$recv"
  "$bin/intpath" diagnose culprits --db "$dir/t.db" --format json >"$dir/culprits.json" 2>"$dir/diagnose.log"
  "$python" -c 'import json,sys; c=json.load(open(sys.argv[1]))["culprits"]; print(",".join(x["kind"]+":"+x["name"] for x in c) or "-")' "$dir/culprits.json"
}

found=0 quiet=0 db_found=0 worker_found=0
for seed in $(seq "$first" $((first + seeds - 1))); do
  svc="${services[$(((seed - 1) % ${#services[@]}))]}"
  named="$(one "$seed" "$svc:$slow:$((duration / 2))" "$out/fault-$seed")"
  first="${named%%,*}"
  [ "$first" = "service:$svc" ] && found=$((found + 1))
  echo "seed $seed  fault service:$svc  named: $named"
  if [ -n "${SHOP_DB:-}" ]; then
    named="$(one "$seed" "database:$slow:$((duration / 2))" "$out/database-$seed")"
    case "${named%%,*}" in dependency:postgresql@*) db_found=$((db_found + 1)) ;; esac
    echo "seed $seed  fault database       named: $named"
    named="$(one "$seed" "activity:$slow:$((duration / 2))" "$out/worker-$seed")"
    [ "${named%%,*}" = "service:activity" ] && worker_found=$((worker_found + 1))
    echo "seed $seed  fault worker         named: $named"
  fi
  named="$(one "$seed" none "$out/none-$seed")"
  [ "$named" = "-" ] && quiet=$((quiet + 1))
  echo "seed $seed  no fault              named: $named"
done
db=""
[ -z "${SHOP_DB:-}" ] || db="; slow database named first: $db_found of $seeds; slow worker: $worker_found of $seeds"
echo "slow service named first: $found of $seeds$db; no fault, nobody named: $quiet of $seeds"
