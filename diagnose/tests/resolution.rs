//! Paths resolved for RPCs follow, hop by hop, the host routes `intpath
//! deploy` installs on a real topology.

use intpath_core::routes::Routes;
use intpath_core::topo::Topology;
use intpath_diagnose::path::{LinkIndex, Resolver};

#[test]
fn every_hop_of_every_host_pair_takes_the_deployed_route() {
    for spec in ["fattree:k=4", "leafspine:spines=2,leaves=4,hosts=2"] {
        let topo = Topology::load(spec).unwrap();
        let routes = Routes::shortest(&topo);
        let index = LinkIndex::new(&topo);
        let mut res = Resolver::new(&topo);
        let n = topo.hosts().len() as u16;
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let p = res.path(&index, a, b).unwrap().clone();
                let (src, dst) = (&topo.hosts()[a as usize], &topo.hosts()[b as usize]);
                for (links, from, to) in [(&p.forward, src, dst), (&p.reverse, dst, src)] {
                    let first = &index.links[links[0] as usize];
                    let last = &index.links[*links.last().unwrap() as usize];
                    assert_eq!(
                        (first.src.as_str(), last.dst.as_str()),
                        (from.name.as_str(), to.name.as_str())
                    );
                    for w in links.windows(2) {
                        assert_eq!(
                            index.links[w[0] as usize].dst,
                            index.links[w[1] as usize].src
                        );
                    }
                    for &l in &links[1..] {
                        let l = &index.links[l as usize];
                        let sw = topo.node(&l.src).unwrap();
                        // The entry deploy writes on this switch for `to`.
                        assert_eq!(
                            routes.next_port(&topo, sw, to),
                            Some(l.src_port),
                            "{spec}: {l}"
                        );
                    }
                    assert!(
                        index.host_link[links[0] as usize]
                            && index.host_link[*links.last().unwrap() as usize]
                    );
                }
            }
        }
    }
}
