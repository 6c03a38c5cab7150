//! The compact multigraph the planners work on: edges in arrays, adjacency
//! in one CSR block, arcs as `edge * 2 + direction`. Built once per plan in
//! linear time; no hashing on the hot path.

use intpath_core::topo::Topology;

/// No vertex / no arc.
pub(crate) const NONE: u32 = u32::MAX;

pub(crate) struct Graph {
    /// Vertices are the topology's node indices.
    pub n: usize,
    /// `ends[e]` = the two vertices of edge `e`; arc `2e` runs
    /// `ends[e][0] -> ends[e][1]`, arc `2e + 1` the other way.
    pub ends: Vec<[u32; 2]>,
    /// Edges from `real` on are virtual (added to pair odd vertices).
    pub real: usize,
    /// Arcs leaving vertex `v`: `arcs[start[v]..start[v + 1]]`.
    pub start: Vec<u32>,
    pub arcs: Vec<u32>,
    /// `peer[i]`: the vertex `arcs[i]` leads to (saves a look-up in `ends`
    /// on the walk's hot path).
    pub peer: Vec<u32>,
}

impl Graph {
    pub fn new(n: usize, ends: Vec<[u32; 2]>, real: usize) -> Graph {
        let mut start = vec![0u32; n + 1];
        for e in &ends {
            start[e[0] as usize + 1] += 1;
            start[e[1] as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start[..n].to_vec();
        let mut arcs = vec![0u32; ends.len() * 2];
        let mut peer = vec![0u32; ends.len() * 2];
        for (e, &[a, b]) in ends.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            arcs[fill[a] as usize] = (e as u32) * 2;
            peer[fill[a] as usize] = b as u32;
            fill[a] += 1;
            arcs[fill[b] as usize] = (e as u32) * 2 + 1;
            peer[fill[b] as usize] = a as u32;
            fill[b] += 1;
        }
        Graph {
            n,
            ends,
            real,
            start,
            arcs,
            peer,
        }
    }

    /// The links a plan must cover: switch-to-switch, plus host links if asked.
    /// Returns the graph and, per edge, the ports at its two ends (arc
    /// `2e + d` leaves by `ports[e][d]`).
    pub fn from_topology(t: &Topology, include_hosts: bool) -> (Graph, Vec<[u16; 2]>) {
        let mut ends = Vec::with_capacity(t.links().len());
        let mut ports = Vec::with_capacity(t.links().len());
        for l in 0..t.links().len() {
            let [(a, pa), (b, pb)] = t.link_ends(l);
            if include_hosts || (t.is_switch(a) && t.is_switch(b)) {
                ends.push([a.0, b.0]);
                ports.push([pa, pb]);
            }
        }
        let real = ends.len();
        (Graph::new(t.node_count(), ends, real), ports)
    }

    pub fn tail(&self, arc: u32) -> u32 {
        self.ends[(arc >> 1) as usize][(arc & 1) as usize]
    }

    pub fn head(&self, arc: u32) -> u32 {
        self.ends[(arc >> 1) as usize][(arc & 1) as usize ^ 1]
    }

    pub fn degree(&self, v: usize) -> usize {
        (self.start[v + 1] - self.start[v]) as usize
    }

    pub fn out(&self, v: usize) -> &[u32] {
        &self.arcs[self.start[v] as usize..self.start[v + 1] as usize]
    }

    pub fn is_virtual(&self, arc: u32) -> bool {
        (arc >> 1) as usize >= self.real
    }

    /// Connected components over the edges: `comp[v]` is the component of
    /// `v` (`NONE` for isolated vertices), numbered from 0 in order of their
    /// lowest vertex.
    pub fn components(&self) -> (Vec<u32>, usize) {
        let mut comp = vec![NONE; self.n];
        let count = self.components_where(|_| true, &mut comp).len();
        (comp, count)
    }

    /// Connected components over the edges `keep` accepts, labelled in
    /// `comp` as [`Graph::components`] does; returns each one's vertices in
    /// breadth-first order from its lowest.
    pub fn components_where(
        &self,
        keep: impl Fn(usize) -> bool,
        comp: &mut [u32],
    ) -> Vec<Vec<u32>> {
        comp.fill(NONE);
        let mut members: Vec<Vec<u32>> = Vec::new();
        for s in 0..self.n {
            if comp[s] != NONE || !self.out(s).iter().any(|&a| keep((a >> 1) as usize)) {
                continue;
            }
            let id = members.len() as u32;
            let mut list = vec![s as u32];
            comp[s] = id;
            let mut i = 0;
            while i < list.len() {
                let v = list[i] as usize;
                i += 1;
                for &a in self.out(v) {
                    let w = self.head(a) as usize;
                    if keep((a >> 1) as usize) && comp[w] == NONE {
                        comp[w] = id;
                        list.push(w as u32);
                    }
                }
            }
            members.push(list);
        }
        members
    }

    /// The next arc out of `v` whose unit (an edge, or with `directed` an
    /// arc) is unused, now marked used. `next[v]` is the cursor into `v`'s
    /// arcs; it only moves forward, so a whole traversal is linear.
    pub fn take_unused(
        &self,
        v: u32,
        directed: bool,
        used: &mut [bool],
        next: &mut [u32],
    ) -> Option<u32> {
        let end = self.start[v as usize + 1];
        while next[v as usize] < end {
            let a = self.arcs[next[v as usize] as usize];
            next[v as usize] += 1;
            let unit = if directed { a } else { a >> 1 } as usize;
            if !used[unit] {
                used[unit] = true;
                return Some(a);
            }
        }
        None
    }

    /// [`Graph::take_unused`], with the vertex the arc leads to.
    pub fn take_unused_to(
        &self,
        v: u32,
        directed: bool,
        used: &mut [bool],
        next: &mut [u32],
    ) -> Option<(u32, u32)> {
        let end = self.start[v as usize + 1];
        let mut i = next[v as usize];
        while i < end {
            let a = self.arcs[i as usize];
            i += 1;
            let unit = if directed { a } else { a >> 1 } as usize;
            if !used[unit] {
                used[unit] = true;
                next[v as usize] = i;
                return Some((a, self.peer[i as usize - 1]));
            }
        }
        next[v as usize] = i;
        None
    }

    /// Vertices of `trail` (a sequence of arcs): its `len + 1` stops.
    pub fn stops(&self, trail: &[u32], out: &mut Vec<u32>) {
        out.clear();
        if let Some(&first) = trail.first() {
            out.push(self.tail(first));
            out.extend(trail.iter().map(|&a| self.head(a)));
        }
    }
}

/// Walks a closed trail (or, from an odd vertex of a graph with two, an open
/// one) through every unused unit reachable from `from`, Hierholzer style,
/// and appends its arcs to `out` in travel order. A unit is an edge, or
/// with `directed` an arc (each link is then walked both ways).
/// `next[v]` is the cursor into `v`'s arcs; it only moves forward, so the
/// whole run over a graph is linear.
pub(crate) fn walk(
    g: &Graph,
    from: u32,
    directed: bool,
    used: &mut [bool],
    next: &mut [u32],
    out: &mut Vec<u32>,
) {
    let base = out.len();
    // Arcs taken, each with the vertex it left.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut v = from;
    loop {
        if let Some((found, to)) = g.take_unused_to(v, directed, used, next) {
            stack.push((found, v));
            v = to;
        } else if let Some((a, tail)) = stack.pop() {
            out.push(a);
            v = tail;
        } else {
            break;
        }
    }
    out[base..].reverse();
}
