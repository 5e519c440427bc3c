"""``kgc serve``: the reference coordinator answering real Kafka clients over the wire, in front of
a real broker, with injected faults and a trace of every request (``server.py``)."""

from kgc.serve.faults import Fault, FaultKind, FaultPlan
from kgc.serve.server import CoordinatorServer, HandledRequest, ServeError, ServeOptions
from kgc.serve.trace import Trace, TraceRecord, read_trace, write_trace

__all__ = [
    "CoordinatorServer",
    "Fault",
    "FaultKind",
    "FaultPlan",
    "HandledRequest",
    "ServeError",
    "ServeOptions",
    "Trace",
    "TraceRecord",
    "read_trace",
    "write_trace",
]
