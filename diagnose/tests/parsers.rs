//! The span formats read from real files, malformed ones included,
//! joined into edges against a real topology's host addresses.

use intpath_core::topo::Topology;
use intpath_diagnose::hosts::Hosts;
use intpath_diagnose::rpc::{join, Edges};
use intpath_diagnose::spans::{parse, Format, Kind, SpansError};
use std::collections::HashMap;
use std::path::Path;

fn read(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

fn fattree() -> Topology {
    Topology::load("fattree:k=4").unwrap()
}

#[test]
fn otlp_hex_ids_string_and_number_nanos_and_kind_names() {
    let p = parse(&read("otlp.json"), None).unwrap();
    assert_eq!(p.spans.len(), 3, "{:?}", p.rejects);
    assert_eq!(p.rejects.count("end before start"), 1);
    assert_eq!(p.rejects.count("missing id or timestamps"), 1);
    let client = p.spans.iter().find(|s| s.kind == Kind::Client).unwrap();
    assert_eq!(client.trace_id, "5b8efff798038103d269b633813fc60c");
    assert_eq!(client.start_ns, 1_750_000_000_001_000_000);
    assert_eq!(
        client.endpoint.ips,
        vec!["10.0.0.1".parse::<std::net::IpAddr>().unwrap()]
    );
    let server = p.spans.iter().find(|s| s.service == "profile").unwrap();
    assert_eq!(server.kind, Kind::Server);

    let topo = fattree();
    let edges = join(
        &p.spans,
        &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
    );
    assert_eq!(edges.edges.len(), 1);
    let e = &edges.edges[0];
    assert_eq!(
        (e.total(), e.service(), e.network()),
        (10_000_000, 7_000_000, 3_000_000)
    );
    assert_eq!(topo.hosts()[e.client_host as usize].name, "h1");
    assert_eq!(topo.hosts()[e.server_host as usize].name, "h5");
}

#[test]
fn json_lines_count_a_broken_line_with_its_byte_offset_and_keep_the_rest() {
    let text = read("otlp_lines.jsonl");
    let p = parse(&text, None).unwrap();
    assert_eq!(p.spans.len(), 2);
    assert_eq!(p.rejects.count("bad JSON"), 1);
    let (_, _, example) = p.rejects.iter().next().unwrap();
    let second_line = text.find('\n').unwrap() + 1;
    let at: usize = example
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':')
        .parse()
        .unwrap();
    assert!(
        at > second_line && at < second_line + text[second_line..].find('\n').unwrap() + 2,
        "{example:?}"
    );
    let edges = join(
        &p.spans,
        &mut Hosts::of_topology(&fattree(), &HashMap::new()).unwrap(),
    );
    assert_eq!(edges.edges.len(), 1);
}

#[test]
fn jaeger_query_api_with_processes_references_and_an_orphan() {
    let p = parse(&read("jaeger.json"), None).unwrap();
    assert_eq!(p.spans.len(), 4);
    let s = &p.spans[1];
    assert_eq!(
        (s.kind, s.start_ns, s.end_ns),
        (
            Kind::Client,
            1_750_000_000_001_000_000,
            1_750_000_000_010_000_000
        )
    );
    assert_eq!(s.parent_id.as_deref(), Some("1000000000000001"));
    assert_eq!(s.endpoint.hostname.as_deref(), Some("frontend-7d9f"));
    // One trace object alone reads the same.
    let doc: serde_json::Value = serde_json::from_str(&read("jaeger.json")).unwrap();
    let single = parse(&doc["data"][0].to_string(), Some(Format::Jaeger)).unwrap();
    assert_eq!(single.spans, p.spans);

    let topo = fattree();
    let edges = join(
        &p.spans,
        &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
    );
    assert_eq!(edges.edges.len(), 1);
    assert_eq!(edges.rejects.count("orphan parent"), 1);
    assert_eq!(edges.edges[0].network(), 3_000_000);
}

