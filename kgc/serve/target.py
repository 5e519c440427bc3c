"""The reference coordinator reached over the wire: a scenario target that goes through kgc serve.

:class:`ServedReference` runs a :class:`~kgc.serve.server.CoordinatorServer` with the manual clock
and sends every request over TCP with ``kgc.transport.WireCoordinator`` (kafka-python's messages and
framing on the client side, kgc serve's on the server side). Answers are read from the wire; the
controls a scenario needs beyond the protocol (``advance_time``, ``coordinator_unload``,
``store_complete``, ``mark_dead``, the snapshot the runner observes the group with) and the
coordinator's own events (timer expiries, evictions, state changes) are taken from the server.
So a scenario replayed here exercises the whole wire path — encoding, decoding, version handling,
parking on a connection — and must get the same verdict as in process
(``tests/serve/test_scenarios_over_wire.py``).

After each step the target waits until the server has handed the request to its coordinator and
until every answer the coordinator produced has arrived over the wire, so that what ``take_events``
returns is exactly what the in-process coordinator would return. Each request takes a connection
with nothing in flight (a new one when every connection is busy): a scenario may send a request for
a member whose JoinGroup is parked, which in process is handled at once, while on one connection it
would wait behind the parked request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from kgc.harness.scenario.format import ScenarioConfig, ScenarioFile
from kgc.harness.scenario.replay import Replay
from kgc.harness.scenario.result import ScenarioResult
from kgc.harness.scenario.runner import run_scenario
from kgc.harness.scenario.targets import coordinator_config
from kgc.interface.events import Event
from kgc.interface.messages import (
    GroupDescription,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestId,
    SyncGroupRequest,
)
from kgc.model.profiles import DEFAULT_PROFILE, Profile
from kgc.model.types import Errors
from kgc.reference import CoordinatorConfig, CoordinatorSnapshot
from kgc.reference.controls import StoreCompletion
from kgc.serve.server import CoordinatorServer, ServeOptions
from kgc.transport import NoResponse, WireCoordinator, WireOptions

_SETTLE_TIMEOUT_S = 10.0
_POLL_S = 0.0005


class ServedReference:
    """A :class:`~kgc.reference.controls.ReferenceControls` coordinator whose requests travel over the wire
    to kgc serve. Close it (or use it as a context manager) to stop the server."""

    def __init__(
        self, config: CoordinatorConfig, store_completion: StoreCompletion = StoreCompletion.IMMEDIATE
    ) -> None:
        self.server = CoordinatorServer(
            ServeOptions(clock="manual", config=config, store_completion=store_completion, nodes=1)
        )
        self.server.start()
        self.wire = WireCoordinator(self.server.address, WireOptions(request_timeout_s=_SETTLE_TIMEOUT_S))
        self._sent = 0
        self._connections: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connections and stop the server."""
        try:
            self.wire.close()
        finally:
            self.server.stop()

    def __enter__(self) -> ServedReference:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ GroupCoordinator
    def join(self, request: JoinGroupRequest) -> RequestId:
        return self._after(self.wire.join(request, client=self._free()))

    def sync(self, request: SyncGroupRequest) -> RequestId:
        return self._after(self.wire.sync(request, client=self._free()))

    def heartbeat(self, request: HeartbeatRequest) -> RequestId:
        return self._after(self.wire.heartbeat(request, client=self._free()))

    def leave(self, request: LeaveGroupRequest) -> RequestId:
        return self._after(self.wire.leave(request, client=self._free()))

    def commit_offsets(self, request: OffsetCommitRequest) -> RequestId:
        return self._after(self.wire.commit_offsets(request, client=self._free()))

    def fetch_offsets(self, request: OffsetFetchRequest) -> RequestId:
        return self._after(self.wire.fetch_offsets(request, client=self._free()))

    def describe_group(self, group_id: str) -> GroupDescription:
        """DescribeGroups over the wire (which carries neither generation nor leader)."""
        return self.wire.describe_group(group_id)

    def take_events(self) -> list[Event]:
        """The answers received over the wire and the coordinator's other events."""
        answers = self.wire.take_events()
        return [*answers, *self.server.take_events()]

    # ------------------------------------------------------------------ Clock, Failover, controls
    @property
    def now_ms(self) -> int:
        return self.server.now_ms

    def advance_time(self, ms: int) -> None:
        self.server.advance_time(ms)
        self._settle()

    def unload(self, group_id: str) -> None:
        self.server.call(lambda: self.server.reference().unload(group_id))
        self._settle()

    @property
    def store_completion(self) -> StoreCompletion:
        return self.server.call(lambda: self.server.reference().store_completion)

    @store_completion.setter
    def store_completion(self, value: StoreCompletion) -> None:
        def put() -> None:
            self.server.reference().store_completion = value

        self.server.call(put)

    def store_complete(self, error: Errors = Errors.NONE) -> bool:
        applied = self.server.call(lambda: self.server.reference().store_complete(error))
        self._settle()
        return applied

    def mark_dead(self, group_id: str) -> None:
        self.server.call(lambda: self.server.reference().mark_dead(group_id))
        self._settle()

    def introspect(self) -> CoordinatorSnapshot:
        return self.server.call(lambda: self.server.reference().introspect())

    # ------------------------------------------------------------------ internals
    def _free(self) -> str:
        """A connection with nothing in flight (opened when every one is busy)."""
        for name in self._connections:
            if not self.wire.outstanding(name):
                return name
        name = f"conn{len(self._connections) + 1}"
        self._connections.append(name)
        return name

    def _after(self, request_id: RequestId) -> RequestId:
        self._sent += 1
        deadline = time.monotonic() + _SETTLE_TIMEOUT_S
        while self.server.counts()[0] < self._sent:
            if time.monotonic() > deadline:
                raise NoResponse(f"kgc serve did not receive request {request_id} within {_SETTLE_TIMEOUT_S:g} s")
            time.sleep(_POLL_S)
        self._settle()
        return request_id

    def _settle(self) -> None:
        """Wait until every answer the coordinator produced has arrived over the wire."""
        deadline = time.monotonic() + _SETTLE_TIMEOUT_S
        while True:
            produced = self.server.counts()[1]
            received = sum(1 for e in self.wire.history() if e.done)
            if received >= produced:
                return
            if time.monotonic() > deadline:
                raise NoResponse(
                    f"{produced - received} answers of kgc serve did not arrive within {_SETTLE_TIMEOUT_S:g} s"
                )
            time.sleep(_POLL_S)


def served_target(config: ScenarioConfig, profile: Profile, mutant: str | None = None) -> ServedReference:
    """A :class:`ServedReference` configured for one scenario (as ``kgc.harness.scenario.targets``
    configures the in-process reference)."""
    return ServedReference(coordinator_config(config, profile, mutant), StoreCompletion(config.store_completion))


def replay_served(
    files: Sequence[ScenarioFile], profile: Profile = DEFAULT_PROFILE, mutant: str | None = None
) -> Replay:
    """``kgc.harness.scenario.replay.replay`` with every scenario run through kgc serve over the wire (one
    server per scenario, stopped after it)."""
    results: list[ScenarioResult] = []
    others = 0
    for scenario_file in files:
        for scenario in scenario_file.scenarios:
            if profile.name not in scenario.applies_to:
                others += 1
                continue
            built: list[ServedReference] = []

            def build(config: ScenarioConfig, built: list[ServedReference] = built) -> ServedReference:
                target = served_target(config, profile, mutant)
                built.append(target)
                return target

            try:
                results.append(run_scenario(scenario, build))
            finally:
                for target in built:
                    target.close()
    return Replay(tuple(results), others)
