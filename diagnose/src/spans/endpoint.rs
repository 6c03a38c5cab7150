//! Where a span was recorded and whom it talked to, from the attributes the
//! OpenTelemetry semantic conventions define (current and older names) and
//! from Jaeger's and Zipkin's own fields.
//!
//! An SDK's default resource names no host at all, a host detector's
//! `host.name` is the machine's name (the same for every Mininet host), and
//! `host.ip` is a string array. What the HTTP and gRPC instrumentations do
//! set on every span are the socket addresses of both ends: a client span
//! names the server it called, a server span the client that called it.
//! So an RPC's two hosts are placed from whichever side says where it is.

use std::net::IpAddr;

/// What a span says about the two ends of its RPC. Addresses are kept only
/// when they are literal IPs: a DNS name says nothing about which host of
/// a topology answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// The recording process's own addresses, most specific first.
    pub ips: Vec<IpAddr>,
    /// Its host name (`host.name`, Jaeger's `hostname`).
    pub hostname: Option<String>,
    /// The other end: the server a client span called, the client a
    /// server span answered.
    pub peer: Option<IpAddr>,
    /// What a client span called, by name ([`peer_name`]): for a callee
    /// that records no spans of its own, the only name it has.
    pub peer_name: Option<String>,
    /// The process that recorded it ([`INSTANCE_KEYS`], else its pid on
    /// its host): replicas of one service are told apart by it.
    pub instance: Option<String>,
    /// The thread that started it (`thread.id` and `thread.name`, as
    /// `id/name` when both are given): where a service keeps a request on
    /// the thread that took it, the calls made on that thread are that
    /// request's. Python reuses a finished thread's id for a new thread,
    /// whose name differs (`Thread-7`, `call_2`).
    pub thread: Option<String>,
}

/// Resource attributes holding the recording host's addresses: `host.ip`
/// (a string array in the conventions, a plain string in some exporters),
/// a Kubernetes pod's address, the deprecated `net.host.ip`, and
/// `host.address`, which earlier intpath workloads set.
pub const RESOURCE_IP_KEYS: [&str; 4] = ["host.ip", "k8s.pod.ip", "net.host.ip", "host.address"];

/// Resource attribute naming the host.
pub const HOSTNAME_KEY: &str = "host.name";

/// Resource attributes naming the recording process uniquely: the
/// conventions' `service.instance.id` (the Python SDK sets one per
/// process), Jaeger clients' `client-uuid`.
const INSTANCE_KEYS: [&str; 2] = ["service.instance.id", "client-uuid"];
/// Resource attribute with the process id, unique on its host only.
const PID_KEY: &str = "process.pid";
/// Span attributes naming the thread that started the span (the Java
/// agent records both on every span); together they tell apart two
/// threads that held one id in turn.
const THREAD_KEYS: [&str; 2] = ["thread.id", "thread.name"];

/// Span attributes holding the recording process's own socket address.
/// On a server span `server.address` is the address it was reached at; the
/// older HTTP server conventions (the Python instrumentations' default)
/// give it only as the request's `Host` (`http.host`, `http.server_name`)
/// and in `http.url`.
const LOCAL_KEYS: [&str; 3] = ["network.local.address", "net.sock.host.addr", "net.host.ip"];
const SERVER_LOCAL_KEYS: [&str; 4] = [
    "server.address",
    "net.host.name",
    "http.host",
    "http.server_name",
];

/// Span attributes naming the other end, the socket peer first (it is
/// what the packets were addressed to), then the logical address.
const CLIENT_PEER_KEYS: [&str; 6] = [
    "network.peer.address",
    "net.sock.peer.addr",
    "server.address",
    "net.peer.ip",
    "net.peer.name",
    "server.socket.address",
];
const SERVER_PEER_KEYS: [&str; 6] = [
    "network.peer.address",
    "net.sock.peer.addr",
    "client.address",
    "net.peer.ip",
    "client.socket.address",
    "http.client_ip",
];

