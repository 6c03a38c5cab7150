"""One HTTPS request with Python's own TLS stack (OpenSSL), a client we did
not write: prints the HTTP status, or `refused: REASON` when the TLS
handshake or the connection fails.

Usage: https_request.py URL CA [CERT KEY] [--post CONTENT_TYPE BODY_FILE]"""

import ssl
import sys
import urllib.request


def main(args):
    post = None
    if "--post" in args:
        i = args.index("--post")
        post = (args[i + 1], open(args[i + 2], "rb").read())
        args = args[:i]
    url, ca = args[0], args[1]
    ctx = ssl.create_default_context(cafile=ca)
    if len(args) >= 4:
        ctx.load_cert_chain(args[2], args[3])
    req = urllib.request.Request(url)
    if post:
        req = urllib.request.Request(url, data=post[1], headers={"Content-Type": post[0]})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            r.read()
            print(r.status)
    except urllib.error.HTTPError as e:
        print(e.code)
    except (OSError, ssl.SSLError) as e:
        print(f"refused: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
