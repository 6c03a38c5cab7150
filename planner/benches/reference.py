#!/usr/bin/env python3
"""The linear Python reference the planner bench compares against.

A plain Python implementation of the `euler` plan, the way the INT-path
paper's planner is written (Python, adjacency lists, Hierholzer), but in
linear time: switch-to-switch links only, odd vertices of each component
paired by virtual edges, one Euler circuit per component, cut at the
virtual edges, trails over the hop limit cut into near-equal pieces, and
each path given as node names and egress ports, like `intpath plan`'s
output. No balancing and no host-aware ends: it does less than `balanced`.

Only `plan()` is timed, with the garbage collector off as `timeit` does;
the topology is built first, with the same names, ports and link order as
intpath's generators (core/src/topo/gen).

    python3 planner/benches/reference.py fattree:k=48 [--reps N] [--check]

prints one line: the spec, links, paths, longest path and the plan time
(best and median of N runs in ms, and the median thread CPU time). `--check` verifies the paths (every
one a walk, every link covered once, none over the limit).
"""

import argparse
import gc
import statistics
import sys
import time


def fattree(k):
    """Node names, switch count, links (a, port_a, b, port_b), hosted switches."""
    h = k // 2
    cores = h * h
    nswitch = cores + k * k
    names = [f"s{i + 1}" for i in range(nswitch)]
    links = []
    hosted = [False] * nswitch

    def agg(pod, a):
        return cores + pod * k + a

    def edge(pod, e):
        return cores + pod * k + h + e

    for pod in range(k):
        for e in range(h):
            for a in range(h):
                links.append((edge(pod, e), h + a + 1, agg(pod, a), e + 1))
        for a in range(h):
            for c in range(h):
                links.append((agg(pod, a), h + c + 1, a * h + c, pod + 1))
    for pod in range(k):
        for e in range(h):
            sw = edge(pod, e)
            hosted[sw] = True
            for p in range(h):
                names.append(f"h{len(names) - nswitch + 1}")
                links.append((len(names) - 1, 0, sw, p + 1))
    return names, nswitch, links, hosted


def leafspine(spines, leaves, hosts):
    nswitch = spines + leaves
    names = [f"s{i + 1}" for i in range(nswitch)]
    links = []
    hosted = [False] * nswitch
    for leaf in range(leaves):
        for s in range(spines):
            links.append((spines + leaf, hosts + s + 1, s, leaf + 1))
    for leaf in range(leaves):
        for p in range(hosts):
            hosted[spines + leaf] = True
            names.append(f"h{len(names) - nswitch + 1}")
            links.append((len(names) - 1, 0, spines + leaf, p + 1))
    return names, nswitch, links, hosted