/// Span attributes a client span names its callee by, in the conventions'
/// order of precedence: the name its caller gave it, the kind of system it
/// is, where it was reached.
const PEER_SERVICE_KEYS: [&str; 2] = ["peer.service", "service.peer.name"];
const PEER_SYSTEM_KEYS: [&str; 3] = ["db.system.name", "db.system", "messaging.system"];
const PEER_ADDRESS_KEYS: [&str; 3] = ["server.address", "net.peer.name", "network.peer.address"];
const PEER_PORT_KEYS: [&str; 2] = ["server.port", "net.peer.port"];
/// The remote API an RPC client span called (`shop.Pricing`): the only
/// name Python's gRPC instrumentation gives a callee, with no address.
const RPC_SERVICE_KEY: &str = "rpc.service";
/// The URL of an HTTP request: where the older HTTP conventions (still
/// the Python and Java instrumentations' default) name the server, on the
/// client's span and on the server's.
const URL_KEYS: [&str; 2] = ["url.full", "http.url"];

/// A client span's callee by name: `peer.service` as its caller set it
/// (`mysql`), else the system and where it was reached
/// (`postgresql@db:5432`), else where alone (`api.example.com:443`). A
/// database, a cache or another company's API records no spans of ours,
/// and this name is how it is told apart from its caller's own work.
fn peer_name(span: &impl Fn(&str) -> Vec<String>) -> Option<String> {
    let first = |keys: &[&str]| first(span, keys);
    if let Some(name) = first(&PEER_SERVICE_KEYS) {
        return Some(name);
    }
    let at = (first(&PEER_ADDRESS_KEYS).map(|a| with_port(a, first(&PEER_PORT_KEYS))))
        .or_else(|| first(&URL_KEYS).as_deref().and_then(authority));
    match (first(&PEER_SYSTEM_KEYS), at) {
        (Some(system), Some(at)) => Some(format!("{system}@{at}")),
        (None, None) => first(&[RPC_SERVICE_KEY]),
        (system, at) => system.or(at),
    }
}

/// The `host[:port]` of a URL, without user information
/// (`https://u@api.example.com:8443/v1?q` gives `api.example.com:8443`);
/// `None` for text that is no absolute URL.
fn authority(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end]
        .rsplit_once('@')
        .map_or(&rest[..end], |(_, h)| h);
    (!host.is_empty()).then(|| host.to_owned())
}

/// `host:port` from an address and the port a separate attribute gives,
/// unless the address has one already (an IPv6 address in brackets).
fn with_port(address: String, port: Option<String>) -> String {
    match (address.parse::<IpAddr>(), port) {
        (Ok(IpAddr::V6(ip)), Some(port)) => format!("[{ip}]:{port}"),
        (_, Some(port)) if !address.contains(':') => format!("{address}:{port}"),
        _ => address,
    }
}

/// The first non-blank value of the first of `keys` that has one.
fn first(attrs: &impl Fn(&str) -> Vec<String>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| value(attrs, k))
}

/// The attribute's first non-blank value.
fn value(attrs: &impl Fn(&str) -> Vec<String>, key: &str) -> Option<String> {
    attrs(key).into_iter().find(|v| !v.trim().is_empty())
}

/// `thread.id/thread.name`, or whichever of them the span has.
fn thread(span: &impl Fn(&str) -> Vec<String>) -> Option<String> {
    let parts: Vec<String> = THREAD_KEYS.iter().filter_map(|k| value(span, k)).collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Every attribute key [`Endpoint::read`] looks at, for error messages.
pub fn keys_looked_for() -> String {
    let mut keys: Vec<&str> = RESOURCE_IP_KEYS
        .iter()
        .chain(&[HOSTNAME_KEY])
        .chain(&LOCAL_KEYS)
        .chain(&SERVER_LOCAL_KEYS)
        .chain(&CLIENT_PEER_KEYS)
        .chain(&SERVER_PEER_KEYS)
        .chain(&URL_KEYS)
        .copied()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.join(", ")
}

/// Which side of an RPC the span records, as far as addresses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
    Other,
}

