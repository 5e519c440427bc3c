"""Symbolic clients and the member ids bound to them (docs/reference/scenario-format.md, *Member ids*).

Scenarios never spell member ids: the coordinator issues them, and a runner keeps a map from a
client's symbolic name (``c1``) to the id it was last given. Both the runner (real ids, strings)
and the model judge (the model's ``(consumer, serial)`` ids) use :class:`Bindings`, so the binding
rules live in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from kgc.harness.scenario.checks import PARTITION
from kgc.interface.messages import JoinGroupProtocol, TopicPartition

Id = TypeVar("Id")

#: What ``member_id: "UNKNOWN"`` and an unbound name send (``JoinGroupRequest.UNKNOWN_MEMBER_ID``).
UNKNOWN = "UNKNOWN"


class Bindings(Generic[Id]):
    """``symbolic name -> member id``, with the reverse map used to print ids symbolically.

    ``empty`` is the target's "no member id" value; ``literal`` turns the text of an
    ``ID:<text>`` field into an id the coordinator never issued.
    """

    def __init__(self, empty: Id, literal: Callable[[str], Id]) -> None:
        self._empty = empty
        self._literal = literal
        self._id_of: dict[str, Id] = {}
        self._name_of: dict[Id, str] = {}
        self._supposed: dict[Id, str] = {}

    def copy(self) -> Bindings[Id]:
        """An independent copy (the model judge keeps one per behaviour it follows)."""
        other: Bindings[Id] = Bindings(self._empty, self._literal)
        other._id_of = dict(self._id_of)
        other._name_of = dict(self._name_of)
        other._supposed = dict(self._supposed)
        return other

    def snapshot(self) -> tuple[tuple[str, Id], ...]:
        """The bindings and supposed names as a hashable value (to tell behaviours apart)."""
        bound = sorted(self._id_of.items(), key=lambda item: item[0])
        supposed = sorted(((name, mid) for mid, name in self._supposed.items()), key=lambda item: item[0])
        return tuple(bound) + (("--supposed--", self._empty),) + tuple(supposed)

    def bind(self, name: str, member_id: Id) -> None:
        """Bind ``name`` to ``member_id``; a later binding replaces an earlier one."""
        old = self._id_of.get(name)
        if old is not None and self._name_of.get(old) == name:
            del self._name_of[old]
        self._id_of[name] = member_id
        self._name_of[member_id] = name
        self._supposed.pop(member_id, None)

    def id_of(self, name: str) -> Id | None:
        """The id currently bound to ``name``, if any."""
        return self._id_of.get(name)

    def resolve(self, member: str | None, member_id: str | None) -> Id:
        """The id a step sends, from its ``member`` and ``member_id`` fields: absent → the id bound
        to ``member`` (empty if none); ``UNKNOWN`` → empty; ``ID:<text>`` → that literal;
        ``OF:<name>`` → the id bound to ``name`` (empty if none)."""
        if member_id is None:
            bound = self._id_of.get(member) if member is not None else None
            return self._empty if bound is None else bound
        if member_id == UNKNOWN:
            return self._empty
        if member_id.startswith("ID:"):
            return self._literal(member_id[3:])
        if member_id.startswith("OF:"):
            bound = self._id_of.get(member_id[3:])
            return self._empty if bound is None else bound
        raise ValueError(f"malformed member_id {member_id!r}")

    def suppose(self, member_id: Id, name: str) -> None:
        """Name an id issued to ``name``'s JoinGroup (sent with the empty id) that is still parked:
        its answer will bind it, and until then the group already lists it as a member. A supposed
        name is only used to print an id no binding holds."""
        if member_id not in self._name_of:
            self._supposed[member_id] = name

    def lookup(self, member_id: Id) -> str | None:
        """The symbolic name bound (or supposed, see :meth:`suppose`) for ``member_id``, if any."""
        name = self._name_of.get(member_id)
        return name if name is not None else self._supposed.get(member_id)

    def name(self, member_id: Id) -> str:
        """The symbolic name whose binding equals ``member_id`` (or the supposed one); ``?<id>`` for
        an id no name holds (one never issued, or one whose name was bound again since)."""
        name = self.lookup(member_id)
        return name if name is not None else f"?{member_id}"

    def names(self, member_ids: Iterable[Id]) -> list[str]:
        """Sorted symbolic names of ``member_ids``."""
        return sorted(self.name(m) for m in member_ids)


def parse_partition(text: str) -> TopicPartition:
    """``"orders-0"`` → ``TopicPartition("orders", 0)`` (the loader has checked the form)."""
    match = PARTITION.match(text)
    if match is None:
        raise ValueError(f"not a 'topic-partition': {text!r}")
    return TopicPartition(match.group(1), int(match.group(2)))


def parse_protocols(entries: Iterable[str]) -> tuple[JoinGroupProtocol, ...]:
    """A join's ``protocols``: ``"name:tag"`` is protocol ``name`` with metadata ``tag``; ``"name"``
    has empty metadata (docs/reference/scenario-format.md, *Steps*)."""
    out = []
    for entry in entries:
        name, _, tag = entry.partition(":")
        out.append(JoinGroupProtocol(name, tag.encode()))
    return tuple(out)
