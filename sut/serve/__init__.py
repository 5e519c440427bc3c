"""``kgc serve``: the reference coordinator answering real Kafka clients over the wire, in front of
a real broker, with injected faults and a trace of every request (``server.py``)."""

from sut.serve.faults import Fault, FaultKind, FaultPlan
from sut.serve.server import CoordinatorServer, HandledRequest, ServeError, ServeOptions
from sut.serve.trace import Trace, TraceRecord, read_trace, write_trace

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
