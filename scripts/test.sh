#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every test,
# including the ones that need root for network namespaces and veth pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "==> cargo test"
cargo test --workspace --locked