#[test]
fn zipkin_shared_server_spans_join_their_client_and_duplicates_are_counted() {
    let p = parse(&read("zipkin.json"), None).unwrap();
    assert_eq!(p.spans.len(), 4);
    assert_eq!(p.rejects.count("missing id or timestamps"), 1);
    assert!(p.spans.iter().any(|s| s.shared));
    let topo = fattree();
    let edges = join(
        &p.spans,
        &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
    );
    assert_eq!(edges.edges.len(), 1);
    assert_eq!(edges.rejects.count("duplicate span"), 1);
    let e = &edges.edges[0];
    assert_eq!((e.total(), e.service()), (10_000_000, 7_000_000));
}

/// What a user downloads from a Zipkin server (`/api/v2/traces`) is an
/// array of traces, each an array of spans; it reads as the array of spans
/// a reporter posts.
#[test]
fn zipkins_query_api_answer_reads_as_the_reporters_array() {
    let flat = read("zipkin.json");
    let spans: Vec<serde_json::Value> = serde_json::from_str(&flat).unwrap();
    let (first, rest) = spans.split_at(2);
    let traces = serde_json::to_string(&[first, rest]).unwrap();
    let nested = parse(&traces, None).unwrap();
    let p = parse(&flat, None).unwrap();
    assert_eq!(nested.spans, p.spans);
    assert_eq!(nested.rejects.count("missing id or timestamps"), 1);
}

#[test]
fn unmapped_addresses_are_rejects_unless_the_host_map_names_them() {
    let p = parse(&read("zipkin.json"), None).unwrap();
    let topo = Topology::load("leafspine:spines=2,leaves=2,hosts=1").unwrap();
    // Two hosts, 10.0.0.1 and 10.0.0.2: profile's 10.0.0.5 is unknown.
    let none = join(
        &p.spans,
        &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
    );
    assert_eq!(none.edges.len(), 0);
    assert_eq!(none.rejects.count("unplaced host"), 1);
    let map = HashMap::from([("profile".to_string(), topo.hosts()[1].name.clone())]);
    let mapped = join(&p.spans, &mut Hosts::of_topology(&topo, &map).unwrap());
    assert_eq!(mapped.edges.len(), 1);
    let bad = HashMap::from([("profile".to_string(), "h99".to_string())]);
    assert!(Hosts::of_topology(&topo, &bad)
        .unwrap_err()
        .to_string()
        .contains("h99"));
}