impl Endpoint {
    /// Reads an endpoint through `resource(key)` and `span(key)`, each
    /// returning the attribute's string values (one for a string, all of an
    /// array's).
    pub fn read(
        side: Side,
        resource: impl Fn(&str) -> Vec<String>,
        span: impl Fn(&str) -> Vec<String>,
    ) -> Endpoint {
        let mut ips: Vec<IpAddr> = Vec::new();
        let mut add = |values: Vec<String>| {
            for ip in values.iter().filter_map(|v| parse_ip(v)) {
                if !ips.contains(&ip) {
                    ips.push(ip);
                }
            }
        };
        RESOURCE_IP_KEYS.iter().for_each(|k| add(resource(k)));
        LOCAL_KEYS.iter().for_each(|k| add(span(k)));
        let url_ip = || {
            URL_KEYS.iter().find_map(|k| {
                span(k)
                    .iter()
                    .find_map(|u| authority(u).as_deref().and_then(parse_ip))
            })
        };
        if side == Side::Server {
            SERVER_LOCAL_KEYS.iter().for_each(|k| add(span(k)));
            if let Some(ip) = url_ip() {
                add(vec![ip.to_string()]);
            }
        }
        let peer_keys: &[&str] = match side {
            Side::Client => &CLIENT_PEER_KEYS,
            Side::Server => &SERVER_PEER_KEYS,
            Side::Other => &[],
        };
        let peer = peer_keys
            .iter()
            .find_map(|k| span(k).iter().find_map(|v| parse_ip(v)))
            .or_else(|| (side == Side::Client).then(url_ip).flatten());
        let hostname = resource(HOSTNAME_KEY).into_iter().next();
        // A pid names a process on its host: the host as the resource
        // gives it, the same on every span the process records.
        let instance = first(&resource, &INSTANCE_KEYS).or_else(|| {
            let pid = value(&resource, PID_KEY)?;
            let host = first(&resource, &RESOURCE_IP_KEYS).or(hostname.clone());
            Some(format!("pid {pid} on {}", host.unwrap_or_default()))
        });
        Endpoint {
            peer_name: (side == Side::Client).then(|| peer_name(&span)).flatten(),
            thread: thread(&span),
            instance,
            ips,
            hostname,
            peer,
        }
    }
}

