"""Every check the fuzzing machine makes is shown able to fail on a hand-made bad step or state:
refinement, the invariant on requests in flight, the client-side state invariant
(``exclusive_ownership``), the rule for requests outside the model, and the abstraction."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis.stateful import run_state_machine_as_test

from kgc.harness.fuzz import FuzzOptions, FuzzTarget, coordinator_machine, model_config, reference_target
from kgc.harness.fuzz.abstraction import AbstractionError, IdMap, abstract_state
from kgc.harness.fuzz.client import Client, InFlight
from kgc.harness.fuzz.refinement import ImplStep, Refinement
from kgc.model.actions import HANDLE, Action
from kgc.model.state import NO_MEMBER, Request, initial_group
from kgc.model.system import ClassicGroupModel
from kgc.model.types import ApiKey, MemberState
from kgc.reference import ReferenceCoordinator


def _refinement(options: FuzzOptions) -> Refinement:
    return Refinement(
        {False: ClassicGroupModel(model_config(options, False)), True: ClassicGroupModel(model_config(options, True))}
    )


def _first_join() -> tuple[Refinement, ImplStep]:
    """c1's id-less JoinGroup v3 on the new group, as the implementation might do it."""
    options = FuzzOptions()
    clients = [Client(i) for i in range(options.consumers)]
    ids = IdMap(model_config(options, False))
    request = Request(ApiKey.JOIN_GROUP, NO_MEMBER, meta=0)
    before = abstract_state(initial_group(), clients, ids, 0, request)
    refinement = _refinement(options)
    (allowed, after), *_ = refinement.candidates(
        ImplStep("probe", Action(HANDLE, 0, handled=(request,)), before, before)
    )
    return refinement, ImplStep("c1's JoinGroup", allowed, before, after, 3)


def test_refinement_accepts_a_step_the_model_takes() -> None:
    refinement, step = _first_join()
    assert refinement.check(step) is None


def test_refinement_rejects_a_step_the_model_does_not_take() -> None:
    """A JoinGroup that neither adds the member nor answers it: "implementation did X, the model
    allows only Y"."""
    refinement, step = _first_join()
    idle = Action(HANDLE, 0, handled=step.action.handled)
    message = refinement.check(
        ImplStep(step.label, idle, step.before, step.before._replace(consumers=step.after.consumers), 3)
    )
    assert message is not None
    assert "implementation did" in message and "the model allows only" in message
    assert "PreparingRebalance" in message  # what the model does: the member joins, a rebalance starts


def _machine(options: FuzzOptions | None = None) -> Any:
    machine = coordinator_machine(options or FuzzOptions(name="checks"))()
    return machine


def test_a_request_in_flight_must_be_parked_or_answered() -> None:
    machine = _machine()
    machine.answers_only_for_waiting_clients()
    c1 = machine.clients[0]
    machine.owner[99] = (0, 0, 0, "c1-not-a-member")
    c1.in_flight = InFlight(99, ApiKey.JOIN_GROUP, 0)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="neither answered nor parked"):
        machine.answers_only_for_waiting_clients()
    c1.in_flight = InFlight(99, ApiKey.HEARTBEAT, 0)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="not answered in its own step"):
        machine.answers_only_for_waiting_clients()


def test_exclusive_ownership_is_checked_on_the_clients() -> None:
    machine = _machine()
    assert machine._check_state() is None
    for c in machine.clients[:2]:
        c.state, c.generation, c.owned = MemberState.STABLE, 1, (0,)
    failure = machine._check_state()
    assert failure is not None and "exclusive_ownership" in failure[0]


def test_a_rejected_request_must_leave_the_group_untouched(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A coordinator that adds a member and then answers INCONSISTENT_GROUP_PROTOCOL is caught."""
    original = ReferenceCoordinator.do_new_member_join_group

    def buggy(self: ReferenceCoordinator, group: Any, request: Any, callback: Any) -> None:
        if request.protocol_type == "connect":
            original(self, group, replace(request, protocol_type="consumer"), lambda response: None)
        original(self, group, request, callback)

    monkeypatch.setattr(ReferenceCoordinator, "do_new_member_join_group", buggy)
    machine = _machine(FuzzOptions(name="rejected", refinement=False, extended=True, out_dir=str(tmp_path)))
    c1 = machine.clients[0]
    machine._join(c1, True, False, 10_000, 60_000)  # the group exists, with the consumer protocol
    c2 = machine.clients[1]
    with pytest.raises(AssertionError, match="answered INCONSISTENT_GROUP_PROTOCOL but changed the group"):
        machine._join(c2, False, False, 10_000, 60_000, protocol_type="connect")


def test_an_id_no_client_was_issued_has_no_abstraction() -> None:
    ids = IdMap(model_config(FuzzOptions(), False))
    with pytest.raises(AbstractionError, match="was not issued to one of the fuzzer's clients"):
        ids.bind_new(["stranger-1234"], initial_group(), {})


class _Opaque:
    """The reference coordinator seen through ``GroupCoordinator`` and ``Clock`` only, as a broker
    over the wire is: no snapshots, no step observer."""

    def __init__(self, inner: ReferenceCoordinator) -> None:
        self._inner = inner
        self.join, self.sync, self.heartbeat = inner.join, inner.sync, inner.heartbeat
        self.leave, self.commit_offsets, self.fetch_offsets = inner.leave, inner.commit_offsets, inner.fetch_offsets
        self.describe_group, self.take_events, self.advance_time = (
            inner.describe_group,
            inner.take_events,
            inner.advance_time,
        )

    @property
    def now_ms(self) -> int:
        return self._inner.now_ms


def _opaque(options: FuzzOptions) -> FuzzTarget:
    return FuzzTarget(_Opaque(reference_target(options).coordinator), "opaque")  # type: ignore[arg-type]


def test_an_unobservable_target_is_checked_on_what_its_clients_were_told() -> None:
    machine = coordinator_machine(FuzzOptions(name="opaque"), _opaque)()
    assert not machine.target.observable and machine.target.clock is not None
    machine._join(machine.clients[0], False, False, 10_000, 60_000)
    assert machine.recorder.steps[0].op == "join" and machine._check_state() is None
    for c in machine.clients[:2]:
        c.state, c.generation, c.owned = MemberState.STABLE, 1, (0,)
    failure = machine._check_state()
    assert failure is not None and "exclusive_ownership" in failure[0]


def test_the_machine_drives_an_unobservable_target() -> None:
    run_state_machine_as_test(coordinator_machine(FuzzOptions(name="opaque-run"), _opaque))
