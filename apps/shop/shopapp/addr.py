"""IP:PORT addresses. Peers are addressed by literal IP so that no request
depends on name resolution."""

import ipaddress


def parse(text):
    """`IP:PORT` (`[IPv6]:PORT` for IPv6) as (ip, port); ValueError names
    what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"{text!r} is not IP:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"{host!r} in {text!r} is not an IP address") from None
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{port!r} in {text!r} is not a port")
    return str(ip), int(port)


def url(ip, port):
    """The base URL of a server at ip:port."""
    host = f"[{ip}]" if ":" in ip else ip
    return f"http://{host}:{port}"
