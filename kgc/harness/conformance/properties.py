"""The explorer's properties checked on what a broker was observed to do.

A reference comparison says *that* a broker's answer differs from Kafka's; some departures are
better named by the protocol property the broker's own answers break, whatever Kafka would have
answered (a broker can be wrong in ways a comparison misattributes, e.g. after a resynchronised
divergence). Each property reads only the broker's answers and DescribeGroups observations, with
generations in Kafka's numbering (``lockstep`` normalises them), one step at a time:

* ``generations_increase`` — successful JoinGroup answers never name a generation lower than one
  already handed out (``GroupMetadata.initNextGeneration`` only increments; properties/ §
  generation monotonicity);
* ``sync_rejected_in_preparing_rebalance`` — a SyncGroup sent while DescribeGroups showed the
  group in PreparingRebalance is never answered NONE (``GroupCoordinator.doSyncGroup``: "case
  PreparingRebalance => REBALANCE_IN_PROGRESS", Kafka 3.6.2; docs/kafka/group.md#states);
* ``exclusive_ownership`` — no partition is handed to two members of the group by SyncGroup
  answers of one generation (the leader's plan is disjoint and the coordinator only relays it; a
  static member replaced under its instance id keeps the generation and hands its place on;
  properties/ exclusive ownership);
* ``no_stale_assignment`` — a SyncGroup of generation g is never answered NONE once a JoinGroup
  answer of a later generation has been given (``doSyncGroup`` checks ``generationId !=
  group.generationId`` → ILLEGAL_GENERATION; properties/ no stale assignment);
* ``left_member_fenced`` — after a member's LeaveGroup was answered NONE, its Heartbeat is never
  answered NONE until it joins again (``removeMemberAndUpdateGroup``, then ``validateHeartbeat`` →
  UNKNOWN_MEMBER_ID).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.harness.scenario.ops import Heartbeat, Join, Leave, Step, Sync, as_step, sender

PROPERTY_NAMES = (
    "generations_increase",
    "sync_rejected_in_preparing_rebalance",
    "exclusive_ownership",
    "no_stale_assignment",
    "left_member_fenced",
)


@dataclass(frozen=True)
class Violation:
    """One property broken at one step: its name and a sentence with the values."""

    name: str
    description: str

    @property
    def kind(self) -> str:
        """The kind a report groups by: the property, never the member ids."""
        return f"property {self.name} broken by the broker's answers"


@dataclass
class ObservedProperties:
    """The properties over one sequence of broker observations (feed every step in order)."""

    highest_generation: int | None = None
    last_state: str | None = None
    owners: dict[int, dict[str, str]] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    last_members: list[str] | None = None

    def check(
        self, steps: Sequence[Step | Mapping[str, Any]], index: int, actual: Mapping[str, Any]
    ) -> list[Violation]:
        """Violations shown by step ``index``'s observation (its answer, the answers it
        released, and the group it left)."""
        out: list[Violation] = []
        step = as_step(steps[index])
        state_before = self.last_state
        answers: list[tuple[int, Mapping[str, Any]]] = []
        response = actual.get("response")
        if isinstance(response, dict):
            answers.append((index, response))
        for completion in [*actual.get("completions", []), *actual.get("later", [])]:
            answers.append((completion["step"], completion))
        for target, answer in answers:
            out += self._answer(steps, target, answer, state_before if target == index else None)
        group = actual.get("group")
        if isinstance(group, dict):
            self.last_state = group.get("state")
            members = group.get("members")
            self.last_members = list(members) if isinstance(members, list) else None
        if isinstance(step, Join):
            self.left.discard(step.member)
        return out

    def _answer(
        self,
        steps: Sequence[Step | Mapping[str, Any]],
        target: int,
        answer: Mapping[str, Any],
        state_before: str | None,
    ) -> list[Violation]:
        step = as_step(steps[target])
        member = str(sender(step))
        ok = answer.get("error") == "NONE"
        out: list[Violation] = []
        if isinstance(step, Join) and ok and isinstance(answer.get("generation"), int):
            generation = answer["generation"]
            if self.highest_generation is not None and generation < self.highest_generation:
                out.append(
                    Violation(
                        "generations_increase",
                        f"step {target}: JoinGroup answered generation {generation} after generation "
                        f"{self.highest_generation} was handed out",
                    )
                )
            self.highest_generation = max(generation, self.highest_generation or generation)
        if isinstance(step, Sync) and ok:
            generation = step.generation
            if state_before == "PreparingRebalance":
                out.append(
                    Violation(
                        "sync_rejected_in_preparing_rebalance",
                        f"step {target}: SyncGroup answered NONE while DescribeGroups showed PreparingRebalance",
                    )
                )
            if (
                isinstance(generation, int)
                and self.highest_generation is not None
                and generation < self.highest_generation
            ):
                out.append(
                    Violation(
                        "no_stale_assignment",
                        f"step {target}: SyncGroup of generation {generation} answered NONE after generation "
                        f"{self.highest_generation} was handed out",
                    )
                )
            if isinstance(generation, int):
                out += self._ownership(target, generation, member, str(answer.get("assignment", "")))
        if isinstance(step, Leave) and ok:
            errors = answer.get("member_errors") or []
            for i, entry in enumerate(step.members):
                own = entry.member_id is None  # the member's own id, not a made-up or another's
                removed = errors[i] == "NONE" if i < len(errors) else not errors
                if own and removed:
                    self.left.add(entry.member)
        if isinstance(step, Heartbeat) and ok and member in self.left:
            out.append(
                Violation(
                    "left_member_fenced",
                    f"step {target}: Heartbeat of {member} answered NONE after its LeaveGroup was answered NONE",
                )
            )
        return out

    def _ownership(self, target: int, generation: int, member: str, assignment: str) -> list[Violation]:
        owners = self.owners.setdefault(generation, {})
        out: list[Violation] = []
        for part in (p.strip() for p in assignment.replace(";", ",").split(",")):
            if not part:
                continue
            holder = owners.get(part)
            # A member that has left the group since (a static member replaced under its instance
            # id keeps the generation, KIP-345) no longer owns anything.
            gone = self.last_members is not None and holder not in self.last_members
            if holder is not None and holder != member and not gone:
                out.append(
                    Violation(
                        "exclusive_ownership",
                        f"step {target}: SyncGroup gives {part} to {member} in generation {generation}, "
                        f"already given to {holder}",
                    )
                )
            owners[part] = member
        return out
