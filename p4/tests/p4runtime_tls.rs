//! P4Runtime over TLS with simple_switch_grpc's target options
//! (`--grpc-server-ssl`, `--grpc-server-cert`, `--grpc-server-key`,
//! `--grpc-server-cacert`, `--grpc-server-with-client-auth`) and
//! certificates made at test time: our client with a certificate of the CA
//! becomes primary and reads; without one, with another CA's, or in plain
//! text it gets nowhere, so nobody else can take the switch over.

use intpath_p4rt::client::{Client, ClientConfig, ClientTls, Target};
use intpath_test_support::switch::SwitchProc;
use intpath_test_support::tls::{make, Certs};
use std::time::Duration;

fn config(
    addr: &str,
    c: &Certs,
    client: Option<(&std::path::Path, &std::path::Path)>,
) -> ClientConfig {
    let mut cfg = ClientConfig::new(Target {
        name: "s1".into(),
        addr: addr.into(),
        device_id: 1,
    });
    cfg.election_id = 20;
    cfg.connect_timeout = Duration::from_secs(2);
    cfg.rpc_timeout = Duration::from_secs(5);
    cfg.tls = Some(ClientTls {
        ca_pem: std::fs::read(&c.ca).unwrap(),
        identity: client
            .map(|(cert, key)| (std::fs::read(cert).unwrap(), std::fs::read(key).unwrap())),
        domain: None,
    });
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_client_with_a_certificate_of_the_ca_reaches_the_switch() {
    let dir = intpath_test_support::tempdir().unwrap();
    let c = make(dir.path());
    let addr = intpath_test_support::free_addr();
    let _switch = SwitchProc::start_tls(1, addr.clone(), &c);

    let good = Some((c.client_cert.as_path(), c.client_key.as_path()));
    let client = Client::connect(config(&addr, &c, good)).await.unwrap();
    assert!(client.is_primary(), "{:?}", client.arbitration());
    let caps = client.capabilities().await.unwrap();
    assert!(!caps.is_empty());

    let rogue = Some((c.rogue_cert.as_path(), c.rogue_key.as_path()));
    let mut plain = config(&addr, &c, None);
    plain.tls = None;
    for (who, cfg) in [
        ("no client certificate", config(&addr, &c, None)),
        ("another CA's certificate", config(&addr, &c, rogue)),
        ("plain text", plain),
    ] {
        let mut cfg = cfg;
        cfg.election_id = 30;
        let r = Client::connect(cfg).await;
        assert!(r.is_err(), "{who}: connected");
    }
    // The good client is still primary: nobody else took over.
    assert!(client.is_primary());
}
