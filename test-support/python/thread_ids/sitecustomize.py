"""Records `thread.id` and `thread.name` on every span a Python process
starts, as the OpenTelemetry Java agent does on every span by default; the
Python SDK records neither. Put this directory on PYTHONPATH and an
application is traced as it was, plus the thread each span started on.
Tests use it to see what reconstruction makes of real threads: a server's
request threads, and the client pool its parallel calls are handed to."""

import threading

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider


class _Threads(SpanProcessor):
    def on_start(self, span, parent_context=None):
        thread = threading.current_thread()
        span.set_attribute("thread.id", thread.ident)
        span.set_attribute("thread.name", thread.name)


_init = TracerProvider.__init__


def _with_threads(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.add_span_processor(_Threads())


TracerProvider.__init__ = _with_threads
