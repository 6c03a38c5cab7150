//! Table entries per second written into one reference switch over real
//! gRPC, by batch size and operation.
//!
//! Builds the release switch binary itself (test-support):
//!   cargo bench -p intpath-p4rt --bench write_rate
//! Each round inserts 1000 `ipv4_lpm` and 1000 `generator` entries (the
//! tables hold 1024), modifies them all, then deletes them all.

use intpath_p4rt::client::{self, Client, ClientConfig, Target};
use intpath_p4rt::p4info::{Match, P4InfoIndex};
use intpath_p4rt::proto::p4::v1::{self as p4, update::Type};
use std::time::Instant;

use intpath_test_support::{free_addr, switch::SwitchProc};

const PER_TABLE: u16 = 1000;
const ROUNDS: usize = 5;

fn entries(ix: &P4InfoIndex, port: u8) -> Vec<p4::TableEntry> {
    let mut labels = [0u8; 90];
    labels[1] = port;
    (0..PER_TABLE)
        .flat_map(|i| {
            let [hi, lo] = i.to_be_bytes();
            let route = ix
                .table_entry(
                    "SrIntIngress.ipv4_lpm",
                    &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 1, hi, lo], 32))],
                    "SrIntIngress.ipv4_forward",
                    &[
                        ("dst_mac", &[0, 0, 10, 1, hi, lo][..]),
                        ("port", &[port][..]),
                    ],
                )
                .expect("route entry");
            let generator = ix
                .table_entry(
                    "SrIntIngress.generator",
                    &[("hdr.sr.path_id", Match::Exact(vec![hi, lo]))],
                    "SrIntIngress.push_route",
                    &[("num_labels", &[1][..]), ("labels", &labels[..])],
                )
                .expect("generator entry");
            [route, generator]
        })
        .collect()
}

fn updates(kind: Type, entries: &[p4::TableEntry]) -> Vec<p4::Update> {
    entries
        .iter()
        .map(|e| client::update(kind, p4::entity::Entity::TableEntry(e.clone())))
        .collect()
}

#[tokio::main]
async fn main() {
    let switch = SwitchProc::start(1, free_addr());
    let addr = switch.addr.as_str();
    let ix = std::sync::Arc::new(intpath_sr_int::p4info().expect("built-in P4Info"));
    let first = entries(&ix, 1);
    let second = entries(&ix, 2);

    println!(
        "batch  op      entries/s (median of {ROUNDS} rounds of {})",
        first.len()
    );
    for batch in [1usize, 10, 100, 1000] {
        let mut config = ClientConfig::new(Target {
            name: "bench".into(),
            addr: addr.into(),
            device_id: 1,
        });
        config.batch_size = batch;
        let mut c = Client::connect(config).await.expect("connect");
        c.use_p4info(ix.clone());
        let mut rates: [Vec<f64>; 3] = Default::default();
        for _ in 0..ROUNDS {
            for (i, ups) in [
                updates(Type::Insert, &first),
                updates(Type::Modify, &second),
                updates(Type::Delete, &second),
            ]
            .into_iter()
            .enumerate()
            {
                let n = ups.len() as f64;
                let t = Instant::now();
                c.write(ups).await.expect("write");
                rates[i].push(n / t.elapsed().as_secs_f64());
            }
        }
        for (op, mut r) in ["insert", "modify", "delete"].into_iter().zip(rates) {
            r.sort_by(f64::total_cmp);
            println!("{batch:>5}  {op:<6}  {:>10.0}", r[r.len() / 2]);
        }
    }

    // Read-back and a no-op sync of the whole 2000-entry state.
    let mut c = Client::connect(ClientConfig::new(Target {
        name: "bench".into(),
        addr: addr.into(),
        device_id: 1,
    }))
    .await
    .expect("connect");
    c.use_p4info(ix.clone());
    c.sync(&first, &[]).await.expect("sync");
    let t = Instant::now();
    let plan = c.sync(&first, &[]).await.expect("sync");
    assert!(plan.is_noop());
    println!(
        "no-op sync of {} entries (read + diff): {:.1} ms",
        first.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}
