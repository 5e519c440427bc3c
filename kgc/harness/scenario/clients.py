"""The consumers of a scenario: one ``kgc.client.consumer.GroupConsumer`` per consumer, driven by
the scenario's requests and the coordinator's answers, and judged by the model's own properties.

A scenario is written from the coordinator's side: its steps are requests. What the consumers make
of the answers — the partitions each owns, in which generation; the offset its auto-commit sends —
is the consumer's side, and two of the catalogue's mutants live there (``assign_without_revoke``,
``auto_commit_after_fetch``). The runner tells each consumer what it sends (``joining``,
``leaving``, ``auto_commit``: a ``commit`` step with ``"auto_commit": true`` sends the offset the
consumer's auto-commit task computes) and what it is answered (``answered``), and after every step
evaluates the properties the scenario lists in ``client_checks`` (docs/reference/scenario-format.md) on the
consumers' states, with the model's property functions (``kgc/properties/protocol.py``):

* ``exclusive_ownership``: the state invariant on a model ``State`` whose consumers are the
  scenario's consumers (state, generation, owned partitions);
* ``fenced_consumer_releases``: the transition invariant on each answer a consumer read in the step
  (a model ``receive`` of that answer, after which the consumer owns what the scenario's consumer owns);
* ``commit_fencing``: the transition invariant on each auto-commit the coordinator answered in the
  step, as the model's ``OffsetCommit`` exchange (``covers_unprocessed`` when the committed
  offset is past what the application processed); the coordinator-side clauses are the
  expectations' business, so the exchange is shown to the property in a Stable group of which the
  committer is a current member.

Consumer names: ``cN`` is consumer N; ``cN_k`` is the same consumer after it started over (a
crash or a LeaveGroup gives it a new member id: ``kgc.harness.scenario.from_trace.symbol``); a JoinGroup
under a new name starts a fresh consumer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgc.client.consumer import GroupConsumer
from kgc.harness.scenario import ops
from kgc.harness.scenario.compare import FieldResult
from kgc.interface.messages import HeartbeatResponse, JoinGroupResponse, OffsetCommitResponse, SyncGroupResponse
from kgc.model.actions import HANDLE, RECEIVE, Action, Answer
from kgc.model.state import Budget, Member, Request, Response, State, initial_consumer, initial_group
from kgc.model.types import ApiKey, Errors, GroupState
from kgc.properties.protocol import commit_fencing, exclusive_ownership, fenced_consumer_releases


def consumer_of(name: str) -> str:
    """``c2_1`` → ``c2`` (the consumer behind a member name)."""
    return name.split("_", 1)[0]


@dataclass
class Clients:
    """The scenario's consumers (``mutant``: a consumer mutant switched on in every one)."""

    mutant: str | None = None
    by_consumer: dict[str, tuple[str, GroupConsumer]] = field(default_factory=dict)
    commits: list[tuple[str, int, bool, Errors]] = field(default_factory=list)
    """This step's auto-commits answered: member name, generation, covers unprocessed, error."""
    pending: dict[str, bool] = field(default_factory=dict)
    """Auto-commits sent and not answered yet: member name → covers unprocessed."""
    answers: list[tuple[str, ApiKey, Errors]] = field(default_factory=list)
    """This step's answers the consumers read: member name, request, error."""

    def of(self, name: str) -> GroupConsumer:
        """The consumer behind member name ``name`` (a fresh one under a new name)."""
        key = consumer_of(name)
        current = self.by_consumer.get(key)
        if current is None or current[0] != name:
            current = self.by_consumer[key] = (name, GroupConsumer(self.mutant))
        return current[1]

    # ------------------------------------------------------------------ what the consumers send
    def joining(self, name: str) -> None:
        self.of(name).on_join_prepare()

    def leaving(self, name: str) -> None:
        self.of(name).on_leave()

    def auto_commit(self, step: ops.Commit, now_ms: int) -> int | None:
        """The offset a ``commit`` step with ``"auto_commit": true`` sends (None: the step's own)."""
        name = step.member
        if not step.auto_commit or name is None:
            return None
        consumer = self.of(name)
        offset = consumer.poll_with_auto_commit(now_ms)
        self.pending[name] = consumer.commit_covers_unprocessed
        return offset

    # ------------------------------------------------------------------ what they are answered
    def answered(self, step: ops.Step, name: str | None, body: Any) -> None:
        """Member ``name``'s request of ``step`` was answered ``body``."""
        if name is None:
            return
        consumer = self.of(name)
        match step, body:
            case ops.Join(), JoinGroupResponse():
                consumer.on_join_answer(body.error, body.generation_id)
                self.answers.append((name, ApiKey.JOIN_GROUP, body.error))
            case ops.Sync(), SyncGroupResponse():
                text = body.assignment.decode(errors="replace")
                consumer.on_sync_answer(body.error, tuple(p for p in text.split("+") if p))
                self.answers.append((name, ApiKey.SYNC_GROUP, body.error))
            case ops.Heartbeat(), HeartbeatResponse():
                consumer.on_answer(body.error)
                self.answers.append((name, ApiKey.HEARTBEAT, body.error))
            case ops.Commit(), OffsetCommitResponse():
                errors = [p.error for p in body.partitions if p.error != Errors.NONE]
                error = errors[0] if errors else Errors.NONE
                if name in self.pending:
                    self.commits.append((name, consumer.generation, self.pending.pop(name), error))
                consumer.on_answer(error, commit=True)
                self.answers.append((name, ApiKey.OFFSET_COMMIT, error))
            case _:  # a leave, a fetch, a control step, or an answer of another shape: nothing changes
                pass

    # ------------------------------------------------------------------ the properties
    def check(self, index: int, names: tuple[ops.ClientCheck, ...]) -> list[FieldResult]:
        """The ``client_checks`` after step ``index``: one failed field per property violated."""
        out: list[FieldResult] = []
        commits, self.commits = self.commits, []
        answers, self.answers = self.answers, []
        if "fenced_consumer_releases" in names:
            for name, api, error in answers:
                owned = self.of(name).owned
                if not fenced_consumer_releases.holds_on(*_read_exchange(len(owned), api, error)):
                    actual = f"violated: {name}, answered {error.name}, still owns {'+'.join(owned)}"
                    out.append(FieldResult(index, "client.fenced_consumer_releases", "holds", actual, False))
        if "exclusive_ownership" in names and not exclusive_ownership.holds_in(self.model_state()):
            owners = ", ".join(
                f"{name} {c.state.name.lower()} g{c.generation} {'+'.join(c.owned) or '-'}"
                for name, c in self.by_consumer.values()
            )
            out.append(FieldResult(index, "client.exclusive_ownership", "holds", f"violated: {owners}", False))
        if "commit_fencing" in names:
            for name, generation, covers, error in commits:
                if not commit_fencing.holds_on(*_commit_exchange(generation, covers, error)):
                    actual = f"violated: {name}'s auto-commit, answered {error.name}, covers unprocessed records"
                    out.append(FieldResult(index, "client.commit_fencing", "holds", actual, False))
        return out

    def model_state(self) -> State:
        """The consumers as the model's ``State`` (the group part is not read by the checks). The
        model numbers partitions (``Consumer.owned: tuple[int, ...]``, enforced at run time by the
        compiled model) and a scenario names them by text: each distinct name gets one number."""
        numbers: dict[str, int] = {}
        consumers = tuple(
            initial_consumer()._replace(
                state=c.state,
                generation=c.generation,
                owned=tuple(numbers.setdefault(p, len(numbers)) for p in c.owned),
            )
            for _name, c in self.by_consumer.values()
        )
        return State(initial_group(), consumers, Budget(*([0] * len(Budget._fields))))


def _commit_exchange(generation: int, covers: bool, error: Errors) -> tuple[State, Action, State]:
    """An auto-commit as the model's step: a current member of a Stable group commits."""
    mid = (0, 0)
    member = Member(mid, 0, False, False, False, False, (), generation, False)
    group = initial_group()._replace(state=GroupState.STABLE, generation=generation, leader=mid, members=(member,))
    state = State(group, (initial_consumer(),), Budget(*([0] * len(Budget._fields))))
    request = Request(ApiKey.OFFSET_COMMIT, mid, generation, covers_unprocessed=covers)
    answer = Answer(0, Response(ApiKey.OFFSET_COMMIT, error), delivered=True)
    return state, Action(HANDLE, 0, handled=(request,), answers=(answer,)), state


def _read_exchange(owned: int, api: ApiKey, error: Errors) -> tuple[State, Action, State]:
    """A consumer reading an answer, as the model's step: consumer 0 reads ``error`` to ``api`` and
    then owns ``owned`` partitions."""
    before = State(initial_group(), (initial_consumer(),), Budget(*([0] * len(Budget._fields))))
    after = before._replace(consumers=(initial_consumer()._replace(owned=tuple(range(owned))),))
    return before, Action(RECEIVE, 0, response=Response(api, error)), after