def plan(names, nswitch, links, limit):
    """Paths covering every switch-to-switch link once, each at most
    `limit` links: a list of (node names, egress ports)."""
    # Edges between switches; arc 2e runs one way, 2e+1 back. Per arc:
    # the vertex it leaves, the vertex it reaches, the egress port.
    frm = []
    to = []
    port = []
    adj = [[] for _ in range(nswitch)]
    for a, pa, b, pb in links:
        if a < nswitch and b < nswitch:
            arc = len(frm)
            frm += (a, b)
            to += (b, a)
            port += (pa, pb)
            adj[a].append(arc)
            adj[b].append(arc + 1)
    real = len(frm)

    # Components, breadth first.
    comp = [-1] * nswitch
    ncomp = 0
    for s in range(nswitch):
        if comp[s] != -1 or not adj[s]:
            continue
        comp[s] = ncomp
        queue = [s]
        for v in queue:
            for arc in adj[v]:
                w = to[arc]
                if comp[w] == -1:
                    comp[w] = ncomp
                    queue.append(w)
        ncomp += 1

    # Pair the odd vertices of each component with virtual edges.
    pending = [-1] * ncomp
    first_odd = [-1] * ncomp
    for v in range(nswitch):
        if len(adj[v]) % 2 == 1:
            c = comp[v]
            if first_odd[c] == -1:
                first_odd[c] = v
            if pending[c] == -1:
                pending[c] = v
            else:
                u = pending[c]
                arc = len(frm)
                frm += (u, v)
                to += (v, u)
                port += (0, 0)
                adj[u].append(arc)
                adj[v].append(arc + 1)
                pending[c] = -1

    # One Euler circuit per component (Hierholzer), cut at virtual edges.
    used = [False] * (len(frm) // 2)
    nxt = [0] * nswitch
    start = [-1] * ncomp
    for v in range(nswitch):
        if comp[v] != -1 and start[comp[v]] == -1:
            start[comp[v]] = v
    trails = []
    for c in range(ncomp):
        s = first_odd[c] if first_odd[c] != -1 else start[c]
        stack = []
        circuit = []
        v = s
        while True:
            out = adj[v]
            i = nxt[v]
            n = len(out)
            while i < n and used[out[i] >> 1]:
                i += 1
            if i < n:
                nxt[v] = i + 1
                arc = out[i]
                used[arc >> 1] = True
                stack.append(arc)
                v = to[arc]
            else:
                nxt[v] = i
                if not stack:
                    break
                arc = stack.pop()
                circuit.append(arc)
                v = frm[arc]
        circuit.reverse()
        virtual = [i for i, arc in enumerate(circuit) if arc >= real]
        if not virtual:
            trails.append(circuit)
            continue
        f = virtual[0]
        rotated = circuit[f + 1:] + circuit[:f + 1]
        cur = []
        for arc in rotated:
            if arc >= real:
                trails.append(cur)
                cur = []
            else:
                cur.append(arc)

    # Cut at the hop limit into near-equal pieces; names and ports.
    paths = []
    for arcs in trails:
        n = len(arcs)
        if n == 0:
            continue
        pieces = -(-n // limit)
        cut = 0
        for j in range(1, pieces + 1):
            end = (j * n + pieces // 2) // pieces
            piece = arcs[cut:end]
            nodes = [names[frm[piece[0]]]]
            nodes += [names[to[arc]] for arc in piece]
            paths.append((nodes, [port[arc] for arc in piece]))
            cut = end
    return paths


def check(names, nswitch, links, paths, limit):
    where = {}
    for i, (a, pa, b, pb) in enumerate(links):
        where[(names[a], pa)] = (names[b], i)
        where[(names[b], pb)] = (names[a], i)
    seen = set()
    for nodes, ports in paths:
        assert 0 < len(ports) <= limit and len(nodes) == len(ports) + 1
        for i, p in enumerate(ports):
            peer, link = where[(nodes[i], p)]
            assert peer == nodes[i + 1], (nodes, i)
            assert link not in seen, link
            seen.add(link)
    want = {i for i, (a, _, b, _) in enumerate(links) if a < nswitch and b < nswitch}
    assert seen == want, (len(seen), len(want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-hops", type=int, default=44)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    kind, _, params = a.spec.partition(":")
    kv = dict(p.split("=") for p in params.split(",") if p)
    if kind == "fattree":
        topo = fattree(int(kv["k"]))
    elif kind == "leafspine":
        topo = leafspine(int(kv["spines"]), int(kv["leaves"]), int(kv.get("hosts", 1)))
    else:
        sys.exit(f"unknown topology {a.spec}")
    names, nswitch, links, _ = topo
    times = []
    cpu = []
    for _ in range(a.reps):
        # As timeit does: the cyclic garbage collector off while timed (it
        # walks every list the plan has built so far, again and again).
        gc.collect()
        gc.disable()
        t0, c0 = time.perf_counter(), time.thread_time()
        paths = plan(names, nswitch, links, a.max_hops)
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
        gc.enable()
    if a.check:
        check(names, nswitch, links, paths, a.max_hops)
    nlinks = sum(len(p) for _, p in paths)
    longest = max((len(p) for _, p in paths), default=0)
    print(
        f"{a.spec} links={nlinks} paths={len(paths)} longest={longest} "
        f"best_ms={min(times):.2f} median_ms={statistics.median(times):.2f} "
        f"cpu_median_ms={statistics.median(cpu):.2f}"
    )


if __name__ == "__main__":
    main()
