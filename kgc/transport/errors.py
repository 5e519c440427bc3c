"""What can go wrong talking to a broker, each as one readable sentence.

A broker that closes the connection, answers bytes that do not decode, answers an error code
Kafka does not define, or does not answer within the bound is not a harness failure: it is a
finding about the broker. Each case is a :class:`WireError` with a ``kind`` (a stable short name
the conformance report groups by) and a message such as "no response to SyncGroup within 30 s".
"""

from __future__ import annotations


class WireError(Exception):
    """A request could not be completed over the wire. ``kind`` names the failure class.

    ``api`` and ``client`` name the request and the connection when known; ``request_id`` is the
    interface's handle of the failed request. When ``take_events()`` raises one, ``events`` holds
    the events that call would otherwise have returned, so nothing received is lost."""

    kind = "wire-error"

    def __init__(self, message: str, *, api: str | None = None, client: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.api = api
        self.client = client
        self.request_id: int | None = None
        self.events: tuple[object, ...] = ()

    def __str__(self) -> str:
        return self.message


class BrokerUnreachable(WireError):
    """No TCP connection to the broker (or the coordinator FindCoordinator named)."""

    kind = "unreachable"


class NoResponse(WireError):
    """A request stayed unanswered past its bound."""

    kind = "no-response"


class ConnectionClosed(WireError):
    """The broker closed a connection that had a request outstanding (or refused to take one)."""

    kind = "connection-closed"


class MalformedResponse(WireError):
    """The broker's bytes could not be decoded as the answer to the request sent."""

    kind = "malformed-response"


class UnexpectedErrorCode(WireError):
    """The answer carries an error code outside the classic group APIs' vocabulary."""

    kind = "unexpected-error-code"

    def __init__(self, message: str, *, code: int, api: str | None = None, client: str | None = None) -> None:
        super().__init__(message, api=api, client=client)
        self.code = code


class UnsupportedVersion(WireError):
    """The broker does not offer a version of an API that the request needs."""

    kind = "unsupported-version"


class CoordinatorLookupFailed(WireError):
    """FindCoordinator answered an error for the group."""

    kind = "find-coordinator"