/// The values of an attribute that reached us as one text tag. Formats
/// without arrays (Jaeger's and Zipkin's tags) get an array such as
/// `host.ip` as a JSON list (`["10.0.0.5","fe80::1"]`, as the conventions'
/// mapping to non-OTLP formats asks, and Jaeger's OTLP receiver does) or
/// joined by commas (the JavaScript Zipkin exporter); anything else is one
/// value.
pub fn listed(text: &str) -> Vec<String> {
    if let Ok(values) = serde_json::from_str::<Vec<String>>(text) {
        return values;
    }
    text.split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A literal IP address, also in `[v6]` brackets or with a `:port`.
pub fn parse_ip(text: &str) -> Option<IpAddr> {
    let t = text.trim();
    if let Ok(ip) = t.parse() {
        return Some(ip);
    }
    if let Ok(sock) = t.parse::<std::net::SocketAddr>() {
        return Some(sock.ip());
    }
    t.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|r| r.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn attrs(pairs: &[(&str, &[&str])]) -> impl Fn(&str) -> Vec<String> {
        let m: HashMap<String, Vec<String>> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
        move |k: &str| m.get(k).cloned().unwrap_or_default()
    }

    #[test]
    fn host_ip_arrays_and_socket_peers_are_read_and_names_are_not_addresses() {
        let e = Endpoint::read(
            Side::Client,
            attrs(&[
                ("host.ip", &["fe80::1", "10.0.0.3"]),
                ("host.name", &["debian"]),
            ]),
            attrs(&[
                ("server.address", &["catalog.local"]),
                ("net.peer.ip", &["10.0.0.9"]),
            ]),
        );
        assert_eq!(
            e.ips,
            vec![
                "fe80::1".parse::<IpAddr>().unwrap(),
                "10.0.0.3".parse().unwrap()
            ]
        );
        assert_eq!(e.hostname.as_deref(), Some("debian"));
        assert_eq!(e.peer, Some("10.0.0.9".parse().unwrap()));
    }

    #[test]
    fn an_array_flattened_into_one_tag_is_read_back() {
        let ips = |t: &str| listed(t).iter().filter_map(|v| parse_ip(v)).count();
        assert_eq!(listed(r#"["10.0.0.5","fe80::1"]"#), ["10.0.0.5", "fe80::1"]);
        assert_eq!(listed("10.0.0.5,fe80::1"), ["10.0.0.5", "fe80::1"]);
        assert_eq!(ips("[::1]"), 1);
        assert_eq!(listed("h5"), ["h5"]);
        assert!(listed("").is_empty());
    }

    #[test]
    fn a_server_span_names_its_client_and_its_own_address() {
        let e = Endpoint::read(
            Side::Server,
            attrs(&[]),
            attrs(&[
                ("client.address", &["10.0.0.1"]),
                ("server.address", &["10.0.0.5:8080"]),
            ]),
        );
        assert_eq!(e.ips, vec!["10.0.0.5".parse::<IpAddr>().unwrap()]);
        assert_eq!(e.peer, Some("10.0.0.1".parse().unwrap()));
        // A client span's own server.address is its peer, not itself.
        let c = Endpoint::read(
            Side::Client,
            attrs(&[]),
            attrs(&[("server.address", &["[::1]"])]),
        );
        assert!(c.ips.is_empty());
        assert_eq!(c.peer, Some("::1".parse().unwrap()));
    }

    #[test]
    fn the_older_http_conventions_place_both_ends_by_host_header_and_url() {
        // Python's ASGI and httpx instrumentations without
        // OTEL_SEMCONV_STABILITY_OPT_IN: the server names itself only in
        // the Host header and the URL, the client its server only in the URL.
        let server = Endpoint::read(
            Side::Server,
            attrs(&[]),
            attrs(&[
                ("http.host", &["10.0.1.4:24403"]),
                ("http.server_name", &["10.0.1.4:24403"]),
                ("net.peer.ip", &["10.0.1.2"]),
            ]),
        );
        assert_eq!(server.ips, vec!["10.0.1.4".parse::<IpAddr>().unwrap()]);
        assert_eq!(server.peer, Some("10.0.1.2".parse().unwrap()));
        let by_url = Endpoint::read(
            Side::Server,
            attrs(&[]),
            attrs(&[("http.url", &["http://[fd00::4]:8080/api?q=1"])]),
        );
        assert_eq!(by_url.ips, vec!["fd00::4".parse::<IpAddr>().unwrap()]);
        let client = Endpoint::read(
            Side::Client,
            attrs(&[]),
            attrs(&[("http.url", &["http://10.0.1.5:24404/api?q=1&shard=0"])]),
        );
        assert!(client.ips.is_empty());
        assert_eq!(client.peer, Some("10.0.1.5".parse().unwrap()));
        // A URL by name places nothing; a socket peer outranks the URL.
        let named = Endpoint::read(
            Side::Client,
            attrs(&[]),
            attrs(&[
                ("http.url", &["http://index.svc:24404/api"]),
                ("net.peer.ip", &["10.0.1.9"]),
            ]),
        );
        assert_eq!(named.peer, Some("10.0.1.9".parse().unwrap()));
        let nothing = Endpoint::read(
            Side::Client,
            attrs(&[]),
            attrs(&[("http.url", &["http://index.svc:24404/api"])]),
        );
        assert_eq!(nothing.peer, None);
    }

    #[test]
    fn a_callee_without_spans_of_its_own_is_named_as_its_caller_names_it() {
        type Attrs<'a> = &'a [(&'a str, &'a [&'a str])];
        let cases: [(Attrs, Option<&str>); 11] = [
            (
                &[("peer.service", &["mysql"]), ("db.system", &["mysql"])],
                Some("mysql"),
            ),
            (
                &[
                    ("db.system.name", &["postgresql"]),
                    ("server.address", &["db"]),
                    ("server.port", &["5432"]),
                ],
                Some("postgresql@db:5432"),
            ),
            // An address that already has its port keeps it; an IPv6
            // address is not taken for one with a port.
            (
                &[
                    ("network.peer.address", &["10.0.0.7:6379"]),
                    ("server.port", &["6379"]),
                ],
                Some("10.0.0.7:6379"),
            ),
            (
                &[
                    ("network.peer.address", &["fe80::2"]),
                    ("server.port", &["443"]),
                ],
                Some("[fe80::2]:443"),
            ),
            (&[("messaging.system", &["kafka"])], Some("kafka")),
            (&[("http.method", &["GET"])], None),
            // The older HTTP conventions name the server only in the URL.
            (
                &[(
                    "http.url",
                    &["https://u:p@api.example.com:8443/v1/rates?x=1"],
                )],
                Some("api.example.com:8443"),
            ),
            (
                &[("url.full", &["http://10.0.0.9/stock"])],
                Some("10.0.0.9"),
            ),
            (&[("http.url", &["/relative/path"])], None),
            // A gRPC client span names its callee's API and nothing else.
            (
                &[
                    ("rpc.system", &["grpc"]),
                    ("rpc.service", &["shop.Pricing"]),
                ],
                Some("shop.Pricing"),
            ),
            (
                &[
                    ("rpc.service", &["shop.Pricing"]),
                    ("server.address", &["10.0.0.6"]),
                ],
                Some("10.0.0.6"),
            ),
        ];
        for (pairs, expected) in cases {
            let e = Endpoint::read(Side::Client, attrs(&[]), attrs(pairs));
            assert_eq!(e.peer_name.as_deref(), expected, "{pairs:?}");
        }
        // A server span's callers are spans of their own.
        let s = Endpoint::read(Side::Server, attrs(&[]), attrs(&[("peer.service", &["x"])]));
        assert_eq!(s.peer_name, None);
    }

    #[test]
    fn the_process_and_thread_that_recorded_a_span_are_read() {
        let java = Endpoint::read(
            Side::Server,
            attrs(&[("service.instance.id", &["a1f3"]), ("process.pid", &["7"])]),
            attrs(&[("thread.id", &["41"]), ("thread.name", &["exec-3"])]),
        );
        assert_eq!(java.instance.as_deref(), Some("a1f3"));
        assert_eq!(java.thread.as_deref(), Some("41/exec-3"));
        // Without an instance id, a pid is one only on its host.
        let bare = |host: &'static str| {
            Endpoint::read(
                Side::Client,
                attrs(&[("process.pid", &["7"]), ("host.ip", &[host])]),
                attrs(&[("thread.name", &["main"])]),
            )
        };
        assert_eq!(
            bare("10.0.0.1").instance.as_deref(),
            Some("pid 7 on 10.0.0.1")
        );
        assert_ne!(bare("10.0.0.1").instance, bare("10.0.0.2").instance);
        assert_eq!(bare("10.0.0.1").thread.as_deref(), Some("main"));
        let none = Endpoint::read(Side::Client, attrs(&[]), attrs(&[]));
        assert_eq!((none.instance, none.thread), (None, None));
    }
}
