#!/usr/bin/env bash
# The diagnosis of the OpenTelemetry shop (apps/shop, an application we did
# not write) live in Mininet: FatTree k=4 lab, reference switches, INT
# probes, Python services on their hosts. For each seed, one run per fault:
# a congested link (egress throttled), a 5 % and a 2 % lossy link, a link delaying
# every frame 20 ms (no queue grows), a slow service (+40 ms on 30 % of
# its requests; the seed picks which), a called service's process stopped
# for 8 s (the seed picks which) and no fault.
# Prints each run's outcome as a JSON line and, at the end, the confusion
# table: per fault, the runs whose first culprit was the injected one
# (for no fault: the runs that named nobody), and how many runs named
# nobody a quarter in, before the fault, from the capture as it stood.
#
#   scripts/eval-lab-shop.sh [SEEDS]          (default 5; about 2 min a run)
#
# Needs root, Mininet, the release binaries and the shop's Python packages
# (scripts/install-deps.sh). Output under target/eval-lab-shop/.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${1:-5}"
out=target/eval-lab-shop
mkdir -p "$out"
results="$out/results.jsonl"
: >"$results"
for seed in $(seq 1 "$seeds"); do
  for run in link loss loss2 delay service freeze none; do
    case "$run" in
      loss2) fault=loss; extra=(--loss-pct 2) ;;
      *) fault="$run"; extra=() ;;
    esac
    log="$out/$run-$seed.log"
    if python3 scripts/lab_shop_test.py --fault "$fault" "${extra[@]}" --seed "$seed" --eval >"$log" 2>&1; then
      line="$(grep '^{"fault"' "$log" | tail -1)"
    else
      line="{\"fault\": \"$run\", \"seed\": $seed, \"error\": \"$(tail -1 "$log" | tr -d '"\\')\", \"right\": false}"
    fi
    # Kept, so that another build can diagnose the same runs.
    cp target/lab-shop/telemetry.db "$out/$run-$seed.db" 2>/dev/null || true
    echo "$line" | tee -a "$results"
  done
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def kind(r):
    # A run that failed is labelled by its run name (loss2), not its fault.
    pct = r.get("loss_pct", {"loss": 5, "loss2": 2}.get(r["fault"]))
    return f"loss {pct:g} %" if pct is not None else r["fault"]
print("fault     right  runs  named first when wrong")
for f in ["link", "loss 5 %", "loss 2 %", "delay", "service", "freeze", "none"]:
    rs = [r for r in rows if kind(r) == f]
    wrong = [(r.get("named") or ["nobody"])[0] if "error" not in r else "error"
             for r in rs if not r.get("right")]
    print(f"{f:<9} {sum(bool(r.get('right')) for r in rs):>5}  {len(rs):>4}  {', '.join(wrong)}")
# A quarter into each run, before its fault: the capture read while the
# services still export.
early = [r for r in rows if "named_a_quarter_in" in r]
named = [n for r in early for n in r["named_a_quarter_in"][:1]]
print(f"a quarter in, no fault yet: nobody named in {len(early) - len(named)} of {len(early)} "
      f"runs{'; named: ' + ', '.join(named) if named else ''}")
PY