#[test]
fn broken_and_unknown_documents_say_what_they_saw() {
    let t = parse(&read("truncated.json"), None).unwrap();
    assert_eq!(t.spans.len(), 0);
    assert_eq!(t.rejects.count("bad JSON"), 1);
    match parse(&read("unknown.json"), None) {
        Err(SpansError::UnknownFormat(keys)) => assert!(keys.contains("traces"), "{keys}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(parse("   \n", None), Err(SpansError::Empty)));
    // A stray record among span documents (a log line in JSON) is counted,
    // and the spans around it are read.
    let otlp = read("otlp.json").replace('\n', " ");
    let mixed = format!("{otlp}\n{{\"level\":\"info\",\"msg\":\"ready\"}}\n{otlp}\n");
    let m = parse(&mixed, None).unwrap();
    assert_eq!(m.spans.len(), 6, "{:?}", m.rejects);
    assert_eq!(m.rejects.count("document of unknown format"), 1);
    // Forcing the wrong format loses the spans but does not panic.
    let z = parse(&read("otlp.json"), Some(Format::Zipkin)).unwrap();
    assert_eq!(z.spans.len(), 0);
    assert_eq!(z.rejects.count("zipkin document is not an array"), 1);
}

/// A database records no spans: its callers' client spans name it, in each
/// format the way that format does (an OTLP `intValue` port, a Jaeger
/// `peer.service` tag, a Zipkin remote endpoint's service name).
#[test]
fn a_callee_without_spans_is_named_from_its_client_spans_in_every_format() {
    let otlp = r#"{"resourceSpans":[{"resource":{"attributes":[
        {"key":"service.name","value":{"stringValue":"inventory"}}]},
      "scopeSpans":[{"spans":[{"traceId":"aa","spanId":"01","kind":3,
        "startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[
        {"key":"db.system.name","value":{"stringValue":"postgresql"}},
        {"key":"server.address","value":{"stringValue":"10.0.0.7"}},
        {"key":"server.port","value":{"intValue":"5432"}}]}]}]}]}"#;
    let jaeger = r#"{"data":[{"traceID":"aa","processes":{"p1":{"serviceName":"customer"}},
      "spans":[{"traceID":"aa","spanID":"01","processID":"p1","startTime":1,"duration":2,
        "tags":[{"key":"span.kind","type":"string","value":"client"},
                {"key":"peer.service","type":"string","value":"mysql"}]}]}]}"#;
    let zipkin = r#"[{"traceId":"aa","id":"01","kind":"CLIENT","timestamp":1,"duration":2,
      "localEndpoint":{"serviceName":"driver"},
      "remoteEndpoint":{"serviceName":"redis","ipv4":"10.0.0.8","port":6379}}]"#;
    for (doc, name) in [
        (otlp, "postgresql@10.0.0.7:5432"),
        (jaeger, "mysql"),
        (zipkin, "redis"),
    ] {
        let p = parse(doc, None).unwrap();
        assert_eq!(p.spans.len(), 1, "{name}: {:?}", p.rejects);
        assert_eq!(p.spans[0].kind, Kind::Client, "{name}");
        assert_eq!(p.spans[0].endpoint.peer_name.as_deref(), Some(name));
    }
}

/// An OpenTelemetry app that sets `host.ip` (as `intpath lab exec` does)
/// and exports to Jaeger or Zipkin: the array arrives flattened into one
/// tag, as a JSON list (Jaeger's process tags) or joined by commas (the
/// JavaScript Zipkin exporter, which adds the resource to every span's
/// tags), and still places the span.
#[test]
fn host_ip_flattened_into_jaeger_and_zipkin_tags_places_the_span() {
    let jaeger = r#"{"data":[{"traceID":"aa","processes":{"p1":{"serviceName":"cart",
        "tags":[{"key":"host.ip","type":"string","value":"[\"10.0.0.5\",\"fe80::5\"]"},
                {"key":"host.name","type":"string","value":"h5"}]}},
      "spans":[{"traceID":"aa","spanID":"01","processID":"p1","startTime":1,"duration":2,
        "tags":[{"key":"span.kind","type":"string","value":"server"}]}]}]}"#;
    let zipkin = r#"[{"traceId":"aa","id":"01","kind":"SERVER","timestamp":1,"duration":2,
      "localEndpoint":{"serviceName":"cart"},
      "tags":{"host.ip":"10.0.0.5,fe80::5","host.name":"h5","http.route":"/cart"}}]"#;
    let want: Vec<std::net::IpAddr> = vec!["10.0.0.5".parse().unwrap(), "fe80::5".parse().unwrap()];
    for doc in [jaeger, zipkin] {
        let p = parse(doc, None).unwrap();
        assert_eq!(p.spans.len(), 1, "{doc}: {:?}", p.rejects);
        assert_eq!(p.spans[0].endpoint.ips, want, "{doc}");
        assert_eq!(p.spans[0].endpoint.hostname.as_deref(), Some("h5"), "{doc}");
    }
}

/// One OTLP JSON span of `cart`: its kind as given (a number, or a name
/// in quotes) and `more` fields after its times.
fn otlp_span(kind: &str, more: &str) -> String {
    format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[
        {{"key":"service.name","value":{{"stringValue":"cart"}}}}]}},
      "scopeSpans":[{{"spans":[{{"traceId":"aa","spanId":"01","kind":{kind},
        "startTimeUnixNano":"1","endTimeUnixNano":"2"{more}}}]}}]}}]}}"#
    )
}

