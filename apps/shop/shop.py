#!/usr/bin/env python3
"""shop: an eight-service web shop traced with OpenTelemetry (nine with a
database: a worker handles a job queue in it).

    shop.py serve --service NAME --listen IP:PORT [--peer SERVICE=IP:PORT ...]
    shop.py load --target IP:PORT --rate R --duration S
    shop.py run-local --duration S --rate R [--fault SERVICE:MS:SHARE:AFTER]
                      [--freeze SERVICE:AFTER:FOR] [--db URL]

Tracing is configured by the standard OTEL_* environment variables only;
see README.md."""

import argparse
import json
import sys

from shopapp import addr
from shopapp.services import DATABASE, SERVICES


def address(text):
    try:
        return addr.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def peer(text):
    name, sep, where = text.partition("=")
    if not sep or name not in SERVICES:
        raise argparse.ArgumentTypeError(f"{text!r} is not SERVICE=IP:PORT with a shop service")
    return name, address(where)


def share(text):
    x = float(text)
    if not 0 <= x <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1")
    return x


def positive(text):
    x = float(text)
    if not x > 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return x


def non_negative(text):
    x = float(text)
    if not x >= 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return x


def fault(text):
    parts = text.split(":")
    if len(parts) != 4 or parts[0] not in [*SERVICES, DATABASE]:
        raise argparse.ArgumentTypeError(f"{text!r} is not SERVICE:MS:SHARE:AFTER")
    return parts[0], non_negative(parts[1]), share(parts[2]), non_negative(parts[3])


def freeze(text):
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in SERVICES:
        raise argparse.ArgumentTypeError(f"{text!r} is not SERVICE:AFTER:FOR")
    return parts[0], non_negative(parts[1]), positive(parts[2])


def parser():
    p = argparse.ArgumentParser(prog="shop", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve one service until SIGTERM or SIGINT")
    s.add_argument("--service", required=True, choices=sorted(SERVICES))
    s.add_argument("--listen", required=True, type=address, metavar="IP:PORT")
    s.add_argument("--peer", action="append", default=[], type=peer, metavar="SERVICE=IP:PORT")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--delay-ms", type=non_negative, default=0.0, metavar="MS")
    s.add_argument("--delay-share", type=share, default=0.0, metavar="FRACTION")
    s.add_argument("--delay-after", type=non_negative, default=0.0, metavar="SECONDS")
    s.add_argument(
        "--delay-on",
        choices=["service", DATABASE],
        default="service",
        help="what the delay slows: the service's requests or its database queries",
    )
    s.add_argument(
        "--db",
        metavar="URL",
        help="PostgreSQL URL of the database (inventory's stock, the job queue)",
    )
    s.add_argument("--host-ip", help="resource attribute host.ip, as [IP]")
    s.add_argument("--host-name", help="resource attribute host.name")

    g = sub.add_parser("load", help="send open-loop Poisson load to frontend")
    g.add_argument("--target", required=True, type=address, metavar="IP:PORT")
    g.add_argument("--rate", required=True, type=positive, help="requests per second")
    g.add_argument("--duration", required=True, type=positive, help="seconds")
    g.add_argument("--seed", type=int, default=1)

    r = sub.add_parser("run-local", help="run every service and the load on 127.0.0.1")
    r.add_argument("--duration", required=True, type=positive, help="seconds of load")
    r.add_argument("--rate", required=True, type=positive, help="requests per second")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument(
        "--fault",
        type=fault,
        metavar="SERVICE:MS:SHARE:AFTER",
        help=f"SERVICE may be {DATABASE}: inventory's queries (needs --db)",
    )
    r.add_argument(
        "--freeze",
        type=freeze,
        metavar="SERVICE:AFTER:FOR",
        help="stop the service's process (SIGSTOP) AFTER seconds into the load, for FOR seconds",
    )
    r.add_argument(
        "--db",
        metavar="URL",
        help="PostgreSQL URL: inventory reads its stock there, frontend sends jobs to activity",
    )
    r.add_argument("--otlp", metavar="URL", help="OTLP/HTTP base URL for every process")
    return p


def fail(command, message, code):
    print(f"shop {command}: error: {message}", file=sys.stderr)
    sys.exit(code)


def main():
    args = parser().parse_args()
    if args.command == "serve":
        from shopapp import server, telemetry

        peers = dict(args.peer)
        missing = server.missing_peers(args.service, peers)
        if missing:
            need = " ".join(f"--peer {m}=IP:PORT" for m in missing)
            fail("serve", f"{args.service} calls {', '.join(missing)}: give {need}", 2)
        server.serve(
            args.service,
            args.listen,
            peers,
            args.seed,
            (args.delay_ms, args.delay_share, args.delay_after),
            telemetry.host_attributes(args.host_ip, args.host_name),
            args.db,
            args.delay_on,
        )
    elif args.command == "load":
        from shopapp import load

        print(json.dumps(load.run(args.target, args.rate, args.duration, args.seed)))
    else:
        from shopapp import local

        try:
            out = local.run(
                args.duration, args.rate, args.seed, args.fault, args.otlp, args.db, args.freeze
            )
        except local.Failure as e:
            fail("run-local", e, 1)
        except KeyboardInterrupt:
            fail("run-local", "interrupted", 130)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
