//! Whole-run link counts from the switches' port counters, on SQLite and
//! PostgreSQL: the readings of a link's two ends telescope, a restarted
//! switch's interval is left out, and a link read at one end only has no
//! count.

use intpath_store::counters::{link_counts, LinkCount, PortReading};
use intpath_store::{samples, Store};
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::{line4, lossy_db, BASE_NS};

on_both_backends!(link_counts_telescope_over_the_run);

async fn link_counts_telescope_over_the_run(db: String) {
    let db = lossy_db(db).await;
    let store = Store::open(&db).await.unwrap();
    let run = samples::runs(&store).await.unwrap().remove(0);
    let reading = |switch: &str, port, rx, tx| PortReading {
        switch: switch.into(),
        port,
        rx,
        tx,
    };
    // Four rounds, a second apart. s1:2->s2 loses nothing, but s2 was read
    // a moment after s1 while packets flowed; s2:2->s3 loses 5 %; s2
    // restarted before the third round (its counters from zero again);
    // s4 was never read, so s3:2->s4 has one end only.
    let rounds = [
        // (s1 tx on 2, s2 rx on 1, s2 tx on 2, s3 rx on 1, s2 tx on 1, s1 rx on 2)
        (0, 0, 0, 0, 0, 0),
        (1000, 1010, 1000, 950, 500, 500),
        (2000, 1990, 2000, 1900, 100, 100),
        (3000, 3000, 3000, 2850, 600, 590),
    ];
    for (i, &(s1_tx, s2_rx, s2_tx, s3_rx, s2_back, s1_rx)) in rounds.iter().enumerate() {
        let round = [
            reading("s1", 2, s1_rx, s1_tx),
            reading("s2", 1, s2_rx, s2_back),
            reading("s2", 2, 0, s2_tx),
            reading("s3", 1, s3_rx, 0),
            reading("s3", 2, 0, 4000),
        ];
        let t = BASE_NS as i64 + i as i64 * 1_000_000_000;
        store.write_port_counters(run.id, t, &round).await.unwrap();
    }
    let counts = link_counts(&store, run.id, &run.links).await.unwrap();
    let links = line4();
    let count = |from: &str, port| counts[links.egress_link(from, port).unwrap() as usize];
    let some = |sent, lost| Some(LinkCount { sent, lost });
    assert_eq!(count("s1", 2), some(3000, 0));
    assert_eq!(count("s2", 2), some(3000, 150));
    assert_eq!(count("s2", 2).unwrap().rate(), 0.05);
    // 0 → 500 sent, all received; the restart's interval left out; 100 →
    // 600 sent, 490 received.
    assert_eq!(count("s2", 1), some(1000, 10));
    assert_eq!(count("s3", 2), None);
    // Read at both ends, and nothing sent that way.
    assert_eq!(count("s3", 1), some(0, 0));
    store.close().await;
}
