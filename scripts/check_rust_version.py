#!/usr/bin/env python3
"""Keeps the workspace's `rust-version` the real minimum toolchain.

Fails when a workspace crate does not declare the workspace's `rust-version`
(cargo would then build that crate with any toolchain and clippy would not
check its std calls against it), or when a locked dependency declares a newer
one (the workspace could not build with the toolchain it names). The code's own
needs are checked by clippy's `incompatible_msrv` lint, which flags std APIs
newer than `rust-version` (scripts/test.sh runs clippy with -D warnings).

Usage: scripts/check_rust_version.py (from anywhere in the repository).
"""

import json
import subprocess
import sys


def version(text):
    """`1.87` and `1.87.0` alike, as a comparable (major, minor, patch)."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True, capture_output=True, text=True).stdout)
    members = set(meta["workspace_members"])
    ours = {p["name"]: p.get("rust_version") for p in meta["packages"] if p["id"] in members}
    declared = set(ours.values())
    if None in declared or len(declared) != 1:
        missing = sorted(n for n, v in ours.items() if v is None)
        print(f"workspace crates disagree on rust-version: {sorted(map(str, declared))}"
              + (f"; none declared by {', '.join(missing)} "
                 "(add `rust-version.workspace = true`)" if missing else ""))
        return 1
    (workspace,) = declared
    newer = sorted((version(p["rust_version"]), p["rust_version"], p["name"], p["version"])
                   for p in meta["packages"]
                   if p["id"] not in members and p.get("rust_version")
                   and version(p["rust_version"]) > version(workspace))
    if newer:
        need = newer[-1][1]
        names = ", ".join(f"{n} {v} ({r})" for _, r, n, v in newer)
        print(f"rust-version {workspace} is too low: locked dependencies need {need}: {names}")
        return 1
    print(f"rust-version {workspace}: every workspace crate declares it, "
          f"no locked dependency needs more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
