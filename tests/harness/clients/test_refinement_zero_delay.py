"""The coordinator side of refinement (``trace_refines_model``) around zero-delay InitialDelayedJoins.

The model folds an InitialDelayedJoin of delay 0 into the step that armed it; kgc serve fires it
right after that step, but after any other timer of the node due in the same millisecond. The steps
here are served by the reference coordinator itself (in-process, no broker), recorded as kgc serve's
observer records them (``Run._on_step``), with a timer of another group — or of the same group —
due in the very millisecond a JoinGroup arms the InitialDelayedJoin: the order of the flaky failure
of ``test_stateful_real_consumers_cooperative``."""

from __future__ import annotations

import dataclasses
from itertools import count

from kgc.harness.clients.refinement import COORDINATOR_CHECK, CoordinatorRefinement, ServedStep
from kgc.interface.events import TimerKind
from kgc.interface.messages import JoinGroupProtocol, JoinGroupRequest, RequestId
from kgc.reference.config import CoordinatorConfig
from kgc.reference.coordinator import ReferenceCoordinator
from kgc.reference.steps import StepKind, StepRecord
from kgc.serve.server import HandledRequest

GROUP = "g"
OTHER = "other"
SESSION_MS = 10_000


class Served:
    """One node of kgc serve, in-process: the reference with no initial delay (the harness's), its
    steps as ``ServedStep``s and the requests it handled (``CoordinatorServer.handled_request``)."""

    def __init__(self) -> None:
        self.coordinator = ReferenceCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
        self.steps: list[ServedStep] = []
        self.handled: dict[RequestId, HandledRequest] = {}
        self._mono = count(1)
        self.coordinator.observe(self._observe)

    def _observe(self, record: StepRecord) -> None:
        snapshot = self.coordinator.introspect()
        writes = tuple(w for w in snapshot.writes if w.group_id == GROUP)
        self.steps.append(ServedStep(0, record, snapshot.groups.get(GROUP), writes, float(next(self._mono))))

    def join(self, client: str, group: str, version: int, member_id: str = "") -> None:
        request = JoinGroupRequest(
            group,
            member_id,
            "consumer",
            (JoinGroupProtocol("range", b"\x00"),),
            SESSION_MS,
            60_000,
            client_id=client,
            api_version=version,
        )
        rid = self.coordinator.join(request)
        self.handled[rid] = HandledRequest(len(self.handled), client, request, version)

    def refinement(self) -> CoordinatorRefinement:
        return CoordinatorRefinement(GROUP, 2, 60_000, lambda node, rid: self.handled.get(rid))


def kinds(steps: list[ServedStep]) -> list[str]:
    """The steps in a few words: ``request``, or the timer kind with its group."""
    out = []
    for s in steps:
        r = s.record
        groups = {getattr(e, "group_id", None) for e in r.events} - {None}
        out.append(r.kind.value if r.kind != StepKind.TIMER else f"{r.timer.value if r.timer else ''}@{min(groups)}")
    return out


def another_groups_timer_between() -> Served:
    """``other``'s member's session expires in the very millisecond c1's JoinGroup arms ``g``'s
    zero-delay InitialDelayedJoin: the session timer (armed earlier, same deadline) fires first."""
    served = Served()
    served.join("x1", OTHER, 3)  # Empty → PreparingRebalance → (delay 0) CompletingRebalance
    served.coordinator.advance_time(SESSION_MS)  # the session deadline is due, not yet fired
    served.join("c1", GROUP, 3)
    return served