/// One Jaeger span of `cart`: its `span.kind` tag and `more` tags.
fn jaeger_span(kind: &str, more: &str) -> String {
    format!(
        r#"{{"data":[{{"traceID":"aa","processes":{{"p1":{{"serviceName":"cart"}}}},
      "spans":[{{"traceID":"aa","spanID":"01","processID":"p1","startTime":1,"duration":2,
        "tags":[{{"key":"span.kind","type":"string","value":"{kind}"}}{more}]}}]}}]}}"#
    )
}

/// One Zipkin span of `cart`: its kind and its `tags` object.
fn zipkin_span(kind: &str, tags: &str) -> String {
    format!(
        r#"[{{"traceId":"aa","id":"01","kind":"{kind}","timestamp":1,"duration":2,
      "localEndpoint":{{"serviceName":"cart"}},"tags":{tags}}}]"#
    )
}

/// Messaging spans keep their kind in every format: a producer is no call
/// its service waits on, and a consumer is where its service's work on a
/// message begins.
#[test]
fn producer_and_consumer_kinds_are_read_in_every_format() {
    let otlp = |kind: &str| otlp_span(kind, "");
    let jaeger = |kind: &str| jaeger_span(kind, "");
    let zipkin = |kind: &str| zipkin_span(kind, "{}");
    for (doc, kind) in [
        (otlp("4"), Kind::Producer),
        (otlp("5"), Kind::Consumer),
        (otlp(r#""SPAN_KIND_PRODUCER""#), Kind::Producer),
        (otlp(r#""SPAN_KIND_CONSUMER""#), Kind::Consumer),
        (otlp(r#""SPAN_KIND_INTERNAL""#), Kind::Other),
        (jaeger("producer"), Kind::Producer),
        (jaeger("consumer"), Kind::Consumer),
        (zipkin("PRODUCER"), Kind::Producer),
        (zipkin("CONSUMER"), Kind::Consumer),
    ] {
        let p = parse(&doc, None).unwrap();
        assert_eq!(p.spans.len(), 1, "{doc}: {:?}", p.rejects);
        assert_eq!(p.spans[0].kind, kind, "{doc}");
    }
}

#[test]
fn a_failed_status_is_read_in_every_format() {
    let otlp = |status: &str| otlp_span("2", status);
    let jaeger = |tag: &str| jaeger_span("server", tag);
    let zipkin = |tags: &str| zipkin_span("SERVER", &format!("{{{tags}}}"));
    let python = |status: &str| {
        format!(
            r#"{{"name":"GET /cart","context":{{"trace_id":"0xaa","span_id":"0x01"}},
          "kind":"SpanKind.SERVER","parent_id":null,
          "start_time":"2026-11-29T01:54:27.781270Z","end_time":"2026-11-29T01:54:27.783362Z",
          "status":{{"status_code":"{status}"}},"attributes":{{}},
          "resource":{{"attributes":{{"service.name":"cart"}}}}}}"#
        )
    };
    let go = |code: &str| {
        format!(
            r#"{{"Name":"GET /cart","SpanContext":{{"TraceID":"aa","SpanID":"01"}},
          "Parent":{{"SpanID":"0000000000000000"}},"SpanKind":2,
          "StartTime":"2026-11-29T01:54:27.781270Z","EndTime":"2026-11-29T01:54:27.783362Z",
          "Status":{{"Code":"{code}","Description":""}},
          "Resource":[{{"Key":"service.name","Value":{{"Type":"STRING","Value":"cart"}}}}]}}"#
        )
    };
    let str_tag = |k: &str, v: &str| format!(r#",{{"key":"{k}","type":"string","value":"{v}"}}"#);
    for (doc, failed) in [
        (otlp(r#","status":{"code":2,"message":"boom"}"#), true),
        (otlp(r#","status":{"code":"STATUS_CODE_ERROR"}"#), true),
        (otlp(r#","status":{"code":1}"#), false),
        (otlp(""), false),
        (
            jaeger(r#",{"key":"error","type":"bool","value":true}"#),
            true,
        ),
        (jaeger(&str_tag("otel.status_code", "ERROR")), true),
        (jaeger(&str_tag("otel.status_code", "OK")), false),
        (jaeger(""), false),
        (zipkin(r#""error":"timeout""#), true),
        (zipkin(r#""error":"""#), true),
        (zipkin(r#""otel.status_code":"ERROR""#), true),
        (zipkin(r#""http.status_code":"200""#), false),
        (python("ERROR"), true),
        (python("UNSET"), false),
        (go("Error"), true),
        (go("Unset"), false),
    ] {
        let p = parse(&doc, None).unwrap();
        assert_eq!(p.spans.len(), 1, "{doc}: {:?}", p.rejects);
        assert_eq!(p.spans[0].error, failed, "{doc}");
    }
}

/// Grafana Tempo's trace API gives OTLP under `batches` (v1) or
/// `trace.resourceSpans` (v2), Jaeger's API v3 under `result`, with ids in
/// base64: read as the hex ids OTLP JSON files carry, so a client and its
/// server span still join.
#[test]
fn trace_store_answers_with_base64_ids_read_as_hex_and_join() {
    // Trace 5b8e…c60c, client span 0102…08 and its server span 1112…18.
    let (trace, client, server) = ("W47/95gDgQPSabYzgT/GDA==", "AQIDBAUGBwg=", "ERITFBUWFxg=");
    let batch = |service: &str, ip: &str, span: String| {
        format!(
            r#"{{"resource":{{"attributes":[
              {{"key":"service.name","value":{{"stringValue":"{service}"}}}},
              {{"key":"host.ip","value":{{"stringValue":"{ip}"}}}}]}},
            "scopeSpans":[{{"spans":[{span}]}}]}}"#
        )
    };
    let spans = [
        batch(
            "frontend",
            "10.0.0.1",
            format!(
                r#"{{"traceId":"{trace}","spanId":"{client}","kind":"SPAN_KIND_CLIENT",
                "startTimeUnixNano":"1000","endTimeUnixNano":"11000"}}"#
            ),
        ),
        batch(
            "profile",
            "10.0.0.5",
            format!(
                r#"{{"traceId":"{trace}","spanId":"{server}","parentSpanId":"{client}",
                "kind":"SPAN_KIND_SERVER","startTimeUnixNano":"2000","endTimeUnixNano":"9000"}}"#
            ),
        ),
    ]
    .join(",");
    let v1 = format!(r#"{{"batches":[{spans}]}}"#);
    let v2 = format!(r#"{{"trace":{{"resourceSpans":[{spans}]}}}}"#);
    let jaeger_v3 = format!(r#"{{"result":{{"resourceSpans":[{spans}]}}}}"#);
    for doc in [v1, v2, jaeger_v3] {
        let p = parse(&doc, None).unwrap();
        assert_eq!(p.spans.len(), 2, "{:?}", p.rejects);
        let s = p.spans.iter().find(|s| s.service == "profile").unwrap();
        assert_eq!(s.trace_id, "5b8efff798038103d269b633813fc60c");
        assert_eq!(
            (s.span_id.as_str(), s.parent_id.as_deref()),
            ("1112131415161718", Some("0102030405060708"))
        );
        let topo = fattree();
        let edges = join(
            &p.spans,
            &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
        );
        assert_eq!(edges.edges.len(), 1, "{:?}", edges.rejects);
    }
}

/// Spans as Python services with only the official SDK (1.45.1) and
/// instrumentations (0.66b1) recorded them, received by the collector and
/// written back out as OTLP JSON (two requests each): a grpcio app and a
/// FastAPI app calling through httpx, nothing set but `service.name`.
fn python_app(name: &str) -> (Edges, Hosts) {
    let p = parse(&read(name), None).unwrap();
    let mut hosts = Hosts::discovered(&HashMap::new());
    let joined = join(&p.spans, &mut hosts);
    assert_eq!(joined.rejects.count("unplaced host"), 0, "{name}");
    (joined, hosts)
}

#[test]
fn grpc_services_that_name_no_host_are_hosts_of_their_own() {
    // A gRPC client span names no server and the resource no host: each
    // callee is placed as its service.
    let (joined, hosts) = python_app("python_grpc_defaults.json");
    assert_eq!(joined.edges.len(), 13);
    for e in &joined.edges {
        let callee = &joined.services[e.callee as usize];
        assert_eq!(&hosts.names()[e.server_host as usize], callee);
    }
}

#[test]
fn an_untraced_grpc_callee_is_a_dependency_named_by_its_rpc_service() {
    let (joined, _) = python_app("python_grpc_untraced_callee.json");
    assert_eq!(joined.dependencies, vec!["shop.Pricing".to_owned()]);
}

#[test]
fn the_older_http_conventions_place_an_asgi_apps_calls() {
    // FastAPI and httpx without OTEL_SEMCONV_STABILITY_OPT_IN: the server
    // names itself only in its Host header, the client its server only in
    // the URL.
    let (joined, hosts) = python_app("python_asgi_old_semconv.json");
    assert_eq!(joined.edges.len(), 18);
    for e in &joined.edges {
        let server = &hosts.names()[e.server_host as usize];
        assert!(server.starts_with("127.0.1."), "{server}");
    }
}

/// A file that breaks off (an exporter killed mid-write, a full disk)
/// keeps every span written whole before the break, and a longer piece of
/// the same file never reads fewer spans than a shorter one.
#[test]
fn a_document_broken_off_anywhere_keeps_its_whole_spans() {
    for name in ["otlp.json", "jaeger.json", "zipkin.json"] {
        let text = read(name);
        let whole = parse(&text, None).unwrap().spans.len();
        let body = text.trim_end();
        let mut seen = 0;
        for n in (1..body.len()).filter(|&n| body.is_char_boundary(n)) {
            let spans = match parse(&body[..n], None) {
                Ok(p) => {
                    let broken = p.rejects.count("bad JSON")
                        + p.rejects.count("document broken off, spans before it read");
                    assert_eq!(broken, 1, "{name} cut at {n}: {:?}", p.rejects);
                    p.spans.len()
                }
                Err(e) => panic!("{name} cut at {n}: {e}"),
            };
            assert!(spans >= seen, "{name}: {spans} spans at {n}, {seen} before");
            seen = spans;
        }
        // Only the closing bracket missing: every span is read.
        assert_eq!(seen, whole, "{name}");
    }
}

/// A gzipped span file reads as the plain one, a gzip stream cut short
/// gives the spans written whole before the cut, and a file that is not
/// text says so with where.
#[test]
fn gzipped_files_read_whole_or_cut_and_binary_files_are_named() {
    use intpath_diagnose::spans::read_file;
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // Enough spans that a cut in the compressed stream lands among them.
    let line = read("otlp.json").replace('\n', "");
    let text: String = (0..400).map(|_| format!("{line}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let whole = dir.path().join("spans.json.gz");
    std::fs::write(&whole, &gz).unwrap();
    assert_eq!(read_file(&whole).unwrap(), text);

    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let kept = read_file(&cut).unwrap();
    assert!(text.starts_with(&kept) && kept.len() < text.len());
    let all = parse(&text, None).unwrap().spans.len();
    let some = parse(&kept, None).unwrap().spans.len();
    assert!(some > 0 && some < all, "{some} of {all}");

    let binary = dir.path().join("spans.bin");
    std::fs::write(&binary, b"{\"a\":\"\xff\"}").unwrap();
    let e = read_file(&binary).unwrap_err().to_string();
    assert!(e.contains("not text at byte 6"), "{e}");
}

/// Zipkin v1 (older Brave and Finagle reporters): an RPC's client and
/// server halves are annotations of one span, or of two reported apart
/// under one id; both join as the v2 spans they stand for.
#[test]
fn zipkin_v1_annotations_join_as_client_and_server_spans() {
    let p = parse(&read("zipkin_v1.json"), None).unwrap();
    assert_eq!(p.rejects.total(), 0, "{:?}", p.rejects);
    let kinds = |k: Kind| p.spans.iter().filter(|s| s.kind == k).count();
    assert_eq!((kinds(Kind::Server), kinds(Kind::Client)), (3, 2));
    assert_eq!(p.spans.len(), 6);
    let render = p
        .spans
        .iter()
        .find(|s| s.span_id == "e6fb4a1d1a96d316")
        .unwrap();
    assert_eq!(render.service, "frontend");
    let topo = fattree();
    let edges = join(
        &p.spans,
        &mut Hosts::of_topology(&topo, &HashMap::new()).unwrap(),
    );
    let mut got: Vec<(String, i64, i64)> = edges
        .edges
        .iter()
        .map(|e| {
            let host = &topo.hosts()[e.server_host as usize].name;
            (host.clone(), e.total(), e.service())
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("h5".to_string(), 10_000_000, 7_000_000),
            ("h9".to_string(), 4_000_000, 3_000_000)
        ]
    );
}

/// Two services' spans as the OpenTelemetry Collector's file exporter
/// writes them with `format: proto`, with `compression: zstd`, and under
/// its native-compression gate, and as a saved OTLP/HTTP protobuf body:
/// each reads as the same spans as the OTLP JSON below, and a file cut in
/// its last frame keeps the frames before it.
#[test]
fn collector_file_exporter_output_reads_as_its_otlp_json() {
    use intpath_diagnose::spans::read_file;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{
        any_value::Value as V, AnyValue, ArrayValue, KeyValue,
    };
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
    use prost::Message;
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};

    let kv = |key: &str, v: V| KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    };
    let ips = |ip: &str| {
        V::ArrayValue(ArrayValue {
            values: vec![AnyValue {
                value: Some(V::StringValue(ip.into())),
            }],
        })
    };
    let trace_id: Vec<u8> = (1..=16).collect();
    let resource = |service: &str, ip: &str, span: Span| ResourceSpans {
        resource: Some(Resource {
            attributes: vec![
                kv("service.name", V::StringValue(service.into())),
                kv("host.ip", ips(ip)),
            ],
            ..Default::default()
        }),
        scope_spans: vec![ScopeSpans {
            spans: vec![span],
            ..Default::default()
        }],
        ..Default::default()
    };
    let client = Span {
        trace_id: trace_id.clone(),
        span_id: vec![0xa1; 8],
        name: "GET /cart".into(),
        kind: 3,
        start_time_unix_nano: 1_700_000_000_000_000_000,
        end_time_unix_nano: 1_700_000_000_004_000_000,
        attributes: vec![
            kv("server.address", V::StringValue("10.0.0.2".into())),
            kv("server.port", V::IntValue(8080)),
        ],
        ..Default::default()
    };
    let server = Span {
        trace_id,
        span_id: vec![0xb2; 8],
        parent_span_id: vec![0xa1; 8],
        name: "GET /cart".into(),
        kind: 2,
        start_time_unix_nano: 1_700_000_000_001_000_000,
        end_time_unix_nano: 1_700_000_000_003_000_000,
        attributes: vec![kv("client.address", V::StringValue("10.0.0.1".into()))],
        ..Default::default()
    };
    let frontend = resource("frontend", "10.0.0.1", client);
    let cart = resource("cart", "10.0.0.2", server);
    let json = r#"{"resourceSpans":[
      {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"frontend"}},
        {"key":"host.ip","value":{"arrayValue":{"values":[{"stringValue":"10.0.0.1"}]}}}]},
       "scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10",
        "spanId":"a1a1a1a1a1a1a1a1","name":"GET /cart","kind":3,
        "startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000004000000",
        "attributes":[{"key":"server.address","value":{"stringValue":"10.0.0.2"}},
          {"key":"server.port","value":{"intValue":"8080"}}]}]}]},
      {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"cart"}},
        {"key":"host.ip","value":{"arrayValue":{"values":[{"stringValue":"10.0.0.2"}]}}}]},
       "scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10",
        "spanId":"b2b2b2b2b2b2b2b2","parentSpanId":"a1a1a1a1a1a1a1a1","name":"GET /cart",
        "kind":2,"startTimeUnixNano":"1700000000001000000",
        "endTimeUnixNano":"1700000000003000000",
        "attributes":[{"key":"client.address","value":{"stringValue":"10.0.0.1"}}]}]}]}]}"#;
    let want = parse(json, None).unwrap();
    assert_eq!((want.spans.len(), want.rejects.total()), (2, 0));
    assert!(want.spans.iter().all(|s| !s.endpoint.ips.is_empty()));

    let message = |rs: &ResourceSpans| {
        ExportTraceServiceRequest {
            resource_spans: vec![rs.clone()],
        }
        .encode_to_vec()
    };
    let frame = |body: &[u8]| [&(body.len() as u32).to_be_bytes()[..], body].concat();
    let zstd = |b: &[u8]| compress_to_vec(b, CompressionLevel::Fastest);
    let json_line = json.replace('\n', "");
    let files: [(&str, Vec<u8>); 5] = [
        (
            "format: proto",
            [frame(&message(&frontend)), frame(&message(&cart))].concat(),
        ),
        (
            "format: proto, compression: zstd",
            [
                frame(&zstd(&message(&frontend))),
                frame(&zstd(&message(&cart))),
            ]
            .concat(),
        ),
        (
            "format: json, compression: zstd",
            frame(&zstd(json.as_bytes())),
        ),
        (
            "native zstd, JSON lines",
            zstd(format!("{json_line}\n").as_bytes()),
        ),
        (
            "an OTLP/HTTP protobuf body",
            ExportTraceServiceRequest {
                resource_spans: vec![frontend.clone(), cart.clone()],
            }
            .encode_to_vec(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans");
    for (what, bytes) in files {
        std::fs::write(&path, &bytes).unwrap();
        let text = read_file(&path).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = parse(&text, None).unwrap();
        assert_eq!(got.spans, want.spans, "{what}");
        assert_eq!(got.rejects.total(), 0, "{what}");
    }

    // Cut inside the second frame: the first frame's span is kept.
    let whole = [frame(&message(&frontend)), frame(&message(&cart))].concat();
    std::fs::write(&path, &whole[..whole.len() - 5]).unwrap();
    let got = parse(&read_file(&path).unwrap(), None).unwrap();
    assert_eq!(got.spans, want.spans[..1]);
}

#[test]
fn console_exporters_spans_join_as_their_services_calls() {
    // What the real SDKs printed: Python's ConsoleSpanExporter (1.45.1,
    // indented objects one after another) and Go's stdouttrace (Debian's
    // go.opentelemetry.io/otel 1.1.0, one object a line), two requests each.
    let topo = fattree();
    for (file, format) in [
        ("python_console.txt", None),
        ("go_stdouttrace.jsonl", Some(Format::Console)),
    ] {
        let p = parse(&read(file), format).unwrap();
        assert_eq!(p.spans.len(), 6, "{file}: {:?}", p.rejects);
        let roots = p.spans.iter().filter(|s| s.parent_id.is_none()).count();
        assert_eq!(roots, 2, "{file}");
        assert!(p.spans.iter().all(|s| !s.trace_id.starts_with("0x")));
        let mut hosts = Hosts::of_topology(&topo, &HashMap::new()).unwrap();
        let joined = join(&p.spans, &mut hosts);
        assert_eq!(joined.edges.len(), 2, "{file}: {:?}", joined.rejects);
        for e in &joined.edges {
            assert_eq!(topo.hosts()[e.client_host as usize].name, "h1");
            assert_eq!(topo.hosts()[e.server_host as usize].name, "h5");
            assert!(e.service() >= 2_000_000 && e.service() <= e.total());
        }
    }
}
