#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test,
# including the ones that need root for network namespaces and veth pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "==> cargo test"
cargo test --workspace --locked
echo "==> P4 vectors up to date, and they translate into P4Runtime messages"
python3 p4/tests/make_vectors.py --check
python3 p4/tests/replay_bmv2.py --dry-run