def test_a_timer_of_another_group_between_the_arming_join_and_its_expiry_commutes() -> None:
    served = another_groups_timer_between()
    steps = served.steps
    join_at = next(i for i, s in enumerate(steps) if s.record.kind == StepKind.REQUEST and s.group is not None)
    expiry_at = next(i for i, s in enumerate(steps) if s.record.timer == TimerKind.INITIAL_JOIN and i > join_at)
    # the race itself: a step of another group was served between the JoinGroup and its expiry
    assert expiry_at > join_at + 1, kinds(steps)
    assert all(OTHER in k for k in kinds(steps[join_at + 1 : expiry_at])), kinds(steps)
    refinement = served.refinement()
    assert refinement.feed(steps, [], final=True) is None
    assert refinement.checked == 1  # g's JoinGroup folded with its expiry (other's steps are not g's)


def test_a_join_whose_expiry_is_still_to_come_waits_for_it() -> None:
    """Fed incrementally, as ``Run.check`` does while the run goes on: the JoinGroup is judged
    neither alone nor before its expiry was served, and the run as a whole passes."""
    served = another_groups_timer_between()
    steps = served.steps
    expiry_at = next(i for i, s in enumerate(steps) if s.record.timer == TimerKind.INITIAL_JOIN and s.group)
    refinement = served.refinement()
    for n in range(1, len(steps) + 1):
        assert refinement.feed(steps[:n], []) is None, (n, kinds(steps[:n]))
        if n <= expiry_at:
            assert refinement._done <= expiry_at - 2  # the JoinGroup (and all after it) still waits
    assert refinement.feed(steps, [], final=True) is None
    assert refinement._done == len(steps)


def pending_id_expiring_between() -> Served:
    """c2's pending member id (KIP-394) expires in the millisecond c1's JoinGroup arms ``g``'s
    zero-delay InitialDelayedJoin: the pending id's timer (armed earlier) fires first."""
    served = Served()
    served.join("c2", GROUP, 5)  # MEMBER_ID_REQUIRED: a pending id with a session-long timer
    served.coordinator.advance_time(SESSION_MS)
    served.join("c1", GROUP, 3)
    assert [k for k in kinds(served.steps) if k != "request"] == [
        f"{TimerKind.PENDING.value}@{GROUP}",
        f"{TimerKind.INITIAL_JOIN.value}@{GROUP}",
    ], kinds(served.steps)
    return served


def test_a_pending_id_of_the_same_group_expiring_between_the_arming_join_and_its_expiry_commutes() -> None:
    """The model's order (the join with its expiry, then the pending id's expiry) gives the same
    answers and the same group: the run refines the model."""
    served = pending_id_expiring_between()
    refinement = served.refinement()
    assert refinement.feed(served.steps, [], final=True) is None
    assert refinement.checked == 3  # c2's first JoinGroup, c1's folded with its expiry, c2's pending id expiring


def test_the_reordered_steps_are_still_judged() -> None:
    """A served expiry that did not complete the join phase (its group put back as before it) is
    caught although the steps were judged in the model's order, and the report says so."""
    served = pending_id_expiring_between()
    steps = served.steps
    steps[-1] = dataclasses.replace(steps[-1], group=steps[-2].group)
    violation = served.refinement().feed(steps, [], final=True)
    assert violation is not None and violation.check == COORDINATOR_CHECK
    assert violation.message.startswith("c1's JoinGroup"), violation.message
    assert "judged in the model's order" in violation.message


def test_another_step_of_the_same_group_between_the_arming_join_and_its_expiry_is_reported() -> None:
    """A step of the group between them that is not a pending id's expiry (here the pending id's
    timer step made to change the group otherwise) has no counterpart in the model."""
    served = pending_id_expiring_between()
    steps = served.steps
    between = steps[-2]
    assert between.group is not None
    steps[-2] = dataclasses.replace(between, group=dataclasses.replace(between.group, new_member_added=True))
    violation = served.refinement().feed(steps, [], final=True)
    assert violation is not None and violation.check == COORDINATOR_CHECK
    assert "c1's JoinGroup on node 0 at 10000 ms armed a zero-delay InitialDelayedJoin" in violation.message
    assert "the pending timer of c2-" in violation.message
    assert "a step of the same group, was served before its expiry (at 10000 ms)" in violation.message
