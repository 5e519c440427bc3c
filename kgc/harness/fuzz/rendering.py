"""The fuzz machine's rendering: steps as labels, member ids as client names, and what the model
allows at a failing step as a scenario expectation."""

from __future__ import annotations

from typing import Any

from kgc.harness.fuzz.client import Client
from kgc.harness.fuzz.files import Files
from kgc.harness.fuzz.refinement import ImplStep
from kgc.interface.events import Event
from kgc.interface.messages import (
    JoinGroupResponse,
    Response,
)
from kgc.model.actions import (
    HANDLE,
    Action,
)
from kgc.model.names import consumer_name, request_text
from kgc.model.state import NO_MEMBER, Request
from kgc.model.types import ApiKey, Errors
from kgc.reference.steps import StepKind, StepRecord


class Rendering(Files):
    """Names steps and members, and renders the model's options in the scenario format's terms."""

    def _label(self, record: StepRecord, client: Client | None, request: Request | None) -> str:
        at = f"at {record.time_ms} ms"
        if record.kind == StepKind.REQUEST and client is not None and request is not None:
            return f"{client.name}'s {request_text(request)} {at}"
        if record.kind == StepKind.TIMER and record.timer is not None:
            who = f" of {self._name(record.member_id)}" if record.member_id else ""
            return f"the {record.timer.value} timer{who} expiring {at}"
        if record.kind == StepKind.STORE_CALLBACK:
            return (
                f"the leader's write completing with {record.store_error.name if record.store_error else 'NONE'} {at}"
            )
        return f"{record.kind.value} {at}"

    def _model_expectation(self, impl: ImplStep) -> dict[str, Any] | None:
        """What the model allows at the failing step, as a scenario expectation: the step's own
        answer (for a request), the members evicted, the states entered and the group after it
        (state, generation, leader, members, pending ids), each field a ``one_of`` where the
        model's steps differ in it. Model member ids are named by the client the implementation
        issued the corresponding id to."""
        if self.refinement is None:
            return None
        options = self.refinement.candidates(impl)
        if not options:
            return None
        rendered = [self._render_option(impl, action, after.group) for action, after in options]
        expect: dict[str, Any] = {}
        responses = [r["response"] for r in rendered if "response" in r]
        if responses and all(isinstance(r, dict) for r in responses):
            # An answer is compared field by field: a one_of per field, over the fields all give.
            common = set.intersection(*(set(r) for r in responses))
            expect["response"] = {k: _one_of([r[k] for r in responses]) for k in sorted(common)}
        elif responses and all(r == "PENDING" for r in responses):
            expect["response"] = "PENDING"
        completions = [r.get("completions") for r in rendered]
        if completions[0] is not None and all(c == completions[0] for c in completions):
            expect["completions"] = completions[0]
        for key in ("evicted", "state_path"):
            expect[key] = _one_of([r[key] for r in rendered])
        expect["group"] = {
            key: _one_of([r["group"][key] for r in rendered])
            for key in ("state", "generation", "leader", "members", "pending_members")
        }
        return expect

    def _render_option(self, impl: ImplStep, action: Action, group: Any) -> dict[str, Any]:
        """One step of the model in the scenario format's terms."""
        impl_ids = {mid: member_id for member_id, mid in self.ids.ids.items()}

        def name(mid: Any) -> str:
            member_id = impl_ids.get(mid)
            return self._name(member_id) if member_id is not None else self.clients[mid[0]].name

        def fields(r: Any) -> dict[str, Any]:
            answer: dict[str, Any] = {"error": r.error.name}
            if r.api == ApiKey.JOIN_GROUP and r.error == Errors.NONE:
                answer["generation"] = r.generation
                answer["leader"] = name(r.leader)
                answer["members"] = sorted(name(m) for m in r.members)
            elif r.api == ApiKey.SYNC_GROUP and r.error == Errors.NONE:
                answer["assignment"] = ",".join(str(p) for p in r.assignment)
            return answer

        out: dict[str, Any] = {}
        actor = impl.action.actor if impl.action.kind == HANDLE else None
        if actor is not None:
            # The actor has one request in flight, this one: an answer to it during the step is
            # the step's response (the model marks one completing the join phase as parked).
            own = [a for a in action.answers if a.consumer == actor]
            out["response"] = fields(own[0].response) if own else "PENDING"
        completions = []
        for a in action.answers:
            if a.consumer == actor:
                continue
            waiting = self.clients[a.consumer].in_flight
            if not a.delivered or waiting is None:
                break  # an answer to a crashed client's old connection: its step is not tracked
            completions.append({"step": waiting.step, **fields(a.response)})
        else:
            out["completions"] = sorted(completions, key=lambda c: c["step"])
        out["evicted"] = sorted(name(m) for m in action.evicted)
        out["state_path"] = [state.kafka_name for state in action.path]
        out["group"] = {
            "state": group.state.kafka_name,
            "generation": group.generation,
            "leader": name(group.leader) if group.leader != NO_MEMBER else None,
            "members": sorted(name(m.mid) for m in group.members),
            "pending_members": sorted(name(p.mid) for p in group.pending),
        }
        return out

    # ------------------------------------------------------------------ names
    def _name(self, member_id: str | None) -> str:
        """The symbolic name of a member id: the client id it was issued to (``c2``, ``c2_1``)."""
        if not member_id:
            return "-"
        owner = self.ids.owner(member_id)
        if owner is None:
            return member_id
        return consumer_name(owner[0]) if owner[1] == 0 else f"{consumer_name(owner[0])}_{owner[1]}"

    def _client_name(self, owner: tuple[int, int, int, str]) -> str:
        index, incarnation = owner[0], owner[1]
        return consumer_name(index) if incarnation == 0 else f"{consumer_name(index)}_{incarnation}"

    def _note_bindings(self, events: list[Event]) -> None:
        """A JoinGroup sent without a member id binds its client's symbolic name when answered
        NONE or MEMBER_ID_REQUIRED (docs/reference/scenario-format.md, *Member ids*): afterwards a request of that
        name without an id must say ``member_id: "UNKNOWN"``."""
        for event in events:
            if not isinstance(event, Response) or not isinstance(event.body, JoinGroupResponse):
                continue
            owner = self.owner.get(event.request_id)
            if owner is not None and owner[3] == "" and event.body.error in (Errors.NONE, Errors.MEMBER_ID_REQUIRED):
                self.bound.add(self._client_name(owner))


def _one_of(values: list[Any]) -> Any:
    """One value when they agree, else ``{"one_of": [distinct values]}``."""
    distinct: list[Any] = []
    for value in values:
        if value not in distinct:
            distinct.append(value)
    return distinct[0] if len(distinct) == 1 else {"one_of": distinct}
