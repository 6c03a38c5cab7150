"""What a request costs a service: a little CPU, a short wait as if on a
disk or a database, and, when a fault is configured, an extra delay."""

import hashlib
import math
import time

# Spread of the lognormal draw: with sigma 0.4 nine draws in ten lie within
# half and twice the median, the shape of real service times.
SIGMA = 0.4
# The share of a request's time spent on the CPU; the rest is waiting.
CPU_SHARE = 0.25


class Work:
    """Per-request work of one service, drawn around `median_ms`."""

    def __init__(self, rng, median_ms):
        self._rng = rng
        self._mu = math.log(median_ms / 1000.0)

    def do(self):
        total = self._rng.lognormvariate(self._mu, SIGMA)
        burn(total * CPU_SHARE)
        time.sleep(total * (1 - CPU_SHARE))


def burn(seconds):
    """Hashes until this thread has used `seconds` of CPU time: CPU time, not
    wall time, so that the work is the same however busy the machine is."""
    end = time.thread_time() + seconds
    block = b"shop" * 256
    while time.thread_time() < end:
        block = hashlib.sha256(block).digest() * 32


class Fault:
    """From `after_s` seconds past the service's start, delays a share of
    its requests (or of its database queries) by `delay_ms`."""

    def __init__(self, rng, delay_ms=0.0, share=0.0, after_s=0.0):
        self._rng = rng
        self._delay = delay_ms / 1000.0
        self._share = share
        self.begins_unix = time.time() + after_s if delay_ms > 0 and share > 0 else None
        self._begins = time.monotonic() + after_s

    def delay_s(self):
        """This request's delay in seconds: 0, or the fault's for a share
        of the requests once it has begun."""
        if self.begins_unix is None or time.monotonic() < self._begins:
            return 0.0
        return self._delay if self._rng.random() < self._share else 0.0

    def maybe_delay(self):
        delay = self.delay_s()
        if delay > 0:
            time.sleep(delay)
